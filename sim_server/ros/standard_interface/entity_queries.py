"""The standard's entity queries: get_entities and get_entities_states, with their filters
(``simulation_interfaces/msg/EntityFilters``). The entities are the models, then the pedestrians
(``CATEGORY_HUMAN``, a disc each).

All given filters apply together, and the entities come in the order they entered the world:

- ``filter``: a POSIX extended regular expression that the whole name must match. It runs on
  RE2, whose time is linear in the name's length whatever the expression, so no request can
  stall the server; an invalid expression is refused with the parser's reason.
- ``categories``: the entity's category (see :mod:`.entity_info`) is one of them.
- ``tags``: the entity has any (``FILTER_MODE_ANY``) or all (``FILTER_MODE_ALL``) of them.
- ``bounds``: the entity's footprints overlap the bounds' section by the world's plane z = 0
  (:mod:`.regions`): a sphere (``TYPE_SPHERE``: centre, then radius in ``points[1].x``), a box
  (``TYPE_BOX``: two opposite corners) or a convex hull (``TYPE_CONVEX_HULL``: 3 or more
  points), in metres in the world frame. An entity without footprints is its bodies' origins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable

import re2
from rclpy.node import Node
from simulation_interfaces.msg import Bounds, EntityFilters, Result
from simulation_interfaces.srv import GetEntities, GetEntitiesStates

from sim_server.core.errors import RequestError
from sim_server.core.physics.model import Model
from sim_server.core.world import World
from sim_server.ros.standard_interface.entity_info import EntityInfos, Info, check_category
from sim_server.ros.standard_interface.regions import (
    ConvexPolygon, Disc, Region, box_section, hull_section, overlaps, sphere_section,
)
from sim_server.ros.standard_interface.results import Refused, answer
from sim_server.ros.standard_interface.tags import tag_filter
from sim_server.ros.world_user import WorldUser

#: Characters in a name filter.
MAX_FILTER_CHARS = 1000
#: Memory (bytes) RE2 may use for one compiled name filter.
MAX_FILTER_MEMORY = 8 << 20
#: Points of a TYPE_CONVEX_HULL filter.
MAX_HULL_POINTS = 256
#: The largest coordinate or radius (m) of filter bounds, so squares stay finite.
MAX_BOUNDS_MAGNITUDE = 1.0e9

_NAME_FILTER_OPTIONS = re2.Options()
_NAME_FILTER_OPTIONS.posix_syntax = True
_NAME_FILTER_OPTIONS.longest_match = True  # POSIX's leftmost-longest rule
_NAME_FILTER_OPTIONS.log_errors = False
_NAME_FILTER_OPTIONS.max_mem = MAX_FILTER_MEMORY


def name_matcher(expression: str) -> Callable[[str], bool] | None:
    """Whether a whole name matches the POSIX extended ``expression`` (None when it is empty:
    every name does); RequestError when it is too long or invalid."""
    if not expression:
        return None
    if len(expression) > MAX_FILTER_CHARS:
        raise RequestError(f"filters.filter has {len(expression)} characters, more than the limit of {MAX_FILTER_CHARS}")
    try:
        pattern = re2.compile(expression, _NAME_FILTER_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise RequestError(f"filters.filter is not a POSIX extended regular expression: {reason}") from None
    return lambda name: pattern.fullmatch(name) is not None


def _point(vector, what: str) -> tuple[float, float, float]:
    values = (vector.x, vector.y, vector.z)
    if not all(math.isfinite(v) and abs(v) <= MAX_BOUNDS_MAGNITUDE for v in values):
        raise RequestError(f"{what} {values} must be finite and within +-{MAX_BOUNDS_MAGNITUDE:g} m")
    return values


def bounds_region(bounds: Bounds) -> tuple[bool, Region | None]:
    """(whether the filter applies, the region it selects in the plane or None when the bounds
    miss the plane); Refused with FEATURE_UNSUPPORTED for an unknown type, RequestError for
    points that do not fit the type."""
    points = bounds.points
    kind = bounds.type
    if kind == Bounds.TYPE_EMPTY:
        return False, None
    if kind == Bounds.TYPE_SPHERE:
        if len(points) != 2:
            raise RequestError(f"filters.bounds: a sphere has 2 points (centre, then radius in x), got {len(points)}")
        center = _point(points[0], "filters.bounds.points[0]")
        radius = _point(points[1], "filters.bounds.points[1]")[0]
        if radius < 0.0:
            raise RequestError(f"filters.bounds: the sphere's radius (points[1].x) {radius:g} is negative")
        return True, sphere_section(center, radius)
    if kind == Bounds.TYPE_BOX:
        if len(points) != 2:
            raise RequestError(f"filters.bounds: a box has 2 points (opposite corners), got {len(points)}")
        first = _point(points[0], "filters.bounds.points[0]")
        second = _point(points[1], "filters.bounds.points[1]")
        low = tuple(min(a, b) for a, b in zip(first, second))
        high = tuple(max(a, b) for a, b in zip(first, second))
        return True, box_section(low, high)
    if kind == Bounds.TYPE_CONVEX_HULL:
        if not 3 <= len(points) <= MAX_HULL_POINTS:
            raise RequestError(
                f"filters.bounds: a convex hull has 3 to {MAX_HULL_POINTS} points, got {len(points)}"
            )
        corners = [_point(point, f"filters.bounds.points[{i}]") for i, point in enumerate(points)]
        return True, hull_section(corners)
    raise Refused(
        Result.RESULT_FEATURE_UNSUPPORTED,
        f"filters.bounds.type {kind} is not supported (TYPE_EMPTY, TYPE_BOX, TYPE_CONVEX_HULL, TYPE_SPHERE are)",
    )


def footprint_regions(model: Model) -> list[Region]:
    """Every footprint of ``model`` in the world frame; its bodies' origins when it has none."""
    regions: list[Region] = [
        Disc(*outline) if isinstance(outline, tuple) else ConvexPolygon(tuple(outline))
        for _, outline in model.world_footprints()
    ]
    if not regions:
        for body in model.bodies.values():
            x, y = body.physics_body.position
            regions.append(Disc(float(x), float(y), 0.0))
    return regions


@dataclass(frozen=True)
class EntityFilter:
    """A checked EntityFilters message, ready to test entities."""

    name: Callable[[str], bool] | None
    categories: frozenset[int]
    tags: Callable[[Iterable[str]], bool] | None
    bounded: bool
    region: Region | None

    @classmethod
    def of(cls, filters: EntityFilters) -> "EntityFilter":
        """Raises Refused or RequestError naming the field at fault."""
        categories = frozenset(entry.category for entry in filters.categories)
        for category in sorted(categories):
            check_category(category, "filters.categories has")
        tags = tag_filter(filters.tags, "filters.tags")
        bounded, region = bounds_region(filters.bounds)
        return cls(name_matcher(filters.filter), categories, tags, bounded, region)

    def select(self, entities: "list[Candidate]") -> list[str]:
        """The names of the entities that pass every filter, in their order."""
        chosen = []
        for entity in entities:
            if self.name is not None and not self.name(entity.name):
                continue
            if self.categories or self.tags is not None:
                info = entity.info()
                if self.categories and info.category not in self.categories:
                    continue
                if self.tags is not None and not self.tags(info.tags):
                    continue
            if self.bounded:
                region = self.region
                if region is None or not any(overlaps(region, part) for part in entity.regions()):
                    continue
            chosen.append(entity.name)
        return chosen


@dataclass(frozen=True)
class Candidate:
    """An entity as the filters see it: its name, its info and its footprints (both made only
    when a filter asks)."""

    name: str
    info: Callable[[], Info]
    regions: Callable[[], list[Region]]


def candidates(world: World, infos: EntityInfos) -> list[Candidate]:
    """Every entity of ``world``: the models in the order they came, then the pedestrians, crowd
    by crowd."""
    found = [
        Candidate(model.name, lambda model=model: infos.info(model), lambda model=model: footprint_regions(model))
        for model in world.all_models()
    ]
    for crowd in world.crowds:
        positions = crowd.positions()
        for row, name in enumerate(crowd.names()):
            x, y = positions[row]
            found.append(Candidate(
                name, lambda crowd=crowd, row=row: infos.person_info(crowd, row),
                lambda x=float(x), y=float(y), radius=crowd.spec.radius: [Disc(x, y, radius)],
            ))
    return found


class EntityQueries(WorldUser):
    """The services get_entities and get_entities_states on ``node``.

    Args:
        node: the server node.
        world: its world.
        infos: the entities' info (categories and tags).
        entity_state: the EntityState message of an entity, by name.
    """

    def __init__(self, node: Node, world: World, infos: EntityInfos, entity_state: Callable) -> None:
        self._node = node
        self._world = world
        self._infos = infos
        self._entity_state = entity_state
        self._services = [
            node.create_service(GetEntities, "~/get_entities", self._get_entities),
            node.create_service(GetEntitiesStates, "~/get_entities_states", self._get_states),
        ]

    def matching(self, filters: EntityFilters) -> list[str]:
        """The names of the world's entities (models and pedestrians) that pass ``filters``."""
        return EntityFilter.of(filters).select(candidates(self._world, self._infos))

    def _get_entities(self, request: GetEntities.Request, response: GetEntities.Response) -> GetEntities.Response:
        def get() -> None:
            response.entities = self.matching(request.filters)

        answer(response.result, get, "get_entities")
        return response

    def _get_states(self, request: GetEntitiesStates.Request, response: GetEntitiesStates.Response):
        def get() -> None:
            names = self.matching(request.filters)
            response.states = [self._entity_state(name) for name in names]
            response.entities = names

        answer(response.result, get, "get_entities_states")
        return response
