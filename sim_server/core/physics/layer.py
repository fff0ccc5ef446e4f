"""Layers: static walls (Box2D static bodies of edge fixtures) on one or more collision layers.

A layer is built from pieces. A plain layer has one piece holding all its walls; a streamed layer
(``streaming: {tile_size, buffer}``) cuts its walls at the lines of a square grid, in the layer's
frame, into one piece per tile, so that each tile can be loaded (a Box2D body of its edges) and
unloaded on its own, like a level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from Box2D import b2

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.map_file import MapData
from sim_server.core.format.world_file import LayerSpec
from sim_server.core.geometry import Pose2D

#: Pieces of cut segments shorter than this (m) are dropped.
MIN_PIECE_LENGTH = 1e-9


@dataclass(frozen=True)
class BodyRef:
    """What a Box2D body's ``userData`` points back to: the entity and the body's name."""

    entity: object
    body_name: str


@dataclass
class LayerPiece:
    """Walls of a layer that load and unload together.

    Attributes:
        name: the layer's name for a whole layer, ``layer[i,j]`` for tile (i, j).
        edges: (N, 4) segments ``x1, y1, x2, y2`` in the layer frame (m).
        box: (x_min, y_min, x_max, y_max) of the piece's region in the world (m); for a tile its
            square, for a whole layer the extent of its walls.
        body: the Box2D body while loaded.
    """

    name: str
    edges: np.ndarray
    box: tuple[float, float, float, float]
    body: b2.body | None = field(default=None, repr=False)

    @property
    def loaded(self) -> bool:
        """Whether the piece is in the physics world."""
        return self.body is not None


def _split_at_grid(edges: np.ndarray, axis: int, size: float) -> np.ndarray:
    """Cut segments where they cross the grid lines ``coordinate[axis] = k * size``."""
    if len(edges) == 0:
        return edges
    start, end = edges[:, axis], edges[:, axis + 2]
    low, high = np.minimum(start, end), np.maximum(start, end)
    first = np.floor(low / size)
    last = np.ceil(high / size) - 1
    last = np.maximum(last, first)
    counts = (last - first + 1).astype(np.int64)
    if (counts == 1).all():
        return edges
    index = np.repeat(np.arange(len(edges)), counts)
    cell = np.repeat(first, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    rows = edges[index]
    span = rows[:, axis + 2] - rows[:, axis]
    safe = np.where(span == 0.0, 1.0, span)
    t0 = np.clip((cell * size - rows[:, axis]) / safe, 0.0, 1.0)
    t1 = np.clip(((cell + 1) * size - rows[:, axis]) / safe, 0.0, 1.0)
    t_low, t_high = np.minimum(t0, t1), np.maximum(t0, t1)
    t_low = np.where(span == 0.0, 0.0, t_low)
    t_high = np.where(span == 0.0, 1.0, t_high)
    direction = rows[:, 2:] - rows[:, :2]
    pieces = np.empty_like(rows)
    pieces[:, :2] = rows[:, :2] + t_low[:, None] * direction
    pieces[:, 2:] = rows[:, :2] + t_high[:, None] * direction
    lengths = np.hypot(pieces[:, 2] - pieces[:, 0], pieces[:, 3] - pieces[:, 1])
    return pieces[lengths > MIN_PIECE_LENGTH]


def placed_edges(edges: np.ndarray, origin: Pose2D) -> np.ndarray:
    """Layer-frame edges (N, 4: x1, y1, x2, y2 in m) placed at ``origin`` (world frame)."""
    cos_t, sin_t = math.cos(origin.theta), math.sin(origin.theta)
    result = np.empty_like(edges, dtype=float)
    for column in (0, 2):
        x, y = edges[:, column], edges[:, column + 1]
        result[:, column] = origin.x + cos_t * x - sin_t * y
        result[:, column + 1] = origin.y + sin_t * x + cos_t * y
    return result


def _world_box(origin: Pose2D, x_min: float, y_min: float, x_max: float, y_max: float) -> tuple[float, float, float, float]:
    """The axis-aligned box around a layer-frame rectangle placed at ``origin``."""
    corners = [origin.transform_point(x, y) for x in (x_min, x_max) for y in (y_min, y_max)]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return min(xs), min(ys), max(xs), max(ys)


def tile_pieces(name: str, edges: np.ndarray, origin: Pose2D, tile_size: float) -> list[LayerPiece]:
    """Cut ``edges`` (layer frame) into the tiles of a ``tile_size`` grid, one piece per tile.

    Raises:
        ConfigError: the cut would make more than MAX_TILE_PIECES wall pieces.
    """
    cells = np.floor(edges / tile_size)
    crossings = np.abs(cells[:, 2] - cells[:, 0]) + np.abs(cells[:, 3] - cells[:, 1]) + 1.0
    if crossings.sum() > limits.MAX_TILE_PIECES:
        raise ConfigError(
            f'key "streaming": tile_size {tile_size:g} m cuts the walls into more than '
            f"{limits.MAX_TILE_PIECES} pieces; choose larger tiles"
        )
    cut = _split_at_grid(_split_at_grid(edges, 0, tile_size), 1, tile_size)
    if len(cut) == 0:
        return []
    middle_x = 0.5 * (cut[:, 0] + cut[:, 2])
    middle_y = 0.5 * (cut[:, 1] + cut[:, 3])
    keys = np.stack([np.floor(middle_x / tile_size), np.floor(middle_y / tile_size)], axis=1).astype(np.int64)
    order = np.lexsort((keys[:, 1], keys[:, 0]))
    keys, cut = keys[order], cut[order]
    boundaries = np.flatnonzero(np.any(np.diff(keys, axis=0) != 0, axis=1)) + 1
    pieces = []
    for group_keys, group in zip(np.split(keys, boundaries), np.split(cut, boundaries)):
        i, j = (int(v) for v in group_keys[0])
        box = _world_box(origin, i * tile_size, j * tile_size, (i + 1) * tile_size, (j + 1) * tile_size)
        pieces.append(LayerPiece(f"{name}[{i},{j}]", np.ascontiguousarray(group), box))
    return pieces


class Layer:
    """A layer of the world, built in ``physics`` from its spec and map.

    Args:
        physics: the Box2D world.
        spec: the layer entry of the world file.
        map_data: its map, or None for a layer without static geometry.
        category_bits: the collision bits of all of the layer's names.
        load: create the bodies now (False: the caller loads pieces when needed).
    """

    def __init__(
        self, physics: b2.world, spec: LayerSpec, map_data: MapData | None, category_bits: int, load: bool = True
    ) -> None:
        self.spec = spec
        self.map_data = map_data
        self.category_bits = category_bits
        self._physics = physics
        self.origin = map_data.origin if map_data is not None else Pose2D()
        self.pieces: list[LayerPiece] = []
        if map_data is not None:
            edges = map_data.edges
            if spec.streaming is not None:
                self.pieces = tile_pieces(spec.name, edges, self.origin, spec.streaming.tile_size)
            else:
                if len(edges):
                    low = np.minimum(edges[:, :2], edges[:, 2:]).min(axis=0)
                    high = np.maximum(edges[:, :2], edges[:, 2:]).max(axis=0)
                    box = _world_box(self.origin, low[0], low[1], high[0], high[1])
                else:
                    box = (self.origin.x, self.origin.y, self.origin.x, self.origin.y)
                self.pieces = [LayerPiece(spec.name, edges, box)]
        if load:
            for piece in self.pieces:
                self.load(piece)

    @property
    def name(self) -> str:
        """The layer's main name."""
        return self.spec.name

    @property
    def names(self) -> tuple[str, ...]:
        """All names sharing this layer's bodies."""
        return self.spec.names

    @property
    def streamed(self) -> bool:
        """Whether the layer is cut into tiles that load on their own."""
        return self.spec.streaming is not None

    @property
    def body(self) -> b2.body | None:
        """The Box2D body of a plain layer (None while unloaded or for a streamed layer)."""
        return self.pieces[0].body if len(self.pieces) == 1 and not self.streamed else None

    @property
    def edges(self) -> np.ndarray:
        """(N, 4) edges ``x1, y1, x2, y2`` of the whole map in the layer frame (m)."""
        return self.map_data.edges if self.map_data is not None else np.empty((0, 4))

    def loaded_edges(self) -> np.ndarray:
        """(N, 4) edges of the loaded pieces, layer frame (m)."""
        parts = [piece.edges for piece in self.pieces if piece.loaded]
        return np.vstack(parts) if parts else np.empty((0, 4))

    def world_edges(self) -> np.ndarray:
        """(N, 4) edges of the loaded pieces, world frame (m): :meth:`loaded_edges` placed at the
        layer's origin."""
        return placed_edges(self.loaded_edges(), self.origin)

    def all_world_edges(self) -> np.ndarray:
        """(N, 4) every edge of the map, loaded or not (streamed pieces too), world frame (m)."""
        return placed_edges(self.edges, self.origin)

    def load(self, piece: LayerPiece) -> None:
        """Create the piece's static body of edge fixtures."""
        if piece.loaded:
            return
        origin = self.origin
        body = self._physics.CreateStaticBody(position=(origin.x, origin.y), angle=origin.theta)
        body.userData = BodyRef(self, self.spec.name)
        edge = b2.edgeShape()
        fixture = b2.fixtureDef(shape=edge)
        fixture.filter.categoryBits = self.category_bits
        fixture.filter.maskBits = self.category_bits
        for x1, y1, x2, y2 in piece.edges.tolist():
            edge.vertex1 = (x1, y1)
            edge.vertex2 = (x2, y2)
            fixture.shape = edge
            body.CreateFixture(fixture)
        piece.body = body

    def unload(self, piece: LayerPiece) -> None:
        """Remove the piece's body from the physics world."""
        if piece.body is not None:
            self._physics.DestroyBody(piece.body)
            piece.body = None

    def loaded_bodies(self) -> list[b2.body]:
        """The bodies of the loaded pieces."""
        return [piece.body for piece in self.pieces if piece.body is not None]

    def destroy(self) -> None:
        """Remove every piece's body from the physics world."""
        for piece in self.pieces:
            self.unload(piece)

