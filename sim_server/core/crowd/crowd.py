"""A crowd in the physics world: its people as bodies, walking by a crowd model.

Each pedestrian is a kinematic Box2D circle in the crowd's layers: lasers, bumpers, cameras and
pictures see it like any body, a robot (dynamic) cannot pass through it, and the crowd model alone
moves it. On every crowd update (``update_rate``; physics steps in between keep the velocities)
the crowd reads its people's positions and the robots' from Box2D, decides goals (arrivals,
waiting, the next waypoint or a random goal), finds each person's walking direction on the walking
grid, runs the model (:mod:`~sim_server.core.crowd.social_force` or
:mod:`~sim_server.core.crowd.orca`) for all people at once and writes the new velocities into the
bodies. Per person there is no Python on a step; Python runs per event (an arrival, a spawn).

The crowd names a small protocol of the world, :class:`CrowdHost`, never its class.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ContextManager, Iterable, Mapping, Protocol, Sequence

import numpy as np
from Box2D import b2

from sim_server.core import limits
from sim_server.core.crowd.navigation import WalkingGrid, walking_directions
from sim_server.core.crowd.neighbors import build_grid
from sim_server.core.crowd.orca import orca_step
from sim_server.core.crowd.people import (
    IDLE, REGION_GOALS, STANDING_STATE, WAITING_STATE, WALKING_STATE, WAYPOINTS, CrowdState, Pedestrian, People,
    arrivals, waits_over,
)
from sim_server.core.crowd.social_force import neighbour_grids, social_force_step
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.errors import ConfigError, EntityError, RequestError
from sim_server.core.format.crowd_file import CrowdSpec, OrcaParameters, Place, Route, SocialForceParameters
from sim_server.core.physics.body_memory import BodyBatch
from sim_server.core.physics.layer import BodyRef

if TYPE_CHECKING:
    from sim_server.core.physics.layer import Layer
    from sim_server.core.physics.model import Model

#: The body name of every pedestrian's one body (contacts report it).
BODY_NAME = "body"
#: Random tries to find a free place in a region.
PLACE_TRIES = 50
#: Gap between people placed together at one point, in radii.
PLACEMENT_SPACING = 2.4
#: Density of a pedestrian's body (kg/m^2); kinematic bodies ignore it, contacts report it.
BODY_DENSITY = 1.0
#: Routes of people added at run time kept before unused ones are dropped.
MAX_RUNTIME_ROUTES = 1000


class CrowdHost(Protocol):
    """What a crowd needs of the world it walks in."""

    @property
    def physics(self) -> b2.world:
        """The Box2D world."""

    @property
    def models(self) -> Mapping[str, "Model"]:
        """The models (the robots among them push people's paths)."""

    @property
    def static_geometry_version(self) -> int:
        """Grows whenever loaded walls change (levels)."""

    def removing_bodies(self, bodies: Iterable[b2.body]) -> ContextManager[None]:
        """A block inside which ``bodies`` may be destroyed."""


@dataclass
class _Spawner:
    """A spawner's state: next arrival (sim s), people out and made."""

    next_arrival: float = 0.0
    out: set = field(default_factory=set)
    made: int = 0


class Crowd:
    """The people of one crowd spec (one copy of it with replicas).

    Args:
        spec: the crowd of the world file.
        host: the world.
        layers: the layers whose walls the crowd avoids (with their collision bits).
        step_size: the physics step (s).
        name: the crowd's name (the spec's, or a replica's copy of it).
        offset: where this copy's frame lies (m, translation) in the world.
        seed: seeds its random choices (None: nondeterministic).

    Raises:
        ConfigError: a start, waypoint, region or spawner place inside a wall or out of reach.
    """

    def __init__(
        self, spec: CrowdSpec, host: CrowdHost, layers: Sequence["Layer"], step_size: float, name: str = "",
        offset: tuple[float, float] = (0.0, 0.0), seed: int | None = None,
    ) -> None:
        self.spec = spec
        self.host = host
        self.name = name or spec.name
        self.offset = offset
        self.layers = list(layers)
        self.bits = 0
        for layer in self.layers:
            self.bits |= layer.category_bits
        self.bits = self.bits or 0xFFFF
        self.step_size = step_size
        rate = spec.update_rate
        self.every = max(1, int(round(1.0 / (rate * step_size)))) if rate > 0.0 else 1
        self.dt = self.every * step_size
        self._seed = seed
        self.people = People()
        self.parameters = spec.parameters.array()
        self.grid = self._walking_grid()
        self._walls: WallIndex | None = None
        self._walls_version = -1
        self._stamp = 1
        self._batch: BodyBatch | None = None
        self._robots: tuple[BodyBatch, np.ndarray] | None = None
        self._next_number = 0
        self._fixture = b2.fixtureDef(shape=b2.circleShape(radius=spec.radius), density=BODY_DENSITY)
        self._fixture.filter.categoryBits = self.bits
        self._fixture.filter.maskBits = self.bits
        self._routes: list[Route] = [entry.route for entry in spec.agents] + [s.route for s in spec.spawners]
        self._pools: dict[tuple[str, int], np.ndarray] = {}
        self._check_places()
        self._start()

    # ------------------------------------------------------------------ set-up
    def _walking_grid(self) -> WalkingGrid | None:
        """The grid of every wall of the crowd's layers (streamed pieces too), or None without walls."""
        segments = [_placed(layer.edges, layer.origin) for layer in self.layers if len(layer.edges)]
        if not segments:
            return None
        return WalkingGrid(np.vstack(segments), self.spec.radius, self.spec.navigation_cell)

    def _point(self, point: tuple[float, float]) -> tuple[float, float]:
        return point[0] + self.offset[0], point[1] + self.offset[1]

    def _box(self, region: str) -> tuple[float, float, float, float]:
        x0, y0, x1, y1 = self.spec.regions[region]
        return x0 + self.offset[0], y0 + self.offset[1], x1 + self.offset[0], y1 + self.offset[1]

    def _region_label(self, x: float, y: float, where: str) -> int:
        """The walking grid's region of a point, or ConfigError where a body cannot stand there."""
        if self.grid is None:
            return -2
        label = self.grid.region_at(x, y)
        if label == -1:
            raise ConfigError(
                f"{where} ({x - self.offset[0]:g}, {y - self.offset[1]:g}) lies within {self.spec.radius:g} m (the "
                f"pedestrians' radius) of a wall: a pedestrian cannot stand there"
            )
        return label

    def _labels_of_region(self, region: str) -> set[int]:
        """The walking grid's regions that have free cells in a region box."""
        if self.grid is None:
            return {-2}
        grid = self.grid
        x0, y0, x1, y1 = self._box(region)
        ix0, iy0 = int(math.floor((x0 - grid.x0) / grid.cell)), int(math.floor((y0 - grid.y0) / grid.cell))
        ix1, iy1 = int(math.floor((x1 - grid.x0) / grid.cell)), int(math.floor((y1 - grid.y0) / grid.cell))
        labels = set()
        if ix1 < 0 or iy1 < 0 or ix0 >= grid.nx or iy0 >= grid.ny or ix0 < 0 or iy0 < 0 or ix1 >= grid.nx or iy1 >= grid.ny:
            labels.add(-2)  # part of the region is open space beyond the walls
        window = grid.labels[max(iy0, 0): max(min(iy1 + 1, grid.ny), 0), max(ix0, 0): max(min(ix1 + 1, grid.nx), 0)]
        labels.update(int(label) for label in np.unique(window) if label >= 0)
        return labels

    def _check_places(self) -> None:
        """Every start, waypoint, region and spawner place: a body fits there and every goal is
        reachable from where its people start (ConfigError naming the entry otherwise)."""
        spec = self.spec
        for region in spec.regions:
            if not self._labels_of_region(region):
                raise ConfigError(
                    f"{spec.location}: region \"{region}\" has no place where a pedestrian of radius "
                    f"{spec.radius:g} m fits: walls fill it"
                )
        entries = [(entry.location, entry.start, entry.route, "start") for entry in spec.agents]
        entries += [(entry.location, entry.at, entry.route, "at") for entry in spec.spawners]
        for location, place, route, key in entries:
            try:
                if place.point is not None:
                    starts = {self._region_label(*self._point(place.point), where=f'key "{key}"')}
                else:
                    starts = self._labels_of_region(place.region)
                for index, waypoint in enumerate(route.waypoints):
                    label = self._region_label(*self._point(waypoint), where=f'key "waypoints": waypoint {index}')
                    if label != -2 and -2 not in starts and label not in starts:
                        raise ConfigError(
                            f'key "waypoints": waypoint {index} {list(waypoint)} cannot be reached from the start: '
                            "walls close it off (no way wide enough for a pedestrian of radius "
                            f"{spec.radius:g} m)"
                        )
                if route.goals is not None:
                    goal_labels = self._labels_of_region(route.goals)
                    if -2 not in starts and -2 not in goal_labels and not (goal_labels & starts):
                        raise ConfigError(
                            f'key "goals": region "{route.goals}" cannot be reached from the start: walls close it off'
                        )
            except ConfigError as exc:
                raise ConfigError(f"{location}: {exc}") from None

    def _start(self) -> None:
        """Place the world file's people and set the spawners' clocks."""
        self.rng = np.random.default_rng(self._seed)
        self._next_number = 0
        self._spawners = [_Spawner() for _ in self.spec.spawners]
        for spawner, state in zip(self.spec.spawners, self._spawners):
            state.next_arrival = float(self.rng.exponential(1.0 / spawner.rate))
        group = 0
        for index, entry in enumerate(self.spec.agents):
            placed = self._places(entry.start, entry.count)
            if placed is None:
                raise ConfigError(
                    f"{entry.location}: key \"start\": no room for {entry.count} pedestrians of radius "
                    f"{self.spec.radius:g} m there without overlapping walls or each other"
                )
            group_id = -1
            if entry.group and entry.count > 1:
                group_id, group = group, group + 1
            rows = [self._add_person(index, (x, y), entry.speed, group_id, spawned=False, now=0.0) for x, y in placed]
            if group_id >= 0:
                self._share_goal(rows)
        self._next_group = group

    # ------------------------------------------------------------------ people
    def _places(self, place: Place, count: int) -> list[tuple[float, float]] | None:
        """``count`` free places at ``place``: around a point (rings at PLACEMENT_SPACING radii),
        or drawn in a region; None where they do not fit."""
        radius = self.spec.radius
        taken = list(map(tuple, self.positions()))
        chosen: list[tuple[float, float]] = []

        def free(x: float, y: float) -> bool:
            if self.grid is not None and self.grid.region_at(x, y) == -1:
                return False
            limit = (2.0 * radius) ** 2
            return all((x - ox) ** 2 + (y - oy) ** 2 >= limit for ox, oy in taken + chosen)

        if place.point is not None:
            cx, cy = self._point(place.point)
            candidates = [(cx, cy)]
            ring = 1
            while len(candidates) < 8 * count + 8 and ring < 50:
                around = max(6 * ring, 1)
                spacing = PLACEMENT_SPACING * radius
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
        else:
            x0, y0, x1, y1 = self._box(place.region)
            for _ in range(count):
                for _ in range(PLACE_TRIES):
                    x, y = float(self.rng.uniform(x0, x1)), float(self.rng.uniform(y0, y1))
                    if free(x, y):
                        chosen.append((x, y))
                        break
                else:
                    return None
        return chosen if len(chosen) == count else None

    def _share_goal(self, rows: list[int]) -> None:
        """The group of ``rows`` walks to the first one's goal."""
        people = self.people
        for row in rows[1:]:
            people.goal[row] = people.goal[rows[0]]
            people.field[row] = people.field[rows[0]]
            people.waypoint[row] = people.waypoint[rows[0]]
            people.mode[row] = people.mode[rows[0]]

    def _add_person(self, route_index: int, position: tuple[float, float], speed: tuple[float, float], group: int,
                    spawned: bool, now: float, name: str = "", added: bool = False) -> int:
        """Add a person (named ``name``, else ``<crowd>_<number>``); returns its row."""
        number = self._next_number
        self._next_number += 1
        while not name and f"{self.name}_{number}" in self.host.models:  # a model took the name
            number = self._next_number
            self._next_number += 1
        name = name or f"{self.name}_{number}"
        body = self.host.physics.CreateKinematicBody(position=position, fixedRotation=True)
        body.CreateFixture(self._fixture)
        body.userData = BodyRef(Pedestrian(name, self.name), BODY_NAME)
        route = self._routes[route_index]
        mode = IDLE if route.idle else (WAYPOINTS if route.waypoints else REGION_GOALS)
        row = self.people.add(body, number, route_index, float(self.rng.uniform(*speed)), group, position, mode,
                              spawned, 0.0, added)
        self._batch = None
        if mode != IDLE:
            self._next_goal(row, now, first=True)
        return row

    def _remove_rows(self, rows: Iterable[int]) -> None:
        rows = sorted(set(rows), reverse=True)
        if not rows:
            return
        bodies = [self.people.bodies[row] for row in rows]
        with self.host.removing_bodies(bodies):
            for row in rows:
                name = self.people.bodies[row].userData.entity.name
                for state in self._spawners:
                    state.out.discard(name)
                body = self.people.remove(row)
                self.host.physics.DestroyBody(body)
        self._batch = None

    def names(self) -> list[str]:
        """The people's names, row by row."""
        return [body.userData.entity.name for body in self.people.bodies]

    def positions(self) -> np.ndarray:
        """(N, 2) the people's positions (m, world frame), read from Box2D."""
        if self.people.count == 0:
            return np.zeros((0, 2))
        return self._bodies().poses()[:, :2]

    def snapshot(self) -> "CrowdState":
        """The people now (see :class:`CrowdState`)."""
        people = self.people
        n = people.count
        states = np.full(n, WALKING_STATE, dtype=np.uint8)
        states[people.rows("wait_until") >= 0.0] = WAITING_STATE
        states[people.rows("mode") == IDLE] = STANDING_STATE
        return CrowdState(
            self.name, self.names(), self.positions().copy(), people.rows("heading").copy(),
            people.rows("velocity").copy(), self.spec.radius, people.rows("group").copy(), states,
        )

    def circles(self) -> np.ndarray:
        """(N, 3) x, y (m) and radius of every body, world frame (what lasers and pictures see)."""
        positions = self.positions()
        return np.column_stack([positions, np.full(len(positions), self.spec.radius)])

    def _bodies(self) -> BodyBatch:
        if self._batch is None:
            self._batch = BodyBatch(self.people.bodies)
        return self._batch

    # ------------------------------------------------------------------ goals
    def _pool(self, region: str, label: int) -> np.ndarray:
        """The candidate goals of a region reachable within the grid's region ``label`` (drawn
        once, :attr:`CrowdSpec.goals_per_region` of them among its free cells)."""
        key = (region, label)
        pool = self._pools.get(key)
        if pool is None:
            x0, y0, x1, y1 = self._box(region)
            points = []
            rng = np.random.default_rng([zlib.crc32(region.encode()), label + 2, self._seed or 0])
            for _ in range(self.spec.goals_per_region * PLACE_TRIES):
                if len(points) == self.spec.goals_per_region:
                    break
                x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
                found = -2 if self.grid is None else self.grid.region_at(x, y)
                if found == label or (label == -2 and found != -1):
                    points.append((x, y))
            pool = self._pools[key] = np.array(points, dtype=np.float64).reshape(-1, 2)
        return pool

    def _next_goal(self, row: int, now: float, first: bool = False) -> bool:
        """Give the person at ``row`` its next goal; False where a spawned person reached the end
        of its route (it leaves)."""
        people = self.people
        route = self._routes[people.route[row]]
        if people.mode[row] == WAYPOINTS:
            index = 0 if first else people.waypoint[row] + 1
            if index >= len(route.waypoints):
                if people.spawned[row]:
                    return False
                if not route.loop:
                    people.mode[row] = IDLE
                    people.field[row] = -1
                    return True
                index = 0
            people.waypoint[row] = index
            goal = self._point(route.waypoints[index])
        else:
            position = people.bodies[row].position
            label = -2 if self.grid is None else self.grid.region_at(position[0], position[1])
            pool = self._pool(route.goals, label)
            if not len(pool):
                people.mode[row] = IDLE
                return True
            goal = tuple(pool[int(self.rng.integers(len(pool)))])
        people.goal[row] = goal
        people.field[row] = -1 if self.grid is None else self.grid.field_id(goal[0], goal[1], set(people.rows("field").tolist()))
        return True

    def _handle_arrivals(self, positions: np.ndarray, now: float) -> list[int]:
        """Start waits at goals reached, give new goals when waits end; the rows that leave."""
        people = self.people
        arrived = arrivals(people.count, people.mode, people.goal, positions, people.wait_until,
                            self.spec.parameters.stop_distance)
        leaving = []
        groups = people.rows("group")
        for row in arrived:
            if groups[row] >= 0 and not self._leads(row):
                continue  # the group's first member decides
            route = self._routes[people.route[row]]
            low, high = route.wait
            people.wait_until[row] = now + (float(self.rng.uniform(low, high)) if high > 0.0 else 0.0)
        for row in waits_over(people.count, people.wait_until, now):
            people.wait_until[row] = -1.0
            if not self._next_goal(row, now):
                leaving.append(int(row))
                continue
            if groups[row] >= 0:
                for member in np.flatnonzero(groups == groups[row]):
                    if member != row:
                        people.goal[member] = people.goal[row]
                        people.field[member] = people.field[row]
                        people.waypoint[member] = people.waypoint[row]
                        people.mode[member] = people.mode[row]
        return leaving

    def _leads(self, row: int) -> bool:
        group = self.people.group[row]
        members = np.flatnonzero(self.people.rows("group") == group)
        return int(self.people.number[row]) == int(self.people.rows("number")[members].min())

    # ------------------------------------------------------------------ spawning
    def _spawn(self, now: float) -> None:
        for index, (spawner, state) in enumerate(zip(self.spec.spawners, self._spawners)):
            while state.next_arrival <= now:
                if spawner.total is not None and state.made >= spawner.total:
                    state.next_arrival = math.inf
                    break
                if len(state.out) + spawner.size > spawner.limit:
                    state.next_arrival = now + self.dt  # full: try again next update
                    break
                placed = self._places(spawner.at, spawner.size)
                if placed is None:
                    state.next_arrival = now + self.dt  # the door is crowded
                    break
                group = -1
                if spawner.size > 1:
                    group, self._next_group = self._next_group, self._next_group + 1
                rows = [self._add_person(len(self.spec.agents) + index, position, spawner.speed, group, True, now)
                        for position in placed]
                state.out.update(self.people.bodies[row].userData.entity.name for row in rows)
                if group >= 0:
                    self._share_goal(rows)
                state.made += 1
                state.next_arrival += float(self.rng.exponential(1.0 / spawner.rate))

    # ------------------------------------------------------------------ stepping
    def before_step(self, iterations: int, now: float) -> None:
        """A physics step is about to run (``iterations`` done so far, sim time ``now`` s):
        update the people's velocities on every :attr:`every`-th step."""
        if iterations % self.every == 0:
            self.update(now)

    def updates_at(self, iterations: int) -> bool:
        """Whether the crowd updates before step number ``iterations + 1``."""
        return iterations % self.every == 0

    def _wall_index(self) -> WallIndex:
        version = self.host.static_geometry_version
        if self._walls is None or self._walls_version != version:
            segments = [layer.world_edges() for layer in self.layers]
            segments = [s for s in segments if len(s)]
            self._walls = WallIndex(np.vstack(segments) if segments else np.zeros((0, 4)))
            self._walls_version = version
        return self._walls

    def robots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions (M, 2, m), velocities (M, 2, m/s) and bounding radii (M, m) of the moving
        bodies of models in the crowd's layers (people avoid them; they do not avoid people)."""
        if self._robots is None:
            bodies, radii = [], []
            for model in self.host.models.values():
                for body in model.bodies.values():
                    physics_body = body.physics_body
                    if physics_body.type == b2.staticBody:
                        continue
                    radius = 0.0
                    for fixture in physics_body.fixtures:
                        if fixture.sensor or not (fixture.filterData.categoryBits & self.bits):
                            continue
                        shape = fixture.shape
                        if shape.type == shape.e_circle:
                            radius = max(radius, math.hypot(*shape.pos) + shape.radius)
                        else:
                            radius = max(radius, max(math.hypot(*v) for v in shape.vertices))
                    if radius > 0.0:
                        bodies.append(physics_body)
                        radii.append(radius)
            self._robots = (BodyBatch(bodies), np.array(radii, dtype=np.float64))
        batch, radii = self._robots
        if not len(radii):
            return np.zeros((0, 2)), np.zeros((0, 2)), radii
        return batch.poses()[:, :2], batch.velocities()[:, :2], radii

    def on_model_added(self, model: "Model") -> None:
        """A model came: the robots are gathered again."""
        self._robots = None

    def on_model_removed(self, model: "Model") -> None:
        """A model leaves: the robots are gathered again (its bodies must not be read)."""
        self._robots = None

    def update(self, now: float) -> None:
        """One crowd update at sim time ``now`` (s): arrivals, spawns, the model, the bodies' velocities."""
        self._spawn(now)
        people = self.people
        if people.count == 0:
            return
        positions = self.positions()
        leaving = self._handle_arrivals(positions, now)
        if leaving:
            self._remove_rows(leaving)
            if people.count == 0:
                return
            positions = self.positions()
        n = people.count
        goals = people.rows("goal").copy()
        standing = (people.rows("mode") == IDLE) | (people.rows("wait_until") >= 0.0)
        goals[standing] = positions[standing]
        directions = np.zeros((n, 2))
        distances = np.zeros(n)
        fields = people.rows("field").copy()
        fields[standing] = -1
        if self.grid is not None:
            walking_directions(positions, goals, fields, *self.grid.arrays(), directions, distances)
        else:
            walking_directions(positions, goals, fields, np.zeros((0, 1, 1), dtype=np.float32), 0.0, 0.0, 1.0, 1, 1,
                               directions, distances)
        robot_positions, robot_velocities, robot_radii = self.robots()
        everyone = np.concatenate([positions, robot_positions])
        velocities = np.concatenate([people.rows("velocity"), robot_velocities])
        radii = np.concatenate([np.full(n, self.spec.radius), robot_radii])
        total = len(everyone)
        walls = self._wall_index()
        out = np.zeros((n, 2))
        speeds = people.rows("speed")
        if isinstance(self.spec.parameters, SocialForceParameters):
            grid = neighbour_grids(everyone, n, total, self.spec.parameters.neighbor_range)
            self._stamp = social_force_step(
                self.parameters, self.dt, n, everyone, velocities, radii, directions, distances, speeds,
                people.rows("group"), max(self._next_group, 1), total, *grid, *walls.arrays(), self._stamp,
                *walls.nearest_map(), out,
            )
        else:
            parameters: OrcaParameters = self.spec.parameters
            preferred = directions * np.minimum(speeds, distances / self.dt)[:, None]
            preferred[distances < parameters.stop_distance] = 0.0
            grid = build_grid(everyone, total, max(parameters.neighbor_distance, 0.5))
            self._stamp = orca_step(
                self.parameters, self.dt, n, everyone, velocities, radii, preferred,
                speeds * parameters.max_speed_multiplier, total, *grid, *walls.arrays(), self._stamp, out,
            )
        people.velocity[:n] = out
        moving = np.hypot(out[:, 0], out[:, 1]) > 1e-3
        people.heading[:n][moving] = np.arctan2(out[moving, 1], out[moving, 0])
        self._bodies().set_velocities(np.column_stack([out, np.zeros(n)]))

    # ------------------------------------------------------------------ run-time changes
    def add(self, position: tuple[float, float], goals: Sequence[tuple[float, float]] = (), speed: float | None = None,
            name: str = "") -> str:
        """Add one person at ``position`` (m, world frame) walking ``goals`` (m, world frame) in a
        loop, standing without, at ``speed`` (m/s; the middle of the crowd's speeds by default);
        returns its name (``name``, or ``<crowd>_<number>``). The caller checks that the name is
        free among every entity of the world.

        Raises:
            RequestError: a place or goal inside a wall, a goal out of reach, values beyond the
                limits (:mod:`sim_server.core.limits`).
        """
        x, y = _point_in_limits(position, "position")
        if len(goals) > limits.MAX_WAYPOINTS:
            raise RequestError(f"{len(goals)} goals, more than the limit of {limits.MAX_WAYPOINTS}")
        points = [_point_in_limits(goal, f"goal {index}") for index, goal in enumerate(goals)]
        chosen = float(np.mean(self.spec.speed)) if speed is None else float(speed)
        if not limits.WALKING_SPEED.contains(chosen):
            raise RequestError(f"speed must be {limits.WALKING_SPEED.describe()}, got {speed!r}")
        if self.grid is not None:
            start = self.grid.region_at(x, y)
            if start == -1:
                raise RequestError(f"({x:g}, {y:g}) lies within {self.spec.radius:g} m of a wall: a pedestrian cannot stand there")
            for index, (gx, gy) in enumerate(points):
                label = self.grid.region_at(gx, gy)
                if label == -1:
                    raise RequestError(f"goal {index} ({gx:g}, {gy:g}) lies within {self.spec.radius:g} m of a wall")
                if -2 not in (label, start) and label != start:
                    raise RequestError(f"goal {index} ({gx:g}, {gy:g}) cannot be reached from ({x:g}, {y:g}): walls close it off")
        route = Route(tuple((gx - self.offset[0], gy - self.offset[1]) for gx, gy in points), None, True)
        row = self._add_person(self._route_index(route), (x, y), (chosen, chosen), -1, False, 0.0, name, added=True)
        return self.people.bodies[row].userData.entity.name

    def _route_index(self, route: Route) -> int:
        """The index of a run-time route (the same route shared; unused ones dropped beyond
        :data:`MAX_RUNTIME_ROUTES`)."""
        fixed = len(self.spec.agents) + len(self.spec.spawners)
        for index in range(fixed, len(self._routes)):
            if self._routes[index] == route:
                return index
        if len(self._routes) - fixed >= MAX_RUNTIME_ROUTES:
            used = sorted({int(r) for r in self.people.rows("route")} | set(range(fixed)))
            renumber = {old: new for new, old in enumerate(used)}
            self._routes = [self._routes[old] for old in used]
            rows = self.people.rows("route")
            rows[:] = [renumber[int(r)] for r in rows]
        self._routes.append(route)
        return len(self._routes) - 1

    def row_of(self, name: str) -> int | None:
        """The row of the person called ``name`` (None when there is none)."""
        for row, body in enumerate(self.people.bodies):
            if body.userData.entity.name == name:
                return row
        return None

    def remove(self, name: str) -> None:
        """Remove the person called ``name`` (EntityError when there is none)."""
        row = self.row_of(name)
        if row is None:
            raise EntityError(f'pedestrian "{name}" does not exist in crowd "{self.name}"')
        self._remove_rows([row])

    def state_of(self, row: int) -> tuple[float, float, float, float, float]:
        """x, y (m), heading (rad) and velocity vx, vy (m/s) of the person at ``row``."""
        body = self.people.bodies[row]
        velocity = body.linearVelocity
        return (float(body.position[0]), float(body.position[1]), float(self.people.heading[row]),
                float(velocity[0]), float(velocity[1]))

    def place(self, row: int, x: float, y: float, heading: float, vx: float, vy: float) -> None:
        """Put the person at ``row`` at (x, y) (m) facing ``heading`` (rad), moving at (vx, vy)
        m/s until the next crowd update; RequestError where a body cannot stand there."""
        if self.grid is not None and self.grid.region_at(x, y) == -1:
            raise RequestError(f"({x:g}, {y:g}) lies within {self.spec.radius:g} m of a wall: a pedestrian cannot stand there")
        body = self.people.bodies[row]
        body.transform = ((x, y), 0.0)
        body.linearVelocity = (vx, vy)
        self.people.velocity[row] = (vx, vy)
        self.people.heading[row] = heading

    def remove_added(self) -> None:
        """Remove the people requests added at run time (:meth:`add`)."""
        self._remove_rows(np.flatnonzero(self.people.rows("added")).tolist())

    def restore(self) -> None:
        """Every person back where it entered the world, at rest, its goals kept."""
        for row in range(self.people.count):
            x, y = self.people.entry[row]
            self.place(row, float(x), float(y), float(self.people.heading[row]), 0.0, 0.0)

    def reseed(self, seed: int | None) -> None:
        """Start afresh (as :meth:`reset`) with another seed: other starts, speeds and goals."""
        self._seed = seed
        self.reset()

    def reset(self) -> None:
        """Back to the world file's people and clocks (the same seed, the same choices)."""
        self._remove_rows(range(self.people.count))
        self._routes = self._routes[: len(self.spec.agents) + len(self.spec.spawners)]
        self._robots = None
        self._start()

    def close(self) -> None:
        """Remove every person."""
        self._remove_rows(range(self.people.count))
        self._robots = None


def _point_in_limits(point: Sequence[float], what: str) -> tuple[float, float]:
    """A point (m) as floats; RequestError unless finite and within the world's coordinates."""
    try:
        x, y = float(point[0]), float(point[1])
    except (TypeError, ValueError, IndexError):
        raise RequestError(f"{what} must be a point (x, y), got {point!r:.60}") from None
    if not (limits.COORDINATE.contains(x) and limits.COORDINATE.contains(y)):
        raise RequestError(f"{what} ({x:g}, {y:g}) must be finite and within +-{limits.COORDINATE.high:g} m")
    return x, y


def _placed(edges: np.ndarray, origin: Any) -> np.ndarray:
    """Layer-frame edges (N, 4) placed at ``origin`` (a pose)."""
    cos_t, sin_t = math.cos(origin.theta), math.sin(origin.theta)
    result = np.empty_like(edges, dtype=float)
    for column in (0, 2):
        x, y = edges[:, column], edges[:, column + 1]
        result[:, column] = origin.x + cos_t * x - sin_t * y
        result[:, column + 1] = origin.y + sin_t * x + cos_t * y
    return result
