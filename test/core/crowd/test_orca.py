"""ORCA against RVO2 (its C++ library through the pyrvo binding), an independent implementation."""

from __future__ import annotations

import math

import numpy as np

from bench.crowd_oracles import arrival_steps, circle_starts, deepest_overlap, run_orca, run_rvo2
from sim_server.core.crowd.neighbors import build_grid, nearest_within
from sim_server.core.crowd.orca import orca_step
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.format.crowd_file import OrcaParameters


def _step(parameters: OrcaParameters, dt: float, position: np.ndarray, velocity: np.ndarray, radii: np.ndarray,
          preferred: np.ndarray, speeds: np.ndarray, count: int, walls: np.ndarray | None = None, stamp: int = 1):
    out = np.zeros((count, 2))
    grid = build_grid(position, len(position), max(parameters.neighbor_distance, 0.5))
    index = WallIndex(np.zeros((0, 4)) if walls is None else walls)
    orca_step(parameters.array(), dt, count, position, velocity, radii, np.zeros(len(position), dtype=np.int64),
              np.zeros((count, 2)), preferred, speeds, len(position), *grid, *index.arrays(), stamp, out)
    return out


def test_velocities_follow_rvo2_s_step_by_step() -> None:
    import pyrvo

    rng = np.random.default_rng(3)
    count, dt = 40, 0.25
    starts, goals = rng.uniform(-8, 8, (count, 2)), rng.uniform(-8, 8, (count, 2))
    simulator = pyrvo.RVOSimulator(dt, 15.0, 10, 10.0, 10.0, 0.5, 2.0)
    for x, y in starts:
        simulator.add_agent((float(x), float(y)))
    parameters = OrcaParameters(neighbor_distance=15.0, max_neighbors=10, time_horizon=10.0, time_horizon_obstacles=10.0)
    position, velocity = starts.copy(), np.zeros((count, 2))
    for _ in range(15):
        offset = goals - position
        norm = np.linalg.norm(offset, axis=1)
        preferred = np.where(norm[:, None] > 1.0, offset / norm[:, None], offset)
        for i in range(count):
            here = simulator.get_agent_position(i)
            gx, gy = goals[i, 0] - here.x, goals[i, 1] - here.y
            length = math.hypot(gx, gy)
            simulator.set_agent_pref_velocity(i, (gx / length, gy / length) if length > 1.0 else (gx, gy))
        simulator.do_step()
        velocity = _step(parameters, dt, position, velocity, np.full(count, 0.5), preferred, np.full(count, 2.0), count)
        position = position + velocity * dt
        theirs = np.array([(simulator.get_agent_velocity(i).x, simulator.get_agent_velocity(i).y) for i in range(count)])
        # RVO2 computes in float32
        assert np.abs(theirs - velocity).max() < 1e-4


def test_circle_swaps_overlap_no_more_than_in_rvo2_and_take_as_long() -> None:
    # RVO2's circle example, smaller, the starts jittered (a perfectly symmetric swap can lock
    # up in both). Near the centre RVO2 itself lets bodies overlap (its steps are 0.25 s).
    rng = np.random.default_rng(0)
    for count, radius, body in ((20, 15.0, 0.5), (30, 20.0, 0.3), (40, 25.0, 0.5)):
        starts = circle_starts(count, radius) + rng.uniform(-0.5, 0.5, (count, 2))
        ours, _ = run_orca(starts, 800, body=body)
        theirs, _ = run_rvo2(starts, 800, body=body)
        assert deepest_overlap(ours, body) <= deepest_overlap(theirs, body) + 0.01
        our_arrival, their_arrival = arrival_steps(ours, -starts), arrival_steps(theirs, -starts)
        assert (our_arrival >= 0).all() and (their_arrival >= 0).all()
        assert abs(our_arrival.mean() - their_arrival.mean()) < 0.1 * their_arrival.mean()


def test_robots_are_avoided_without_their_help() -> None:
    # An agent walking at a standing robot: it takes the whole avoidance on itself.
    parameters = OrcaParameters()
    position = np.array([[0.0, 0.0], [3.0, 0.05]])  # agent, robot
    velocity = np.array([[1.0, 0.0], [0.0, 0.0]])
    radii = np.array([0.3, 0.4])
    for _ in range(100):
        new = _step(parameters, 0.1, position, velocity, radii, np.array([[1.0, 0.0]]), np.array([1.0]), 1)
        velocity[0] = new[0]
        position[0] += new[0] * 0.1
        assert np.linalg.norm(position[0] - position[1]) >= 0.7 - 1e-6
    assert position[0, 0] > 4.0  # and passed it


def test_walls_are_not_entered() -> None:
    parameters = OrcaParameters()
    wall = np.array([[2.0, -5.0, 2.0, 5.0]])
    position, velocity = np.array([[0.0, 0.0]]), np.zeros((1, 2))
    stamp = 1
    for _ in range(200):
        out = np.zeros((1, 2))
        grid = build_grid(position, 1, 10.0)
        index = WallIndex(wall)
        stamp = orca_step(parameters.array(), 0.1, 1, position, velocity, np.array([0.3]), np.zeros(1, dtype=np.int64),
                          np.zeros((1, 2)), np.array([[1.5, 0.0]]), np.array([1.5]), 1, *grid, *index.arrays(), stamp, out)
        velocity = out.copy()
        position = position + velocity * 0.1
        assert 2.0 - position[0, 0] >= 0.3 - 1e-9


def test_neighbours_are_the_nearest_within_range_nearest_first() -> None:
    rng = np.random.default_rng(1)
    points = rng.uniform(0, 20, (300, 2))
    grid = build_grid(points, len(points), 3.0)
    index, distance_sq = np.empty(10, dtype=np.int64), np.empty(10)
    for i in range(0, 300, 37):
        found = nearest_within(points, points[i, 0], points[i, 1], i, 3.0, *grid, 10, index, distance_sq,
                               np.zeros(len(points), dtype=np.int64), 0)
        d = np.sum((points - points[i]) ** 2, axis=1)
        d[i] = np.inf
        expected = [j for j in np.argsort(d, kind="stable") if d[j] <= 9.0][:10]
        assert list(index[:found]) == expected
