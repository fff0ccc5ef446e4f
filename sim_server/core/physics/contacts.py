"""Touching fixtures, and how crowded a place is.

:func:`touching` lists the contacts of a Box2D world with the entities (model or layer names)
and bodies they join; :func:`overlapping_footprints` counts the other models' footprints a
model's footprints overlap (bounding boxes, Box2D's broad phase), which bounds where a model may
be spawned or moved (:data:`~sim_server.core.limits.MAX_OVERLAPPING_FOOTPRINTS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from Box2D import b2

from sim_server.core.physics.model import Model


@dataclass(frozen=True)
class Contact:
    """Two touching fixtures: the entities (model or layer names) and bodies, and the contact
    points (world frame, m)."""

    entity_a: str
    body_a: str
    entity_b: str
    body_b: str
    points: tuple[tuple[float, float], ...]


def touching(physics: b2.world) -> list[Contact]:
    """Every pair of fixtures of ``physics`` touching now, with their world contact points (m)."""
    result = []
    for contact in physics.contacts:
        if not contact.touching:
            continue
        first, second = contact.fixtureA.body.userData, contact.fixtureB.body.userData
        manifold = contact.worldManifold
        count = contact.manifold.pointCount
        result.append(
            Contact(
                getattr(first.entity, "name", ""), first.body_name,
                getattr(second.entity, "name", ""), second.body_name,
                tuple((float(p[0]), float(p[1])) for p in manifold.points[:count]),
            )
        )
    return result


def overlapping_footprints(physics: b2.world, model: Model) -> int:
    """How many footprints of models other than ``model`` the bounding boxes of its footprints,
    where it is now, overlap, in pairs that make contacts (not static with static); layers do not
    count."""
    counter = _OverlapCounter(model)
    for body in model.bodies.values():
        physics_body = body.physics_body
        counter.static = physics_body.type == b2.staticBody
        for fixture in physics_body.fixtures:
            physics.QueryAABB(counter, fixture.GetAABB(0))
    return counter.count


class _OverlapCounter(b2.queryCallback):
    """Counts the footprints of models other than ``model`` whose bounding boxes a query meets
    (Box2D's broad phase), skipping static ones while ``static`` (a static body's footprint is
    being asked about)."""

    def __init__(self, model: Model) -> None:
        super().__init__()
        self.model = model
        self.static = False
        self.count = 0

    def ReportFixture(self, fixture: b2.fixture) -> bool:  # noqa: N802 (Box2D's name)
        entity = getattr(fixture.body.userData, "entity", None)
        if isinstance(entity, Model) and entity is not self.model:
            if not (self.static and fixture.body.type == b2.staticBody):
                self.count += 1
        return True
