"""ORCA beside an independent implementation, on identical scenes: RVO2 (its C++ through the
pyrvo 0.4.3 binding). RVO2's circle swap (agents on a circle walk to the opposite point) and
scenes with walls given to both as the same obstacles
(:meth:`~sim_server.core.crowd.orca_obstacles.OrcaObstacles.loops` into RVO2's ``addObstacle``):
velocities step by step from RVO2's own state, overlaps, arrivals, and the time a step takes,
RVO2's ``doStep`` alone and with the Python loop that sets preferred velocities (as its users
write it).

Our side runs the compiled kernel directly (:mod:`sim_server.core.crowd.orca`), with the positions
integrated here as RVO2 integrates its own (``x += v dt``), so that only the models differ. The
kernel is called in one place (:func:`orca_velocities`). Timings interleave the two sides step
by step (the host is shared: its speed moves by 20-30 % between minutes) and report medians. The
tests (``test/core/crowd``) check the comparisons; ``make bench`` reports the timings
(:mod:`bench.crowd_scenarios`).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim_server.core.crowd.neighbors import build_grid
from sim_server.core.crowd.orca import neighbor_cell, orca_lines, orca_step
from sim_server.core.crowd.orca_obstacles import OrcaObstacles
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.format.crowd_file import OrcaParameters

#: RVO2's circle example: 250 agents on a 200 m circle, its agent defaults and time step.
CIRCLE_AGENTS = 250
CIRCLE_RADIUS = 200.0
CIRCLE_STEP = 0.25
CIRCLE_AGENT = {"neighbor_distance": 15.0, "max_neighbors": 10, "time_horizon": 10.0, "time_horizon_obstacles": 10.0}
CIRCLE_BODY = 1.5
CIRCLE_SPEED = 2.0
#: The scenes with walls: RVO2's Blocks example's agents (radius 2 m there; 0.5 m here, to fit
#: corridors and doors) and time step.
WALL_STEP = 0.25
WALL_AGENT = {"neighbor_distance": 15.0, "max_neighbors": 10, "time_horizon": 5.0, "time_horizon_obstacles": 5.0}
WALL_BODY = 0.5
WALL_SPEED = 2.0
#: The speed scene with walls: this many agents among 25 boxes (100 wall segments).
WALL_SPEED_AGENTS = 250
#: Steps of each run of the interleaved ORCA timings among walls.
WALL_SPEED_STEPS = 300


@dataclass
class OrcaWalls:
    """Walls as our ORCA kernel takes them: RVO2's obstacles and the segments of the step's last
    check (:func:`~sim_server.core.crowd.walls.keep_out_of_walls`)."""

    obstacles: OrcaObstacles
    index: WallIndex

    @classmethod
    def of_segments(cls, segments: np.ndarray, obstacle_range: float) -> "OrcaWalls":
        """The segments (N, 4; m) as two-sided obstacles
        (:meth:`~sim_server.core.crowd.orca_obstacles.OrcaObstacles.from_segments`)."""
        segments = np.asarray(segments, dtype=np.float64).reshape(-1, 4)
        return cls(OrcaObstacles.from_segments(segments, obstacle_range), WallIndex(segments))

    @classmethod
    def none(cls) -> "OrcaWalls":
        """No walls."""
        return cls.of_segments(np.zeros((0, 4)), 1.0)


def orca_parameters(agent: dict[str, float]) -> OrcaParameters:
    """Our ORCA parameters of RVO2's agent defaults (``neighborDist``, ``maxNeighbors``,
    ``timeHorizon``, ``timeHorizonObst``)."""
    return OrcaParameters(neighbor_distance=agent["neighbor_distance"], max_neighbors=int(agent["max_neighbors"]),
                          time_horizon=agent["time_horizon"], time_horizon_obstacles=agent["time_horizon_obstacles"])


def orca_velocities(parameters: np.ndarray, dt: float, position: np.ndarray, velocity: np.ndarray, radii: np.ndarray,
                    preferred: np.ndarray, max_speeds: np.ndarray, walls: OrcaWalls, stamp: int,
                    count: int | None = None) -> tuple[np.ndarray, int]:
    """One step of our ORCA kernel (:meth:`OrcaParameters.array` ``parameters``) for the first
    ``count`` entries (all by default; those after are robots, avoided without their help): the
    new velocities (count, 2; m/s) and the next stamp. The one place the kernel is called from
    here."""
    total = len(position)
    count = total if count is None else count
    out = np.zeros((count, 2))
    grid = build_grid(position, total, neighbor_cell(float(parameters[0])))
    agents = (position, velocity, radii, np.zeros(total, dtype=np.int64), np.zeros((count, 2)))
    stamp = orca_step(parameters, dt, count, agents, preferred, max_speeds, grid, walls.obstacles.arrays(),
                      walls.index.arrays(), stamp, out)
    return out, stamp


def circle_starts(count: int = CIRCLE_AGENTS, radius: float = CIRCLE_RADIUS) -> np.ndarray:
    """RVO2's circle example: ``count`` points evenly on a circle (m); each walks to its opposite."""
    angles = np.arange(count) * 2.0 * math.pi / count
    return radius * np.column_stack([np.cos(angles), np.sin(angles)])


def preferred_velocities(position: np.ndarray, goals: np.ndarray) -> np.ndarray:
    """RVO2's examples: towards the goal, at most 1 m/s."""
    offset = goals - position
    norm = np.linalg.norm(offset, axis=1)
    return offset * np.where(norm > 1.0, 1.0 / np.where(norm > 0.0, norm, 1.0), 1.0)[:, None]


class OrcaRun:
    """Our ORCA on agents walking to goals as RVO2's examples do, step by step."""

    def __init__(self, starts: np.ndarray, goals: np.ndarray, dt: float, agent: dict[str, float], body: float,
                 speed: float, walls: OrcaWalls | None = None) -> None:
        count = len(starts)
        self.position, self.velocity = np.array(starts, dtype=np.float64), np.zeros((count, 2))
        self.goals, self.dt = goals, dt
        self.parameters = orca_parameters(agent).array()
        self.radii, self.speeds = np.full(count, body), np.full(count, speed)
        self.walls = walls or OrcaWalls.none()
        self.stamp = 1

    def step(self) -> tuple[float, float]:
        """One step; the seconds it took in all and without setting the preferred velocities
        (neighbour grid, kernel and ``x += v dt``: what RVO2's ``doStep`` does)."""
        started = time.perf_counter()
        preferred = preferred_velocities(self.position, self.goals)
        kernel = time.perf_counter()
        self.velocity, self.stamp = orca_velocities(self.parameters, self.dt, self.position, self.velocity, self.radii,
                                                    preferred, self.speeds, self.walls, self.stamp)
        self.position = self.position + self.velocity * self.dt
        ended = time.perf_counter()
        return ended - started, ended - kernel


class Rvo2Run:
    """RVO2 (pyrvo) on the same agents and walls (the walls' loops as RVO2's obstacles)."""

    def __init__(self, starts: np.ndarray, goals: np.ndarray, dt: float, agent: dict[str, float], body: float,
                 speed: float, loops: list[np.ndarray] = ()) -> None:
        import pyrvo

        self.simulator = pyrvo.RVOSimulator(dt, agent["neighbor_distance"], int(agent["max_neighbors"]),
                                            agent["time_horizon"], agent["time_horizon_obstacles"], body, speed)
        for loop in loops:
            self.simulator.add_obstacle([(float(x), float(y)) for x, y in loop])
        if len(loops):
            self.simulator.process_obstacles()
        for x, y in starts:
            self.simulator.add_agent((float(x), float(y)))
        self.goals = [(float(x), float(y)) for x, y in goals]
        self.count = len(starts)

    def positions(self) -> np.ndarray:
        """(N, 2) the agents' positions (m; RVO2's float32)."""
        return np.array([self.simulator.get_agent_position(i).to_tuple() for i in range(self.count)])

    def velocities(self) -> np.ndarray:
        """(N, 2) the agents' velocities (m/s; RVO2's float32)."""
        return np.array([self.simulator.get_agent_velocity(i).to_tuple() for i in range(self.count)])

    def step(self) -> tuple[float, float]:
        """One step as RVO2's examples: a preferred velocity per agent, then ``doStep``; the
        seconds it took in all and ``doStep``'s alone."""
        simulator = self.simulator
        started = time.perf_counter()
        for i in range(self.count):
            position = simulator.get_agent_position(i)
            gx, gy = self.goals[i][0] - position.x, self.goals[i][1] - position.y
            norm = math.hypot(gx, gy)
            if norm > 1.0:
                gx, gy = gx / norm, gy / norm
            simulator.set_agent_pref_velocity(i, (gx, gy))
        kernel = time.perf_counter()
        simulator.do_step()
        ended = time.perf_counter()
        return ended - started, ended - kernel


def run_rvo2(starts: np.ndarray, steps: int, body: float = CIRCLE_BODY) -> tuple[np.ndarray, float]:
    """RVO2 (pyrvo) on the swap: positions (steps, N, 2) and seconds a step (the Python loop
    setting preferred velocities included)."""
    run = Rvo2Run(starts, -starts, CIRCLE_STEP, CIRCLE_AGENT, body, CIRCLE_SPEED)
    trajectory = np.empty((steps, len(starts), 2))
    elapsed = 0.0
    for step in range(steps):
        elapsed += run.step()[0]
        trajectory[step] = run.positions()
    return trajectory, elapsed / steps


def run_orca(starts: np.ndarray, steps: int, body: float = CIRCLE_BODY) -> tuple[np.ndarray, float]:
    """Our ORCA kernel on the swap with RVO2's example settings: positions (steps, N, 2) and
    seconds a step (neighbour grid, preferred velocities, kernel and integration)."""
    run = OrcaRun(starts, -starts, CIRCLE_STEP, CIRCLE_AGENT, body, CIRCLE_SPEED)
    trajectory = np.empty((steps, len(starts), 2))
    elapsed = 0.0
    for step in range(steps):
        elapsed += run.step()[0]
        trajectory[step] = run.position
    return trajectory, elapsed / steps


def interleaved(ours: OrcaRun, theirs: Rvo2Run, steps: int) -> tuple[np.ndarray, np.ndarray, dict[str, float]]:
    """Both runs stepped in turn, ``steps`` each: their positions (steps, N, 2), ours then
    RVO2's, and the medians of ms a step: ``ours_ms`` (what ``doStep`` does), ``ours_loop_ms``
    (with the preferred velocities), ``rvo2_ms`` (``doStep``), ``rvo2_loop_ms`` (with the
    Python loop setting preferred velocities), and ``ratio`` = rvo2_ms / ours_ms."""
    count = len(ours.position)
    our_path, their_path = np.empty((steps, count, 2)), np.empty((steps, count, 2))
    times: dict[str, list[float]] = {"ours_loop_ms": [], "ours_ms": [], "rvo2_loop_ms": [], "rvo2_ms": []}
    for step in range(steps):
        loop, kernel = ours.step()
        times["ours_loop_ms"].append(loop)
        times["ours_ms"].append(kernel)
        loop, kernel = theirs.step()
        times["rvo2_loop_ms"].append(loop)
        times["rvo2_ms"].append(kernel)
        our_path[step], their_path[step] = ours.position, theirs.positions()
    medians = {name: 1e3 * statistics.median(values) for name, values in times.items()}
    medians["ratio"] = medians["rvo2_ms"] / medians["ours_ms"]
    medians["ratio_loop"] = medians["rvo2_loop_ms"] / medians["ours_loop_ms"]
    return our_path, their_path, medians


def deepest_overlap(trajectory: np.ndarray, body: float) -> float:
    """The largest overlap (m) of two bodies of radius ``body`` over a trajectory (T, N, 2)."""
    deepest = 0.0
    for positions in trajectory:
        grid = positions[:, None, :] - positions[None, :, :]
        distances = np.hypot(grid[..., 0], grid[..., 1]) + np.eye(len(positions)) * 1.0e9
        deepest = max(deepest, 2.0 * body - float(distances.min()))
    return deepest


def arrival_steps(trajectory: np.ndarray, goals: np.ndarray, within: float = 1.0) -> np.ndarray:
    """Per agent, the first step at which it is within ``within`` m of its goal (-1: never)."""
    near = np.linalg.norm(trajectory - goals[None], axis=2) < within
    first = np.argmax(near, axis=0)
    return np.where(near.any(axis=0), first, -1)


def wall_clearance(trajectory: np.ndarray, segments: np.ndarray) -> float:
    """The smallest distance (m) of any position of a trajectory (T, N, 2) to any segment."""
    points = trajectory.reshape(-1, 2)
    a, b = segments[:, None, 0:2], segments[:, None, 2:4]
    edge = b - a
    along = np.clip(((points[None] - a) * edge).sum(axis=2) / (edge * edge).sum(axis=2), 0.0, 1.0)
    nearest = a + along[..., None] * edge
    return float(np.hypot(*(points[None] - nearest).transpose(2, 0, 1)).min())


#: Jitter (m) of the swap's starts: a perfectly symmetric swap can lock up in float64 (RVO2's
#: float32 rounding breaks the symmetry for it); both run the same jittered starts.
CIRCLE_JITTER = 1.0e-3


def _mean_arrival(arrival: np.ndarray, dt: float) -> float:
    return float(arrival[arrival >= 0].mean() * dt) if (arrival >= 0).any() else math.nan


def circle_comparison(steps: int = 3500) -> dict[str, float]:
    """RVO2's circle swap (starts jittered by a millimetre) by RVO2 and by our ORCA, stepped in
    turn (:func:`interleaved`): medians of ms a step, the ratios, the deepest overlaps (m:
    RVO2's 0.25 s steps let bodies overlap in the crowded middle) and the arrivals."""
    starts = circle_starts() + np.random.default_rng(0).uniform(-CIRCLE_JITTER, CIRCLE_JITTER, (CIRCLE_AGENTS, 2))
    run_orca(starts[:4], 2)  # compiled code loaded
    ours, theirs, result = interleaved(OrcaRun(starts, -starts, CIRCLE_STEP, CIRCLE_AGENT, CIRCLE_BODY, CIRCLE_SPEED),
                                       Rvo2Run(starts, -starts, CIRCLE_STEP, CIRCLE_AGENT, CIRCLE_BODY, CIRCLE_SPEED),
                                       steps)
    ours_arrival, their_arrival = arrival_steps(ours, -starts), arrival_steps(theirs, -starts)
    result.update({
        "rvo2_overlap_m": deepest_overlap(theirs[::5], CIRCLE_BODY), "ours_overlap_m": deepest_overlap(ours[::5], CIRCLE_BODY),
        "rvo2_arrived": int((their_arrival >= 0).sum()), "ours_arrived": int((ours_arrival >= 0).sum()),
        "rvo2_mean_arrival_s": _mean_arrival(their_arrival, CIRCLE_STEP),
        "ours_mean_arrival_s": _mean_arrival(ours_arrival, CIRCLE_STEP),
    })
    return result


# ------------------------------------------------------------------------------ ORCA among walls


@dataclass
class WallScene:
    """Agents walking to goals among walls: segments (N, 4; m), starts and goals (M, 2; m)."""

    segments: np.ndarray
    starts: np.ndarray
    goals: np.ndarray


def _free_places(rng: np.random.Generator, count: int, low: tuple[float, float], high: tuple[float, float],
                 segments: np.ndarray, taken: np.ndarray | None = None, gap: float = 0.1) -> np.ndarray:
    """``count`` random places in the box ``low``-``high`` (m) at least a body and ``gap`` from
    the walls and two bodies and ``gap`` from each other and from ``taken``."""
    places = [] if taken is None else [tuple(point) for point in taken]
    first = len(places)
    for _ in range(10_000 * count):
        if len(places) - first == count:
            break
        point = rng.uniform(low, high)
        if len(segments) and wall_clearance(point[None, None], segments) < WALL_BODY + gap:
            continue
        if places and np.hypot(*(np.array(places) - point).T).min() < 2.0 * WALL_BODY + gap:
            continue
        places.append(tuple(point))
    if len(places) - first < count:
        raise ValueError(f"no room for {count} agents")
    return np.array(places[first:])


def _polyline(*points: tuple[float, float]) -> list[tuple[float, float, float, float]]:
    return [(*a, *b) for a, b in zip(points, points[1:])]


def _boxes(rows: int, side: float, pitch: float) -> np.ndarray:
    """The four sides of ``rows`` x ``rows`` square boxes of ``side`` m, ``pitch`` m apart,
    centred on the origin."""
    segments = []
    for row in range(rows):
        for column in range(rows):
            x = (column - (rows - 1) / 2.0) * pitch - side / 2.0
            y = (row - (rows - 1) / 2.0) * pitch - side / 2.0
            segments += _polyline((x, y), (x + side, y), (x + side, y + side), (x, y + side), (x, y))
    return np.array(segments, dtype=np.float64)


def wall_scenes(seed: int = 0) -> dict[str, WallScene]:
    """The scenes of the comparisons with walls (every wall point a multiple of 1/16 m, so that
    RVO2's float32 holds it exactly):

    * ``corridor``: two walls 3 m apart and 20 m long, ten agents from each end walking through;
    * ``room with a door``: a 10 m room (one open polyline) with a 2 m door, 15 agents inside
      walking to places outside beyond the door;
    * ``convex box``: a 2 m box, 16 agents crossing from either side;
    * ``concave L``: the outline of an L (six segments), 16 agents walking into its inner corner
      and across;
    * ``loose segments``: 12 segments of 1 to 3 m at random and an X of two crossing ones, 24
      agents walking to random goals;
    * ``100 segments``: 25 boxes of 1 m (100 segments) 4 m apart, 60 agents from the four
      corners walking to the opposite ones.
    """
    rng = np.random.default_rng(seed)
    scenes = {}
    corridor = np.array(_polyline((-10.0, -1.5), (10.0, -1.5)) + _polyline((-10.0, 1.5), (10.0, 1.5)))
    left = _free_places(rng, 10, (-9.5, -1.0), (-2.0, 1.0), corridor)
    right = _free_places(rng, 10, (2.0, -1.0), (9.5, 1.0), corridor, taken=left)
    scenes["corridor"] = WallScene(corridor, np.vstack([left, right]),
                                   np.vstack([left + (17.0, 0.0), right - (17.0, 0.0)]))
    room = np.array(_polyline((5.0, -1.0), (5.0, -5.0), (-5.0, -5.0), (-5.0, 5.0), (5.0, 5.0), (5.0, 1.0)))
    inside = _free_places(rng, 15, (-4.5, -4.5), (4.5, 4.5), room)
    scenes["room with a door"] = WallScene(room, inside, np.column_stack([np.full(15, 12.0), rng.uniform(-6, 6, 15)]))
    box = np.array(_polyline((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0)))
    west = _free_places(rng, 8, (-8.0, -3.0), (-4.0, 3.0), box)
    east = _free_places(rng, 8, (4.0, -3.0), (8.0, 3.0), box, taken=west)
    scenes["convex box"] = WallScene(box, np.vstack([west, east]), np.vstack([-west, -east]))
    shape = np.array(_polyline((0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (1.0, 1.0), (1.0, 4.0), (0.0, 4.0), (0.0, 0.0)))
    north_east = _free_places(rng, 16, (2.0, 2.0), (8.0, 8.0), shape)
    scenes["concave L"] = WallScene(shape, north_east, np.column_stack([-north_east[:, 1] + 2.0, -north_east[:, 0] + 2.0]))
    starts_of_segments = np.round(rng.uniform(-8.0, 8.0, (12, 2)) * 16.0) / 16.0
    angles = rng.uniform(0.0, 2.0 * math.pi, 12)
    lengths = rng.uniform(1.0, 3.0, 12)
    ends = np.round((starts_of_segments + lengths[:, None] * np.column_stack([np.cos(angles), np.sin(angles)])) * 16.0) / 16.0
    loose = np.vstack([np.hstack([starts_of_segments, ends]), [[-6.0, 6.0, -2.0, 2.0], [-6.0, 2.0, -2.0, 6.0]]])
    scattered = _free_places(rng, 24, (-9.0, -9.0), (9.0, 9.0), loose)
    scenes["loose segments"] = WallScene(loose, scattered, _free_places(rng, 24, (-9.0, -9.0), (9.0, 9.0), loose))
    blocks = _boxes(5, 1.0, 4.0)
    corners = []
    for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        corners.append(_free_places(rng, 15, (sx * 14.0 - 2.5, sy * 14.0 - 2.5), (sx * 14.0 + 2.5, sy * 14.0 + 2.5),
                                    blocks, taken=np.vstack(corners) if corners else None))
    starts = np.vstack(corners)
    scenes["100 segments"] = WallScene(blocks, starts, -starts)
    return scenes


def obstacle_range(agent: dict[str, float] = WALL_AGENT, body: float = WALL_BODY, speed: float = WALL_SPEED) -> float:
    """RVO2's obstacle range (m): ``timeHorizonObst * maxSpeed + radius``."""
    return agent["time_horizon_obstacles"] * speed + body


def rvo2_obstacles(simulator: Any, obstacles: OrcaObstacles, range_m: float) -> OrcaObstacles:
    """RVO2's obstacles as it holds them after ``processObstacles``, given ``obstacles.loops()``:
    its k-D tree splits the edges that cross the lines it splits along, and each piece's new
    vertex is convex; the given vertices keep their convexity (RVO2's rule, as ours)."""
    given = np.concatenate(obstacles.loop_vertices()) if len(obstacles) else np.zeros(0, dtype=np.int64)
    count = simulator.get_num_obstacle_vertices()
    points = np.array([simulator.get_obstacle_vertex(i).to_tuple() for i in range(count)]).reshape(-1, 2)
    following = np.array([simulator.get_next_obstacle_vertex(i) for i in range(count)], dtype=np.int64)
    convex = np.ones(count, dtype=bool)
    convex[: len(given)] = obstacles.convex[given] != 0
    return OrcaObstacles(points, following, convex, range_m)


#: RVO2's epsilon of parallel lines, as its linear programs compare with it.
RVO2_EPSILON = 1.0e-5


def rvo2_linear_programs(lines: np.ndarray, obstacle_lines: int, max_speed: float, preferred: np.ndarray,
                         dtype: type = np.float32) -> np.ndarray:
    """RVO2's ``linearProgram2`` and, where it fails, ``linearProgram3`` on ``lines`` (k, 4:
    point, direction; the first ``obstacle_lines`` the walls'), transcribed with NumPy scalars
    of ``dtype``: ``np.float32`` computes as RVO2 does, ``np.float64`` as our kernel does. The
    velocity (m/s) nearest ``preferred`` within ``max_speed``."""
    real = dtype
    epsilon = real(RVO2_EPSILON)
    rows = [(np.array(row[0:2], dtype=real), np.array(row[2:4], dtype=real)) for row in lines]

    def det(a: np.ndarray, b: np.ndarray) -> Any:
        return real(a[0] * b[1]) - real(a[1] * b[0])

    def dot(a: np.ndarray, b: np.ndarray) -> Any:  # as RVO2's Vector2 operator*, each product rounded
        return real(a[0] * b[0]) + real(a[1] * b[1])

    def program1(rows: list, number: int, radius: Any, optimum: np.ndarray, direction_only: bool) -> np.ndarray | None:
        point, direction = rows[number]
        along = dot(point, direction)
        discriminant = real(along * along + radius * radius) - dot(point, point)
        if discriminant < 0:
            return None
        root = real(np.sqrt(discriminant))
        low, high = real(-along - root), real(-along + root)
        for other_point, other_direction in rows[:number]:
            denominator = det(direction, other_direction)
            numerator = det(other_direction, point - other_point)
            if abs(denominator) <= epsilon:
                if numerator < 0:
                    return None
                continue
            t = real(numerator / denominator)
            if denominator >= 0:
                high = min(high, t)
            else:
                low = max(low, t)
            if low > high:
                return None
        if direction_only:
            return point + (high if dot(optimum, direction) > 0 else low) * direction
        t = min(max(dot(direction, optimum - point), low), high)
        return point + t * direction

    def program2(rows: list, radius: Any, optimum: np.ndarray, direction_only: bool) -> tuple[int, np.ndarray]:
        if direction_only:
            result = optimum * radius
        elif dot(optimum, optimum) > radius * radius:
            result = optimum * (real(1) / real(np.sqrt(dot(optimum, optimum)))) * radius  # RVO2's normalize
        else:
            result = optimum.copy()
        for number, (point, direction) in enumerate(rows):
            if det(direction, point - result) > 0:
                found = program1(rows, number, radius, optimum, direction_only)
                if found is None:
                    return number, result
                result = found
        return len(rows), result

    radius = real(max_speed)
    failed, result = program2(rows, radius, np.array(preferred, dtype=real), False)
    distance = real(0)
    for number in range(failed, len(rows)):
        point, direction = rows[number]
        if det(direction, point - result) <= distance:
            continue
        projected = list(rows[:obstacle_lines])
        for other_point, other_direction in rows[obstacle_lines:number]:
            determinant = det(direction, other_direction)
            if abs(determinant) <= epsilon:
                if dot(direction, other_direction) > 0:
                    continue
                crossing = real(0.5) * (point + other_point)
            else:
                crossing = point + real(det(other_direction, point - other_point) / determinant) * direction
            between = other_direction - direction
            projected.append((crossing, between * (real(1) / real(np.sqrt(dot(between, between))))))
        count, found = program2(projected, radius, np.array([-direction[1], direction[0]], dtype=real), True)
        if count == len(projected):
            result = found
        distance = det(direction, point - result)
    return np.asarray(result, dtype=np.float64)


#: Bodies nearer than this (m) to touching (another body or a wall) make RVO2's float32 lines
#: lose their digits: the leg length sqrt(d^2 - r^2) of a gap g is about sqrt(2 r g), and its
#: float32 rounding error about 6e-8 d^2 / sqrt(2 r g): 4e-6 at a gap of 0.1 mm, 1e-3 at 10 nm.
CONTACT_GAP = 1.0e-4
#: Relative size of the perturbations of RVO2's lines that measure how far rounding them moves
#: the linear programs' velocity (float32's unit roundoff, 2^-24, twice), and their count.
LINE_ROUNDING = 2.0 ** -23
PERTURBATIONS = 20


@dataclass
class WallComparison:
    """Our ORCA beside RVO2's on a scene with walls, step by step from RVO2's state
    (:func:`rvo2_wall_comparison`); arrays (steps, agents), NaN where not checked.

    Attributes:
        differences: |our velocity - RVO2's| (m/s, the larger component).
        line_differences: the largest difference of one of the agent's ORCA lines from RVO2's
            (a point's coordinate in m/s, or a unit direction's), -1 where the counts differ.
        touching: the agent is within :data:`CONTACT_GAP` of touching a body or a wall.
        float32_error: |RVO2's linear programs transcribed in float32
            (:func:`rvo2_linear_programs`) on RVO2's lines - RVO2's velocity|.
        float64_error: |the same in float64 - RVO2's velocity|: how far our precision alone
            moves RVO2's velocity on RVO2's own lines.
        kernel_error: |the transcription in float64 on our lines - our velocity|: our kernel's
            linear programs are RVO2's (and the step's last check did not act).
        line_sensitivity: where the velocities differ, the largest change of the float64
            velocity on RVO2's lines when they are perturbed at random by :data:`LINE_ROUNDING` (relative) :data:`PERTURBATIONS`
            times: how far rounding the lines moves it.
        rvo2_vertices, our_vertices: obstacle vertices RVO2 holds (its k-D tree splits edges)
            and ours.
        rvo2_clearance, our_clearance: the smallest distance (m) of a body's centre to a wall,
            RVO2's along its run and ours along a run of our own.
    """

    differences: np.ndarray
    line_differences: np.ndarray
    touching: np.ndarray
    float32_error: np.ndarray
    float64_error: np.ndarray
    kernel_error: np.ndarray
    line_sensitivity: np.ndarray
    rvo2_vertices: int
    our_vertices: int
    rvo2_clearance: float
    our_clearance: float


def _rvo2_lines(simulator: Any, agent: int) -> np.ndarray:
    """RVO2's ORCA lines of an agent after a step: (k, 4) point, direction."""
    rows = []
    for k in range(simulator.get_agent_num_orca_lines(agent)):
        direction, point = simulator.get_agent_orca_line(agent, k)
        rows.append((*point, *direction))
    return np.array(rows, dtype=np.float64).reshape(-1, 4)


def _line_sensitivity(lines: np.ndarray, walls_lines: int, preferred: np.ndarray, rng: np.random.Generator) -> float:
    """How far perturbing ``lines`` by rounding-sized amounts moves the float64 velocity (m/s)."""
    base = rvo2_linear_programs(lines, walls_lines, WALL_SPEED, preferred, np.float64)
    largest = 0.0
    for _ in range(PERTURBATIONS):
        shaken = lines * (1.0 + LINE_ROUNDING * rng.uniform(-1.0, 1.0, lines.shape))
        largest = max(largest, float(np.abs(rvo2_linear_programs(shaken, walls_lines, WALL_SPEED, preferred,
                                                                 np.float64) - base).max()))
    return largest


def rvo2_wall_comparison(scene: WallScene, steps: int, tolerance: float = 1.0e-5, sample: int = 10,
                         split: bool = True, polygons: list[np.ndarray] | None = None) -> WallComparison:
    """Our ORCA beside RVO2's (:class:`WallComparison`), step by step from RVO2's state: at each
    step the agents' positions and velocities (RVO2's float32) and preferred velocities (rounded
    to float32, as RVO2 takes them) go to our kernel, and RVO2 takes its step. The linear
    programs are transcribed where the velocities differ by more than ``tolerance`` (m/s) and
    on every ``sample``-th step, the lines perturbed where they differ.

    RVO2 gets our obstacles' loops (:meth:`OrcaObstacles.loops`), or ``polygons`` (RVO2's own
    input: counterclockwise polygons, two-vertex segments). ``split`` (without ``polygons``):
    our kernel takes RVO2's obstacles as RVO2 holds them (:func:`rvo2_obstacles`, its k-D tree's
    split edges included), else ours as built (:meth:`OrcaObstacles.from_segments`)."""
    range_m = obstacle_range()
    walls = OrcaWalls.of_segments(scene.segments, range_m)
    our_vertices = len(walls.obstacles)
    theirs = Rvo2Run(scene.starts, scene.goals, WALL_STEP, WALL_AGENT, WALL_BODY, WALL_SPEED,
                     walls.obstacles.loops() if polygons is None else polygons)
    if split and polygons is None:
        walls = OrcaWalls(rvo2_obstacles(theirs.simulator, walls.obstacles, range_m), walls.index)
    parameters = orca_parameters(WALL_AGENT).array()
    count = len(scene.starts)
    radii, speeds = np.full(count, WALL_BODY), np.full(count, WALL_SPEED)
    copies, offsets = np.zeros(count, dtype=np.int64), np.zeros((count, 2))
    shape = (steps, count)
    differences, line_differences = np.zeros(shape), np.zeros(shape)
    touching = np.zeros(shape, dtype=bool)
    checked = {name: np.full(shape, np.nan) for name in ("float32", "float64", "kernel", "sensitivity")}
    path = np.empty((steps, count, 2))
    rng = np.random.default_rng(0)
    stamp = 1
    for step in range(steps):
        position, velocity = theirs.positions(), theirs.velocities()
        preferred = preferred_velocities(position, scene.goals).astype(np.float32).astype(np.float64)
        for i in range(count):
            theirs.simulator.set_agent_pref_velocity(i, (float(preferred[i, 0]), float(preferred[i, 1])))
        grid = build_grid(position, count, neighbor_cell(float(parameters[0])))
        agents = (position, velocity, radii, copies, offsets)
        ours = [orca_lines(i, parameters, WALL_STEP, count, agents, speeds, grid, walls.obstacles.arrays())
                for i in range(count)]
        new, stamp = orca_velocities(parameters, WALL_STEP, position, velocity, radii, preferred, speeds, walls, stamp)
        theirs.simulator.do_step()
        their_new = theirs.velocities()
        path[step] = theirs.positions()
        differences[step] = np.abs(new - their_new).max(axis=1)
        gaps = np.hypot(*(position[:, None] - position[None]).transpose(2, 0, 1)) + np.eye(count) * 1.0e9
        for i in range(count):
            clearance = wall_clearance(position[i][None, None], scene.segments) - WALL_BODY
            touching[step, i] = min(clearance, gaps[i].min() - 2.0 * WALL_BODY) < CONTACT_GAP
            lines, (our_lines, our_walls_lines) = _rvo2_lines(theirs.simulator, i), ours[i]
            line_differences[step, i] = (np.abs(our_lines - lines).max(initial=0.0) if our_lines.shape == lines.shape
                                         else -1.0)
            if differences[step, i] <= tolerance and step % sample:
                continue
            walls_lines = len(lines) - theirs.simulator.get_agent_num_agent_neighbors(i)
            for name, dtype in (("float32", np.float32), ("float64", np.float64)):
                solved = rvo2_linear_programs(lines, walls_lines, WALL_SPEED, preferred[i], dtype)
                checked[name][step, i] = np.abs(solved - their_new[i]).max()
            solved = rvo2_linear_programs(our_lines, our_walls_lines, WALL_SPEED, preferred[i], np.float64)
            checked["kernel"][step, i] = np.abs(solved - new[i]).max()
            if differences[step, i] > tolerance:
                checked["sensitivity"][step, i] = _line_sensitivity(lines, walls_lines, preferred[i], rng)
    return WallComparison(differences, line_differences, touching, checked["float32"], checked["float64"],
                          checked["kernel"], checked["sensitivity"], theirs.simulator.get_num_obstacle_vertices(),
                          our_vertices, wall_clearance(path, scene.segments),
                          wall_clearance(orca_among_walls(scene, steps), scene.segments))


def orca_among_walls(scene: WallScene, steps: int) -> np.ndarray:
    """Our ORCA alone on a scene with walls: positions (steps, N, 2)."""
    run = OrcaRun(scene.starts, scene.goals, WALL_STEP, WALL_AGENT, WALL_BODY, WALL_SPEED,
                  OrcaWalls.of_segments(scene.segments, obstacle_range()))
    path = np.empty((steps, len(scene.starts), 2))
    for step in range(steps):
        run.step()
        path[step] = run.position
    return path


def wall_speed_scene(agents: int = WALL_SPEED_AGENTS, seed: int = 1) -> WallScene:
    """``agents`` agents in four groups at the corners of 25 boxes of 1 m, 4 m apart (100 wall
    segments), each walking to the opposite corner (RVO2's Blocks example, larger)."""
    rng = np.random.default_rng(seed)
    blocks = _boxes(5, 1.0, 4.0)
    corners: list[np.ndarray] = []
    share = agents // 4
    for index, (sx, sy) in enumerate(((-1, -1), (1, -1), (1, 1), (-1, 1))):
        size = share if index < 3 else agents - 3 * share
        corners.append(_free_places(rng, size, (sx * 16.0 - 6.0, sy * 16.0 - 6.0), (sx * 16.0 + 6.0, sy * 16.0 + 6.0),
                                    blocks, taken=np.vstack(corners) if corners else None))
    starts = np.vstack(corners)
    return WallScene(blocks, starts, -starts)


def wall_comparison(steps: int = WALL_SPEED_STEPS) -> dict[str, float]:
    """:func:`wall_speed_scene` by RVO2 and by our ORCA, stepped in turn (:func:`interleaved`):
    medians of ms a step and the ratios, the deepest overlaps (m), the smallest wall clearances
    (m; a body's radius is 0.5 m) and the arrivals."""
    scene = wall_speed_scene()
    walls = OrcaWalls.of_segments(scene.segments, obstacle_range())
    OrcaRun(scene.starts[:4], scene.goals[:4], WALL_STEP, WALL_AGENT, WALL_BODY, WALL_SPEED, walls).step()
    ours, theirs, result = interleaved(
        OrcaRun(scene.starts, scene.goals, WALL_STEP, WALL_AGENT, WALL_BODY, WALL_SPEED, walls),
        Rvo2Run(scene.starts, scene.goals, WALL_STEP, WALL_AGENT, WALL_BODY, WALL_SPEED, walls.obstacles.loops()),
        steps,
    )
    ours_arrival, their_arrival = arrival_steps(ours, scene.goals), arrival_steps(theirs, scene.goals)
    result.update({
        "segments": len(scene.segments), "agents": len(scene.starts),
        "rvo2_overlap_m": deepest_overlap(theirs[::5], WALL_BODY), "ours_overlap_m": deepest_overlap(ours[::5], WALL_BODY),
        "rvo2_clearance_m": wall_clearance(theirs[::5], scene.segments),
        "ours_clearance_m": wall_clearance(ours[::5], scene.segments),
        "rvo2_arrived": int((their_arrival >= 0).sum()), "ours_arrived": int((ours_arrival >= 0).sum()),
    })
    return result


if __name__ == "__main__":
    print("ORCA circle swap, 250 agents:", circle_comparison())
    print("ORCA among 100 wall segments, 250 agents:", wall_comparison())
