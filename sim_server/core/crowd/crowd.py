"""A crowd in the physics world: its people as bodies, walking by a crowd model.

Each pedestrian is a kinematic Box2D circle in the crowd's layers: lasers, bumpers, cameras and
pictures see it like any body, a robot (dynamic) cannot pass through it, and the crowd model alone
moves it. On every crowd update (``update_rate``; physics steps in between keep the velocities)
the crowd brings its people's positions up to date and reads the robots' from Box2D, decides goals
(arrivals, waiting, the next waypoint or a random goal), finds each person's walking direction on
the walking grid, runs the model (:mod:`~sim_server.core.crowd.social_force` or
:mod:`~sim_server.core.crowd.orca`) for all people at once and writes the new velocities into the
bodies. Per person there is no Python on a step; Python runs per event (an arrival, a spawn).

The crowd's arrays hold where each person is: its place at the last update and its velocity since
(:meth:`Crowd.positions`), which is what Box2D's integration of a kinematic body gives. Only the
bodies a robot may reach before the next update are active in Box2D
(:mod:`~sim_server.core.crowd.touch`): the others cost the physics step nothing, and their
positions come from the arrays alone; those of active bodies are read back from Box2D on each update.

With replicas (copies of the world side by side, :mod:`sim_server.core.physics.replicas`) one
crowd holds the people of every copy: one update, one kernel call for all of them. People of
different copies never meet; each copy has its own random generator, so a copy's people do what
its seed says whatever the others do, and a copy can start afresh alone (:meth:`Crowd.restart`).
Places and goals are kept in the world file's frame; a person's copy lies at its offset.

The crowd names a small protocol of the world, :class:`CrowdHost`, never its class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ContextManager, Iterable, Mapping, Protocol, Sequence

import numpy as np
from Box2D import b2

from sim_server.core import limits
from sim_server.core.crowd.navigation import WalkingGrid, walking_directions
from sim_server.core.crowd.neighbors import build_grid
from sim_server.core.crowd.orca import keep_right, neighbor_cell, orca_step
from sim_server.core.crowd.orca_obstacles import OrcaObstacles
from sim_server.core.crowd.pedsim_forces import people_forces
from sim_server.core.crowd.goals import Goals
from sim_server.core.crowd.people import (
    IDLE, IN_QUEUE, ON_ROUTE, REGION_GOALS, STANDING_STATE, WAITING_STATE, WALKING_STATE, WAYPOINTS, CrowdState, Pedestrian, People,
    face_walking, walked_on,
)
from sim_server.core.crowd.places import IN_WALL, Places
from sim_server.core.crowd.robots import Robots, RobotState
from sim_server.core.crowd.social_force import neighbour_grids, robot_shapes, social_force_step
from sim_server.core.crowd.touch import REACH_HYSTERESIS, dynamic_reach, faster_than, within_reach
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.crowd.yielding import arc_margins, moves_otherwise, yield_to_robots
from sim_server.core.errors import ConfigError, EntityError, RequestError
from sim_server.core.format.crowd_file import AgentEntry, CrowdSpec, OrcaParameters, Route, SocialForceParameters
from sim_server.core.physics.body_memory import BodyBatch
from sim_server.core.random_streams import stream_key
from sim_server.core.physics.layer import BodyRef

if TYPE_CHECKING:
    from sim_server.core.physics.layer import Layer
    from sim_server.core.physics.model import Model
    from sim_server.core.timing.timekeeper import TimeKeeper

#: The body name of every pedestrian's one body (contacts report it).
BODY_NAME = "body"
#: Density of a pedestrian's body (kg/m^2); kinematic bodies ignore it, contacts report it.
BODY_DENSITY = 1.0
#: Smallest side (m) of the cells of the grid that finds the robots near a person.
MIN_ROBOT_CELL = 1.0
#: A robot whose velocity (m/s, beyond the turn its turn rate gives it, or turn rate, rad/s)
#: changed by more than this since people last yielded to it has them yield again before the
#: next physics step.
YIELD_TOLERANCE = 0.01
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

    @property
    def time(self) -> "TimeKeeper":
        """The world's clock (its ``iterations``: the physics steps done)."""

    def removing_bodies(self, bodies: Iterable[b2.body]) -> ContextManager[None]:
        """A block inside which ``bodies`` may be destroyed."""

    def pedestrian_count(self) -> int:
        """People in the world now, every crowd's."""


@dataclass
class _Spawner:
    """A spawner's state in one copy: next arrival (sim s), people out and made."""

    next_arrival: float = 0.0
    out: set = field(default_factory=set)
    made: int = 0


class Crowd:
    """The people of one crowd spec, in every copy of the world.

    Args:
        spec: the crowd of the world file.
        host: the world.
        layers: the layers (of the first copy) whose walls the crowd avoids, with their bits.
        step_size: the physics step (s).
        names: the crowd's name in each copy (people are ``<name>_<number>``); default the spec's.
        offsets: where each copy's frame lies in the world (m, translations); default one at 0.
        seeds: each copy's seed (None: nondeterministic); default None for each.

    Raises:
        ConfigError: a start, waypoint, region or spawner place inside a wall or out of reach.
    """

    def __init__(
        self, spec: CrowdSpec, host: CrowdHost, layers: Sequence["Layer"], step_size: float,
        names: Sequence[str] = (), offsets: Sequence[tuple[float, float]] = ((0.0, 0.0),), seeds: Sequence[Any] = (),
    ) -> None:
        self.spec = spec
        self.host = host
        self.name = spec.name
        self.offsets = np.array(offsets, dtype=np.float64).reshape(-1, 2)
        copies = len(self.offsets)
        self.copy_names = list(names) or [spec.name] * copies
        self._seeds = list(seeds) or [None] * copies
        self.layers = list(layers)
        self.bits = 0
        for layer in self.layers:
            self.bits |= layer.category_bits
        self.bits = self.bits or 0xFFFF
        self.step_size = step_size
        rate = spec.update_rate
        self.every = max(1, int(round(1.0 / (rate * step_size)))) if rate > 0.0 else 1
        self.dt = self.every * step_size
        self.people = People()
        self.parameters = spec.parameters.array()
        self.grid = self._walking_grid()
        self.places = Places(spec, self.grid)
        self._walls: WallIndex | None = None
        self._walls_version = -1
        self._stamp = 1
        self._batch: BodyBatch | None = None
        #: The moving bodies of models in the crowd's layers: the robots people meet.
        self._robots = Robots(self.bits)
        #: The robots' velocities (M, 3) when people last yielded to them (None: never).
        self._yielded_for: np.ndarray | None = None
        #: The physics step (host.time.iterations) of that yield.
        self._yielded_at = 0
        #: The physics step (host.time.iterations) at which the people's positions were last brought up to date.
        self._advanced_at = host.time.iterations
        #: Whether a model came or moved since the last check of which bodies are active.
        self._recheck = False
        #: The squared speeds (m^2/s^2) the dynamic bodies (:meth:`robots`) may reach before the
        #: active set must be checked again (None: no check made for the bodies of now).
        self._speed_limits_sq: np.ndarray | None = None
        self._centre = self._world_centre()
        self._next_number = 0
        self._next_group = 0
        #: The people's names (who is here, without a scan of the bodies).
        self._names: set[str] = set()
        self._fixture = b2.fixtureDef(shape=b2.circleShape(radius=spec.radius), density=BODY_DENSITY)
        self._fixture.filter.categoryBits = self.bits
        self._fixture.filter.maskBits = self.bits
        self.rngs = [np.random.default_rng(seed) for seed in self._seeds]
        self.goals = Goals(self, [entry.route for entry in spec.agents] + [s.route for s in spec.spawners])
        self._spawners: list[list[_Spawner]] = [[] for _ in range(copies)]
        #: People who came into each copy since it (re)started: their random streams' numbers.
        self._arrived = [0] * copies
        self.places.check()
        for copy in range(copies):
            self._start_copy(copy)

    # ------------------------------------------------------------------ set-up
    def _walking_grid(self) -> WalkingGrid | None:
        """The grid of every wall of the crowd's layers (streamed pieces too), or None without walls."""
        segments = [layer.all_world_edges() for layer in self.layers if len(layer.edges)] + self._own_walls()
        if not segments:
            return None
        return WalkingGrid(np.vstack(segments), self.spec.radius, self.spec.navigation_cell)

    def _own_walls(self) -> list[np.ndarray]:
        """The crowd's own walls (a pedsim scenario's), unless a layer of the world has them."""
        if not self.spec.walls or self.spec.walls_layer is not None:
            return []
        return [np.array(self.spec.walls, dtype=np.float64).reshape(-1, 4)]

    def _world_centre(self) -> np.ndarray:
        """The middle of the first copy (its walls' box), by which robots are told to a copy."""
        if self.grid is None:
            return np.zeros(2)
        return np.array([self.grid.x0 + 0.5 * self.grid.nx * self.grid.cell, self.grid.y0 + 0.5 * self.grid.ny * self.grid.cell])

    @property
    def copies(self) -> int:
        """Copies of the world the crowd walks in."""
        return len(self.offsets)

    def _start_copy(self, copy: int) -> None:
        """Place the world file's people of one copy and set its spawners' clocks."""
        rng = self.rngs[copy]
        self._arrived[copy] = 0
        self._spawners[copy] = [_Spawner() for _ in self.spec.spawners]
        for spawner, state in zip(self.spec.spawners, self._spawners[copy]):
            state.next_arrival = float(rng.exponential(1.0 / spawner.rate))
        occupied = self.places.occupancy(self._local_of_copy(copy))
        for index, entry in enumerate(self.spec.agents):
            placed = self.places.find(entry.start, entry.count, occupied, rng, self.places.starts[index])
            if placed is None:
                raise ConfigError(
                    f"{entry.location}: key \"start\": no room for {entry.count} pedestrians of radius "
                    f"{self.spec.radius:g} m there without overlapping walls or each other"
                    + ("" if entry.start.point is not None else " where the route can be reached from")
                )
            for size in self._group_sizes(entry, rng):
                group = -1
                if size > 1:
                    group, self._next_group = self._next_group, self._next_group + 1
                rows = [self._add_person(index, point, entry.speed, group, False, 0.0, copy) for point in placed[:size]]
                placed = placed[size:]
                if group >= 0:
                    self.goals.share_goal(rows)

    @staticmethod
    def _group_sizes(entry: AgentEntry, rng: np.random.Generator) -> list[int]:
        """The sizes of the groups an agent entry's people walk in (1: alone): all together
        (``group``), Poisson sizes of ``group_size_mean`` (0 drawn again, the last cut to the
        people left: pedsim's division of a cluster), or each alone."""
        if entry.group_size_mean > 0.0:
            sizes: list[int] = []
            left = entry.count
            while left > 0:
                size = 0
                while size == 0:
                    size = int(rng.poisson(entry.group_size_mean))
                sizes.append(min(size, left))
                left -= sizes[-1]
            return sizes
        if entry.group:
            return [entry.count]
        return [1] * entry.count

    # ------------------------------------------------------------------ people
    def _add_person(self, route_index: int, place: tuple[float, float], speed: tuple[float, float], group: int,
                    spawned: bool, now: float, copy: int, name: str = "", added: bool = False) -> int:
        """Add a person at ``place`` (m, the world file's frame) in copy ``copy`` (named ``name``,
        else ``<crowd>_<number>``); returns its row."""
        number = self._next_number
        self._next_number += 1
        prefix = self.copy_names[copy]
        while not name and f"{prefix}_{number}" in self.host.models:  # a model took the name
            number = self._next_number
            self._next_number += 1
        name = name or f"{prefix}_{number}"
        x, y = place[0] + self.offsets[copy, 0], place[1] + self.offsets[copy, 1]
        body = self.host.physics.CreateKinematicBody(position=(x, y), fixedRotation=True, active=False)
        body.CreateFixture(self._fixture)
        body.userData = BodyRef(Pedestrian(name, prefix), BODY_NAME)
        self._names.add(name)
        route = self.goals.routes[route_index]
        mode = IDLE if route.idle else (WAYPOINTS if route.waypoints else REGION_GOALS)
        rng = self.rngs[copy]
        row = self.people.add(body, number, route_index, float(rng.uniform(*speed)), group, place, mode, spawned, 0.0,
                              added, copy, (x, y), self._random_key(copy))
        self._batch = None
        self._recheck = True  # active before the next step where a robot is near
        if mode != IDLE:
            self.goals.next_goal(row, now, first=True)
        return row

    def _random_key(self, copy: int) -> int:
        """The key of the random stream of the next person in copy ``copy``: from the copy's
        seed and how many came before it, as in a world of that copy alone."""
        self._arrived[copy] += 1
        return int(stream_key(self._seeds[copy], f"{self.name}/{self._arrived[copy]}"))

    def _remove_rows(self, rows: Iterable[int]) -> None:
        rows = sorted(set(rows), reverse=True)
        if not rows:
            return
        bodies = [self.people.bodies[row] for row in rows]
        with self.host.removing_bodies(bodies):
            for row in rows:
                name = self.people.bodies[row].userData.entity.name
                self._names.discard(name)
                for state in self._spawners[int(self.people.copy[row])]:
                    state.out.discard(name)
                body = self.people.remove(row)
                self.host.physics.DestroyBody(body)
        self._batch = None

    def names(self) -> list[str]:
        """The people's names, row by row."""
        return [body.userData.entity.name for body in self.people.bodies]

    def _elapsed(self) -> float:
        """Seconds walked since the positions were last brought up to date."""
        return max(self.host.time.iterations - self._advanced_at, 0) * self.step_size

    def positions(self) -> np.ndarray:
        """(N, 2) the people's positions now (m, world frame): where each was at the last update,
        moved on at its velocity since, as Box2D moves a kinematic body."""
        people = self.people
        if people.count == 0:
            return np.zeros((0, 2))
        return walked_on(people.count, people.position, people.velocity, self._elapsed(), 0.0,
                         np.empty((people.count, 2)))

    def _advance(self) -> None:
        """Bring the positions up to date: each person walked on at its velocity; those whose
        bodies are active are where Box2D has them (the two differ by float32 rounding only)."""
        people = self.people
        iterations = self.host.time.iterations
        if people.count:
            people.position[: people.count] = self.positions()
            active = people.rows("active")
            if active.any():
                people.position[: people.count][active] = self._bodies().poses()[active, :2]
        self._advanced_at = iterations

    def local_positions(self) -> np.ndarray:
        """(N, 2) the people's positions (m) in the world file's frame (their copy's offset off)."""
        return self.positions() - self.offsets[self.people.rows("copy")]

    def _local_of_copy(self, copy: int) -> np.ndarray:
        """(M, 2) positions (m, the world file's frame) of the people of copy ``copy``."""
        if self.people.count == 0:
            return np.zeros((0, 2))
        return self.local_positions()[self.people.rows("copy") == copy]

    def snapshot(self) -> CrowdState:
        """The people now (see :class:`~sim_server.core.crowd.people.CrowdState`)."""
        people = self.people
        states = np.full(people.count, WALKING_STATE, dtype=np.uint8)
        states[(people.rows("wait_until") >= 0.0) | (people.rows("activity") == IN_QUEUE)] = WAITING_STATE
        states[people.rows("mode") == IDLE] = STANDING_STATE
        return CrowdState(
            self.name, self.names(), self.positions().copy(), people.rows("heading").copy(),
            people.rows("velocity").copy(), self.spec.radius, people.rows("group").copy(), states,
        )

    def circles(self) -> np.ndarray:
        """(N, 3) x, y (m) and radius of every body, world frame (what lasers and pictures see)."""
        people = self.people
        return walked_on(people.count, people.position, people.velocity, self._elapsed(), self.spec.radius,
                         np.empty((people.count, 3)))

    def _bodies(self) -> BodyBatch:
        if self._batch is None:
            self._batch = BodyBatch(self.people.bodies)
        return self._batch

    def local_position(self, row: int) -> tuple[float, float]:
        """Where the person at ``row`` is now (m, the crowd's frame: its copy's offset off)."""
        people = self.people
        x, y = people.position[row] + self._elapsed() * people.velocity[row] - self.offsets[int(people.copy[row])]
        return float(x), float(y)

    # ------------------------------------------------------------------ spawning
    def _spawn(self, now: float) -> None:
        for copy, states in enumerate(self._spawners):
            for index, (spawner, state) in enumerate(zip(self.spec.spawners, states)):
                while state.next_arrival <= now:
                    if spawner.total is not None and state.made >= spawner.total:
                        state.next_arrival = math.inf
                        break
                    if (len(state.out) + spawner.size > spawner.limit
                            or self.host.pedestrian_count() + spawner.size > limits.MAX_PEDESTRIANS):
                        state.next_arrival = now + self.dt  # full: try again next update
                        break
                    placed = self.places.find(spawner.at, spawner.size, self._local_of_copy(copy), self.rngs[copy],
                                              self.places.starts[len(self.spec.agents) + index])
                    if placed is None:
                        state.next_arrival = now + self.dt  # the door is crowded
                        break
                    group = -1
                    if spawner.size > 1:
                        group, self._next_group = self._next_group, self._next_group + 1
                    rows = [self._add_person(len(self.spec.agents) + index, point, spawner.speed, group, True, now, copy)
                            for point in placed]
                    state.out.update(self.people.bodies[row].userData.entity.name for row in rows)
                    if group >= 0:
                        self.goals.share_goal(rows)
                    state.made += 1
                    state.next_arrival += float(self.rngs[copy].exponential(1.0 / spawner.rate))

    # ------------------------------------------------------------------ stepping
    def before_step(self, iterations: int, now: float) -> None:
        """A physics step is about to run (``iterations`` done so far, sim time ``now`` s):
        update the people's velocities on every :attr:`every`-th step."""
        if iterations % self.every == 0:
            self.update(now)
            return
        rechecked = self._recheck
        velocities = self._robots.velocities()
        if self._recheck or self._too_fast(velocities):
            self._update_touch(self.dt, may_sleep=False)
        active = self.people.rows("active")
        if active.any() and (rechecked or self._robots_turned(velocities)):
            self._yield(np.flatnonzero(active), self.dt - (iterations % self.every) * self.step_size, between_updates=True)

    def updates_at(self, iterations: int) -> bool:
        """Whether the crowd updates before step number ``iterations + 1``."""
        return iterations % self.every == 0

    def _orca_obstacles(self, walls: WallIndex) -> OrcaObstacles:
        """The walls of :meth:`_wall_index` as ORCA's obstacles, made again when they change."""
        cached = getattr(self, "_orca_walls", None)
        if cached is None or cached[0] is not walls:
            parameters: OrcaParameters = self.spec.parameters
            reach = parameters.time_horizon_obstacles * parameters.max_speed_multiplier * self.spec.speed[1] + self.spec.radius
            self._orca_walls = (walls, OrcaObstacles.from_segments(walls.segments, reach))
        return self._orca_walls[1]

    def _wall_index(self) -> WallIndex:
        """The loaded walls of the first copy's layers (the world file's frame)."""
        version = self.host.static_geometry_version
        if self._walls is None or self._walls_version != version:
            segments = [layer.world_edges() for layer in self.layers] + self._own_walls()
            segments = [s for s in segments if len(s)]
            self._walls = WallIndex(np.vstack(segments) if segments else np.zeros((0, 4)))
            self._walls_version = version
        return self._walls

    def robots(self) -> RobotState:
        """The moving bodies of models in the crowd's layers, now: people avoid them (unless
        ``robot_visible`` is off) and never push them; they do not avoid people."""
        return self._robots.state(self.host.models, self.offsets + self._centre)

    def on_model_added(self, model: "Model") -> None:
        """A model came: the robots are gathered again, and bodies near it become active."""
        self._forget_robots()

    def on_model_moved(self, model: "Model") -> None:
        """A model was put elsewhere: bodies near it become active before the next step."""
        self._recheck = True

    def on_model_removed(self, model: "Model") -> None:
        """A model leaves: the robots are gathered again (its bodies must not be read)."""
        self._forget_robots()

    def _forget_robots(self) -> None:
        """Models came or left: gather the robots again before reading any, and check which
        bodies are active before the next step."""
        self._robots.forget()
        self._speed_limits_sq = None
        self._recheck = True

    def _too_fast(self, velocities: np.ndarray | None) -> bool:
        """Whether a dynamic body moves faster than the last check of the active bodies allowed
        for (it may reach a person whose body is inactive before the next update);
        ``velocities`` are every robot body's now (:meth:`Robots.velocities`, None when not
        gathered)."""
        limits_sq = self._speed_limits_sq
        if limits_sq is None or not len(limits_sq) or velocities is None:
            return False
        return bool(faster_than(velocities, self._robots.dynamic, limits_sq))

    def update(self, now: float) -> None:
        """One crowd update at sim time ``now`` (s): arrivals, spawns, the model, the bodies' velocities."""
        self._advance()
        self._recheck = False
        self._spawn(now)
        people = self.people
        if people.count == 0:
            return
        positions = self.positions()
        copy_rows = people.rows("copy")
        local = positions - self.offsets[copy_rows]
        leaving = self.goals.update(local, now, self.dt)
        if leaving:
            self._remove_rows(leaving)
            if people.count == 0:
                return
            positions = self.positions()
            copy_rows = people.rows("copy")
            local = positions - self.offsets[copy_rows]
        n = people.count
        goals = people.rows("goal").copy()
        standing = ((people.rows("mode") == IDLE) & (people.rows("activity") == ON_ROUTE)) | (people.rows("wait_until") >= 0.0)
        goals[standing] = local[standing]
        directions = np.zeros((n, 2))
        distances = np.zeros(n)
        fields = people.rows("field").copy()
        fields[standing] = -1
        if self.grid is not None:
            walking_directions(local, goals, fields, *self.grid.arrays(), directions, distances)
        else:
            walking_directions(local, goals, fields, np.zeros((0, 1, 1), dtype=np.float32), 0.0, 0.0, 1.0, 1, 1,
                               directions, distances)
        robots = self.robots()
        seen = robots if self.spec.robot_visible else robots.hidden()
        everyone = np.concatenate([positions, seen.positions])
        velocities = np.concatenate([people.rows("velocity"), seen.velocities[:, :2]])
        radii = np.concatenate([np.full(n, self.spec.radius), seen.radii])
        copies = np.concatenate([copy_rows, seen.copies])
        offsets = np.ascontiguousarray(self.offsets[copy_rows])
        total = len(everyone)
        walls = self._wall_index()
        out = np.zeros((n, 2))
        speeds = people.rows("speed")
        if isinstance(self.spec.parameters, SocialForceParameters):
            parameters = self.spec.parameters
            grid = neighbour_grids(everyone, n, total, parameters.neighbor_range)
            extra, self._stamp = people_forces(parameters, people, now, positions, velocities, offsets, directions,
                                               distances, walls, self._stamp)
            self._stamp = social_force_step(
                self.parameters, self.dt, n, (everyone, velocities, radii, copies, offsets),
                (directions, distances, speeds), (people.rows("group"), max(self._next_group, 1)), grid,
                walls.arrays(), self._stamp, walls.nearest_map(), robot_shapes(seen.angles, seen.reach(), seen.footprints),
                extra, out,
            )
        else:
            parameters: OrcaParameters = self.spec.parameters
            preferred = directions * np.minimum(speeds, distances / self.dt)[:, None]
            preferred[distances < parameters.stop_distance] = 0.0
            preferred = keep_right(preferred)
            grid = build_grid(everyone, total, neighbor_cell(parameters.neighbor_distance))
            self._stamp = orca_step(
                self.parameters, self.dt, n, (everyone, velocities, radii, copies, offsets), preferred,
                speeds * parameters.max_speed_multiplier, grid, self._orca_obstacles(walls).arrays(), walls.arrays(),
                self._stamp, out,
            )
        people.velocity[:n] = out
        self._update_touch(self.dt, robots=robots)
        # who may step into a robot: the people a dynamic one may reach (active), or all of them
        near = people.rows("active") if robots.dynamic.all() else np.ones(n, dtype=bool)
        self._yield(np.flatnonzero(near), self.dt, robots=robots)
        face_walking(n, people.velocity, people.heading)
        walking = np.zeros((n, 3))
        walking[:, :2] = people.rows("velocity")
        self._bodies().set_velocities(walking)

    def _robots_turned(self, velocities: np.ndarray | None) -> bool:
        """Whether a robot (``velocities``: every robot body's now) moves otherwise than when
        people last yielded to the robots, by more than :data:`YIELD_TOLERANCE`: its turn rate
        changed, or its velocity beyond the turn its turn rate gave it since (a robot that keeps
        its velocities in its own frame drives an arc, which the yield allowed for:
        :func:`~sim_server.core.crowd.yielding.arc_margins`)."""
        before = self._yielded_for
        if velocities is None or before is None or velocities.shape != before.shape:
            return True
        elapsed = (self.host.time.iterations - self._yielded_at) * self.step_size
        return bool(moves_otherwise(velocities, before, elapsed, YIELD_TOLERANCE))

    def _yield(self, rows: np.ndarray, dt: float, robots: RobotState | None = None, between_updates: bool = False) -> None:
        """The people of ``rows`` yield to the robots near them over the next ``dt`` s
        (:mod:`.yielding`): their velocities are cut so that none moves into a robot. Between
        updates (``between_updates``) the positions are brought up to date before a velocity
        changes, and the bodies get the new velocities."""
        robots = self.robots() if robots is None else robots
        self._yielded_for = robots.velocities
        self._yielded_at = self.host.time.iterations
        if not robots.count or not len(rows):
            return
        people = self.people
        velocities = people.rows("velocity").copy()
        changed = np.zeros(people.count, dtype=bool)
        reach = robots.reach()
        grid = build_grid(robots.positions, robots.count, max(2.0 * reach, MIN_ROBOT_CELL))
        self._stamp = yield_to_robots(
            np.ascontiguousarray(rows, dtype=np.int64),
            (self.positions(), velocities, self.spec.radius, people.rows("copy"), self.offsets), dt,
            (robots.positions, robots.angles, robots.velocities, arc_margins(robots.velocities, robots.radii, dt),
             robots.copies, reach), grid, robots.footprints.arrays(), self._wall_index().arrays(), self._stamp, changed,
        )
        if not changed.any():
            return
        if between_updates:
            self._advance()
        people.velocity[: people.count][changed] = velocities[changed]
        if between_updates:
            for row in np.flatnonzero(changed).tolist():
                people.bodies[row].linearVelocity = (float(velocities[row, 0]), float(velocities[row, 1]))

    def _update_touch(self, interval: float, may_sleep: bool = True, robots: RobotState | None = None) -> None:
        """Make active the bodies of the people a dynamic body may reach within ``interval`` (s),
        and, where ``may_sleep``, inactive those beyond reach (their positions must be up to
        date: right after :meth:`_advance`); ``robots`` as :meth:`robots` gives them (read now
        if None). See :mod:`~sim_server.core.crowd.touch`."""
        self._recheck = False
        people = self.people
        n = people.count
        if n == 0:
            return
        robots = self.robots() if robots is None else robots
        positions, velocities, radii, dynamic = robots.positions, robots.velocities, robots.radii, robots.dynamic
        wanted = np.zeros(n, dtype=bool)
        now = self.positions()
        origins, reach, self._speed_limits_sq = dynamic_reach(self.spec.radius, radii, positions, velocities, dynamic,
                                                              people.velocity, n, interval)
        if len(reach):
            within_reach(now, n, origins, reach, REACH_HYSTERESIS, people.rows("active"), wanted)
        active = people.rows("active")
        if not may_sleep:
            wanted |= active
        for row in np.flatnonzero(wanted != active).tolist():
            body = people.bodies[row]
            if wanted[row]:
                body.transform = ((float(now[row, 0]), float(now[row, 1])), 0.0)
                body.active = True
            else:
                body.active = False
        active[:] = wanted

    # ------------------------------------------------------------------ run-time changes
    def copy_at(self, x: float, y: float) -> int:
        """The copy of the world holding (x, y) (m, world frame): the one whose middle is nearest."""
        if self.copies == 1:
            return 0
        centres = self.offsets + self._centre
        return int(np.argmin(((centres - (x, y)) ** 2).sum(axis=1)))

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
        copy = self.copy_at(x, y)
        ox, oy = self.offsets[copy]
        start = self.places.label(x - ox, y - oy)
        if start == IN_WALL:
            raise RequestError(f"({x:g}, {y:g}) lies within {self.spec.radius:g} m of a wall: a pedestrian cannot stand there")
        for index, (gx, gy) in enumerate(points):
            label = self.places.label(gx - ox, gy - oy)
            if label == IN_WALL:
                raise RequestError(f"goal {index} ({gx:g}, {gy:g}) lies within {self.spec.radius:g} m of a wall")
            if label != start:
                raise RequestError(f"goal {index} ({gx:g}, {gy:g}) cannot be reached from ({x:g}, {y:g}): walls close it off")
        route = Route(tuple((gx - ox, gy - oy) for gx, gy in points), None, True)
        row = self._add_person(self._route_index(route), (x - ox, y - oy), (chosen, chosen), -1, False, 0.0, copy, name,
                               added=True)
        return self.people.bodies[row].userData.entity.name

    def _route_index(self, route: Route) -> int:
        """The index of a run-time route (the same route shared; unused ones dropped beyond
        :data:`MAX_RUNTIME_ROUTES`)."""
        fixed = len(self.spec.agents) + len(self.spec.spawners)
        routes = self.goals.routes
        for index in range(fixed, len(routes)):
            if routes[index] == route:
                return index
        if len(routes) - fixed >= MAX_RUNTIME_ROUTES:
            used = sorted({int(r) for r in self.people.rows("route")} | set(range(fixed)))
            renumber = {old: new for new, old in enumerate(used)}
            routes[:] = [routes[old] for old in used]
            rows = self.people.rows("route")
            rows[:] = [renumber[int(r)] for r in rows]
        routes.append(route)
        return len(routes) - 1

    def has(self, name: str) -> bool:
        """Whether a person called ``name`` is in the crowd."""
        return name in self._names

    def row_of(self, name: str) -> int | None:
        """The row of the person called ``name`` (None when there is none)."""
        if name not in self._names:
            return None
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
        """x, y (m, world frame), heading (rad) and velocity vx, vy (m/s) of the person at ``row``."""
        people = self.people
        x, y = people.position[row] + self._elapsed() * people.velocity[row]
        vx, vy = people.velocity[row]
        return float(x), float(y), float(people.heading[row]), float(vx), float(vy)

    def place(self, row: int, x: float, y: float, heading: float, vx: float, vy: float) -> None:
        """Put the person at ``row`` at (x, y) (m, world frame) facing ``heading`` (rad), moving
        at (vx, vy) m/s until the next crowd update; RequestError where a body cannot stand there."""
        ox, oy = self.offsets[int(self.people.copy[row])]
        label = self.places.label(x - ox, y - oy)
        if label == IN_WALL:
            raise RequestError(f"({x:g}, {y:g}) lies within {self.spec.radius:g} m of a wall: a pedestrian cannot stand there")
        starts = self.places.route_starts(self.goals.routes[self.people.route[row]])
        if starts is not None and label not in starts:
            raise RequestError(f"from ({x:g}, {y:g}) the pedestrian's goals cannot be reached: walls close them off")
        people = self.people
        body = people.bodies[row]
        body.transform = ((x, y), 0.0)
        body.linearVelocity = (vx, vy)
        people.velocity[row] = (vx, vy)
        people.position[row] = (x - self._elapsed() * vx, y - self._elapsed() * vy)  # (x, y) now
        people.heading[row] = heading
        self._recheck = True

    def remove_added(self) -> None:
        """Remove the people requests added at run time (:meth:`add`)."""
        self._remove_rows(np.flatnonzero(self.people.rows("added")).tolist())

    def restore(self) -> None:
        """Every person back where it entered the world, at rest, its goals kept."""
        for row in range(self.people.count):
            copy = int(self.people.copy[row])
            x, y = self.people.entry[row] + self.offsets[copy]
            self.place(row, float(x), float(y), float(self.people.heading[row]), 0.0, 0.0)

    def restart(self, copy: int, seed: Any) -> None:
        """Copy ``copy`` starts afresh with ``seed``: its people leave, the world file's come
        back at places (and with speeds and goals) the seed draws, its spawners begin again."""
        self._remove_rows(np.flatnonzero(self.people.rows("copy") == copy).tolist())
        self._seeds[copy] = seed
        self.rngs[copy] = np.random.default_rng(seed)
        if self.goals.queues is not None:
            self.goals.queues.restart(copy)
        self._start_copy(copy)

    def reset(self) -> None:
        """Back to the world file's people and clocks (the same seeds, the same choices)."""
        self._remove_rows(range(self.people.count))
        del self.goals.routes[len(self.spec.agents) + len(self.spec.spawners):]
        self._forget_robots()
        self._advanced_at = self.host.time.iterations
        self._next_number = 0
        self._next_group = 0
        for copy in range(self.copies):
            self.rngs[copy] = np.random.default_rng(self._seeds[copy])
            if self.goals.queues is not None:
                self.goals.queues.restart(copy)
            self._start_copy(copy)

    def close(self) -> None:
        """Remove every person."""
        self._remove_rows(range(self.people.count))
        self._forget_robots()


def _point_in_limits(point: Sequence[float], what: str) -> tuple[float, float]:
    """A point (m) as floats; RequestError unless finite and within the world's coordinates."""
    try:
        x, y = float(point[0]), float(point[1])
    except (TypeError, ValueError, IndexError):
        raise RequestError(f"{what} must be a point (x, y), got {point!r:.60}") from None
    if not (limits.COORDINATE.contains(x) and limits.COORDINATE.contains(y)):
        raise RequestError(f"{what} ({x:g}, {y:g}) must be finite and within +-{limits.COORDINATE.high:g} m")
    return x, y
