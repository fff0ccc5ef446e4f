"""Layers: static walls (a Box2D static body of edge fixtures) on one or more collision layers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from Box2D import b2

from sim_server.core.map_file import MapData
from sim_server.core.world_file import LayerSpec


@dataclass(frozen=True)
class BodyRef:
    """What a Box2D body's ``userData`` points back to: the entity and the body's name."""

    entity: object
    body_name: str


class Layer:
    """A layer of the world, built in ``physics`` from its spec and map.

    Args:
        physics: the Box2D world.
        spec: the layer entry of the world file.
        map_data: its map, or None for a layer without static geometry.
        category_bits: the collision bits of all of the layer's names.
    """

    def __init__(self, physics: b2.world, spec: LayerSpec, map_data: MapData | None, category_bits: int) -> None:
        self.spec = spec
        self.map_data = map_data
        self.category_bits = category_bits
        self.body: b2.body | None = None
        self._physics = physics
        if map_data is None:
            return
        origin = map_data.origin
        self.body = physics.CreateStaticBody(position=(origin.x, origin.y), angle=origin.theta)
        self.body.userData = BodyRef(self, spec.name)
        edge = b2.edgeShape()
        fixture = b2.fixtureDef(shape=edge)
        fixture.filter.categoryBits = category_bits
        fixture.filter.maskBits = category_bits
        for x1, y1, x2, y2 in map_data.edges.tolist():
            edge.vertex1 = (x1, y1)
            edge.vertex2 = (x2, y2)
            fixture.shape = edge
            self.body.CreateFixture(fixture)

    @property
    def name(self) -> str:
        """The layer's main name."""
        return self.spec.name

    @property
    def names(self) -> tuple[str, ...]:
        """All names sharing this layer's body."""
        return self.spec.names

    @property
    def edges(self) -> np.ndarray:
        """(N, 4) edges ``x1, y1, x2, y2`` in the layer frame (m); empty without a map."""
        return self.map_data.edges if self.map_data is not None else np.empty((0, 4))

    def destroy(self) -> None:
        """Remove the layer's body from the physics world."""
        if self.body is not None:
            self._physics.DestroyBody(self.body)
            self.body = None
