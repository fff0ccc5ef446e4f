"""Where a crowd's people may be: the world file's places checked against the walls, free places
found for people to start or arrive at, and the candidate goals of regions.

Everything here is in the crowd's own frame, the world file's (with replicas, each copy of the
world is this frame moved by the copy's offset). The walls come in as a
:class:`~sim_server.core.crowd.navigation.WalkingGrid` (None: no walls).
"""

from __future__ import annotations

import math
import zlib
from typing import Sequence

import numpy as np

from sim_server.core.crowd.navigation import WalkingGrid
from sim_server.core.errors import ConfigError
from sim_server.core.format.crowd_file import CrowdSpec, Place, Route

#: Random tries to find a free place in a region.
PLACE_TRIES = 50
#: Gap between people placed together at one point, in radii.
PLACEMENT_SPACING = 2.4
#: The region label of every place of a crowd without walls (all connect) and of one in a wall.
OPEN, IN_WALL = -2, -1


class Places:
    """The places of ``spec`` among the walls of ``grid`` (see the module's docstring).

    Attributes:
        starts: per entry of the spec (agents, then spawners), the walking grid's regions where
            its people may start: those from which every place of its route can be reached.
    """

    def __init__(self, spec: CrowdSpec, grid: WalkingGrid | None) -> None:
        self.spec = spec
        self.grid = grid
        self._pools: dict[tuple[str, int], np.ndarray] = {}
        self.starts: list[set[int]] = []

    def label(self, x: float, y: float) -> int:
        """The walking grid's connected region of (x, y) (m): :data:`IN_WALL` where a body would
        touch a wall, :data:`OPEN` for every place without walls; beyond the grid, the region of
        the open space around the walls."""
        return OPEN if self.grid is None else self.grid.region_at(x, y)

    def _beyond(self, label: int) -> str:
        """Words on where a place of region ``label`` lies, for messages."""
        if self.grid is not None and label == self.grid.outside:
            return "it lies outside the walls"
        return "walls close it off"

    def _label_or_error(self, x: float, y: float, where: str) -> int:
        label = self.label(x, y)
        if label == IN_WALL:
            raise ConfigError(
                f"{where} ({x:g}, {y:g}) lies within {self.spec.radius:g} m (the pedestrians' radius) of a wall: "
                "a pedestrian cannot stand there"
            )
        return label

    def labels_of_region(self, region: str) -> set[int]:
        """The walking grid's regions with free cells in a region's box."""
        grid = self.grid
        if grid is None:
            return {OPEN}
        x0, y0, x1, y1 = self.spec.regions[region]
        ix0, iy0 = int(math.floor((x0 - grid.x0) / grid.cell)), int(math.floor((y0 - grid.y0) / grid.cell))
        ix1, iy1 = int(math.floor((x1 - grid.x0) / grid.cell)), int(math.floor((y1 - grid.y0) / grid.cell))
        labels = set()
        if ix0 < 0 or iy0 < 0 or ix1 >= grid.nx or iy1 >= grid.ny:
            labels.add(grid.outside)  # part of the region is open space beyond the walls
        window = grid.labels[max(iy0, 0): max(min(iy1 + 1, grid.ny), 0), max(ix0, 0): max(min(ix1 + 1, grid.nx), 0)]
        labels.update(int(label) for label in np.unique(window) if label >= 0)
        return labels

    def check(self) -> None:
        """Every start, waypoint, region and spawner place: a body fits there and every place of
        the route can be reached from where its people start (ConfigError naming the entry
        otherwise); fills :attr:`starts`."""
        spec = self.spec
        for region in spec.regions:
            if not self.labels_of_region(region):
                raise ConfigError(
                    f"{spec.location}: region \"{region}\" has no place where a pedestrian of radius "
                    f"{spec.radius:g} m fits: walls fill it"
                )
        entries = [(entry.location, entry.start, entry.route, "start") for entry in spec.agents]
        entries += [(entry.location, entry.at, entry.route, "at") for entry in spec.spawners]
        self.starts = []
        for location, place, route, key in entries:
            try:
                self.starts.append(self._route_starts(place, route, key))
            except ConfigError as exc:
                raise ConfigError(f"{location}: {exc}") from None

    def _route_starts(self, place: Place, route: Route, key: str) -> set[int]:
        """The regions of ``place`` from which every place of ``route`` can be reached
        (ConfigError, without the entry's location, where there are none)."""
        if place.region is None and place.point is not None:
            starts = {self._label_or_error(*place.point, where=f'key "{key}"')}
            whence = "the start" if key == "start" else "the spawner's place"
        else:
            starts = self.labels_of_region(place.region)
            whence = f'any place of region "{place.region}"'
        reachable = set(starts)
        for index, waypoint in enumerate(route.waypoints):
            label = self._label_or_error(*waypoint, where=f'key "waypoints": waypoint {index}')
            if label not in reachable:
                source = whence if index == 0 else f"waypoint {index - 1}"
                raise ConfigError(
                    f'key "waypoints": waypoint {index} {list(waypoint)} cannot be reached from {source}: '
                    f"{self._beyond(label)} (no way wide enough for a pedestrian of radius {self.spec.radius:g} m)"
                )
            reachable = {label}
        if route.goals is not None:
            goal_labels = self.labels_of_region(route.goals)
            if not goal_labels & reachable:
                words = self._beyond(next(iter(goal_labels))) if len(goal_labels) == 1 else "walls close it off"
                raise ConfigError(
                    f'key "goals": region "{route.goals}" cannot be reached from {whence}: {words} '
                    f"(no way wide enough for a pedestrian of radius {self.spec.radius:g} m)"
                )
            reachable &= goal_labels
        return starts & reachable

    def route_starts(self, route: Route) -> set[int] | None:
        """The regions from which every place of ``route`` (a run-time one, say) can be reached;
        None for a route that goes nowhere (any place will do)."""
        if route.idle:
            return None
        labels: set[int] | None = None
        for point in route.waypoints:
            label = self.label(*point)
            labels = {label} - {IN_WALL} if labels is None else labels & {label}
        if route.goals is not None:
            goal_labels = self.labels_of_region(route.goals)
            labels = goal_labels if labels is None else labels & goal_labels
        return labels

    def occupancy(self, taken: Sequence[tuple[float, float]]) -> "Occupancy":
        """Who stands where (m, the crowd's frame), for :meth:`find`."""
        return Occupancy(2.0 * self.spec.radius, taken)

    def find(self, place: Place, count: int, taken: "Sequence[tuple[float, float]] | Occupancy",
             rng: np.random.Generator, within: set[int] | None = None) -> list[tuple[float, float]] | None:
        """``count`` free places at ``place`` (clear of walls and of the people at ``taken``, in
        the regions ``within`` when given: those from which the route goes on): around a point
        (rings at :data:`PLACEMENT_SPACING` radii), or drawn in a region; None where they do not
        fit. A place of both (pedsim's clusters) is drawn in the region, or where the region is
        too full, in rings around the point. An :class:`Occupancy` as ``taken`` gets the places chosen (placing many entries,
        make one and pass it to each)."""
        radius = self.spec.radius
        chosen: list[tuple[float, float]] = []
        occupied = taken if isinstance(taken, Occupancy) else self.occupancy(taken)
        keep = occupied.add

        def free(x: float, y: float) -> bool:
            label = self.label(x, y)
            if label == IN_WALL or (within is not None and label not in within):
                return False
            return occupied.free(x, y)

        if place.region is not None:
            x0, y0, x1, y1 = self.spec.regions[place.region]
            for _ in range(count):
                for _ in range(PLACE_TRIES):
                    x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
                    if free(x, y):
                        chosen.append((x, y))
                        keep(x, y)
                        break
                else:
                    for x, y in chosen:
                        occupied.remove(x, y)
                    chosen = []
                    break
            if chosen or place.point is None:
                return chosen if len(chosen) == count else None
        if place.point is not None:
            cx, cy = place.point
            candidates = [(cx, cy)]
            spacing = PLACEMENT_SPACING * radius
            ring = 1
            while len(candidates) < 8 * count + 8 and ring < 50:
                around = 6 * ring
                candidates += [
                    (cx + ring * spacing * math.cos(2 * math.pi * k / around), cy + ring * spacing * math.sin(2 * math.pi * k / around))
                    for k in range(around)
                ]
                ring += 1
            for x, y in candidates:
                if len(chosen) == count:
                    break
                if free(x, y):
                    chosen.append((x, y))
                    keep(x, y)
        return chosen if len(chosen) == count else None

    def pool(self, region: str, label: int) -> np.ndarray:
        """The candidate goals (m) of a region reachable within the grid's region ``label``:
        :attr:`CrowdSpec.goals_per_region` of them among its free cells, drawn once (the same
        for every copy and seed: their distance fields are shared)."""
        key = (region, label)
        pool = self._pools.get(key)
        if pool is None:
            x0, y0, x1, y1 = self.spec.regions[region]
            rng = np.random.default_rng([zlib.crc32(region.encode()), label + 2])
            points = []
            for _ in range(self.spec.goals_per_region * PLACE_TRIES):
                if len(points) == self.spec.goals_per_region:
                    break
                x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
                found = self.label(x, y)
                if found == label:
                    points.append((x, y))
            pool = self._pools[key] = np.array(points, dtype=np.float64).reshape(-1, 2)
        return pool


class Occupancy:
    """Bodies' centres by cells of a body's width: whether a body fits at a place among them.

    Args:
        width: a body's diameter (m).
        taken: the centres (m) of the bodies standing.
    """

    def __init__(self, width: float, taken: Sequence[tuple[float, float]]) -> None:
        self.width = width
        self._limit = width * width
        self._cells: dict[tuple[int, int], list[tuple[float, float]]] = {}
        for x, y in np.asarray(taken, dtype=np.float64).reshape(-1, 2).tolist():
            self.add(x, y)

    def add(self, x: float, y: float) -> None:
        """A body stands at (x, y) (m)."""
        self._cells.setdefault((int(math.floor(x / self.width)), int(math.floor(y / self.width))), []).append((x, y))

    def remove(self, x: float, y: float) -> None:
        """The body added at (x, y) (m) is gone."""
        self._cells[(int(math.floor(x / self.width)), int(math.floor(y / self.width)))].remove((x, y))

    def free(self, x: float, y: float) -> bool:
        """Whether a body at (x, y) (m) overlaps none (a test of 3 x 3 cells)."""
        cx, cy = int(math.floor(x / self.width)), int(math.floor(y / self.width))
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for ox, oy in self._cells.get((cx + dx, cy + dy), ()):
                    if (x - ox) ** 2 + (y - oy) ** 2 < self._limit:
                        return False
        return True
