"""The social force with groups and walls beside independent implementations.

* Groups against pysocialforce 1.1.2, whose group forces (``GroupRepulsiveForce``,
  ``GroupGazeForceAlt``, ``GroupCoherenceForceAlt``: pedsim_ros's) ours follow: trajectories
  over many steps. pysocialforce's coherence measures the distance to the group's centre as
  always 0 (``test_social_force.py`` shows it), so it runs here without it, and with pedsim_ros's
  softened coherence with the distance measured (:class:`bench.social_force_oracle._SoftenedCoherence`).
* Walls against a transcription of libpedsim's ``Tagent::obstacleForce`` (the nearest point of
  the nearest obstacle; pysocialforce's own sums points sampled along each line, which ours does
  not follow), added to pysocialforce's forces: the force at single states, and trajectories
  along walls. Where the nearest wall lies beyond what the exact query looks at (about a metre
  from the body's centre), our model reads the nearest-wall map: the force is then pedsim's of a
  wall point at most a map cell's diagonal farther than the nearest, which the last test bounds.

Our kernel is called through :func:`bench.social_force_oracle.social_force_velocities` only.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from bench.orca_oracle import wall_clearance
from bench.social_force_oracle import (
    PYSOCIALFORCE_RADIUS, pedsim_obstacle_force, pysocialforce_parameters, run_pysocialforce, run_social_force,
    social_force_velocities, walking_scene,
)
from sim_server.core.crowd.walls import NEAREST_CELL, WallIndex
from sim_server.core.format.crowd_file import SocialForceParameters

#: Trajectories (m, m/s) agree within this: the same formulas in another order of operations.
TRAJECTORY_TOLERANCE = 1e-9
#: pysocialforce's obstacle force parameters (its default.toml), which libpedsim's force takes.
OBSTACLE_FACTOR, OBSTACLE_SIGMA = 10.0, 0.2
#: A room with a square pillar and a slanted wall (x1, y1, x2, y2; m).
ROOM = np.array([
    [0.0, 0.0, 12.0, 0.0], [12.0, 0.0, 12.0, 8.0], [12.0, 8.0, 0.0, 8.0], [0.0, 8.0, 0.0, 0.0],
    [4.0, 3.0, 6.0, 3.0], [6.0, 3.0, 6.0, 5.0], [6.0, 5.0, 4.0, 5.0], [4.0, 5.0, 4.0, 3.0],
    [8.0, 1.0, 11.0, 6.5],
])
GROUPS = [[0, 1, 2], [3, 4], [5, 6, 7, 8], [12, 20]]


def _corridor_scene(half_width: float, count: int = 20, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """People walking both ways along a corridor of two 40 m walls ``2 half_width`` apart: their
    pysocialforce states and the walls."""
    rng = np.random.default_rng(seed)
    state = np.zeros((count, 6))
    half = count // 2
    state[:half, 0], state[half:, 0] = rng.uniform(-8.0, -2.0, half), rng.uniform(2.0, 8.0, count - half)
    state[:, 1] = rng.uniform(-0.3, 0.3, count)
    state[:half, 4], state[half:, 4] = 15.0, -15.0
    state[:, 5] = rng.uniform(-0.3, 0.3, count)
    offset = state[:, 4:6] - state[:, 0:2]
    state[:, 2:4] = offset / np.linalg.norm(offset, axis=1)[:, None] * rng.uniform(0.5, 1.0, (count, 1))
    walls = np.array([[-20.0, -half_width, 20.0, -half_width], [-20.0, half_width, 20.0, half_width]])
    return state, walls


def _wall_forces(points: np.ndarray, dt: float, cap: float) -> np.ndarray:
    """Our wall force (m/s^2) on bodies at rest at ``points`` in :data:`ROOM`: every other
    force off, one step of ``dt`` s with the speed capped at ``cap`` m/s."""
    count = len(points)
    parameters = replace(SocialForceParameters(), desired_factor=0.0, social_factor=0.0, coherence_factor=0.0,
                         gaze_factor=0.0, group_repulsion_factor=0.0, stop_distance=0.0, max_speed_multiplier=cap,
                         obstacle_threshold=1.0e3)
    out, _ = social_force_velocities(parameters, dt, points.copy(), np.zeros((count, 2)),
                                     np.full(count, PYSOCIALFORCE_RADIUS), np.tile([1.0, 0.0], (count, 1)),
                                     np.full(count, 10.0), np.ones(count), np.full(count, -1, dtype=np.int64),
                                     WallIndex(ROOM), 1)
    return out / dt


def _points_in_the_room(count: int, seed: int, clearance: float) -> np.ndarray:
    """Random places in :data:`ROOM` at least ``clearance`` m from every wall."""
    points = np.random.default_rng(seed).uniform(0.2, 11.8, (4 * count, 2))
    far = np.array([wall_clearance(point[None, None], ROOM) for point in points]) >= clearance
    return points[far][:count]


def test_groups_walk_as_in_pysocialforce() -> None:
    # Repulsion between members nearer than 0.55 m and the gaze force, over 100 steps.
    state = walking_scene(30, 8.0, seed=6)
    theirs, _ = run_pysocialforce(state, GROUPS, 0.05, 100, coherence="off")
    ours, _ = run_social_force(state, GROUPS, 0.05, 100, pysocialforce_parameters(coherence_factor=0.0))
    assert np.abs(theirs - ours).max() < TRAJECTORY_TOLERANCE
    moved = np.linalg.norm(ours[-1, :, 0:2] - ours[0, :, 0:2], axis=1)
    assert moved.min() > 0.5  # they walked


def test_groups_cohere_as_pedsim_ros_s_softened_force() -> None:
    state = walking_scene(30, 8.0, seed=7)
    theirs, _ = run_pysocialforce(state, GROUPS, 0.05, 100, coherence="pedsim")
    ours, _ = run_social_force(state, GROUPS, 0.05, 100, pysocialforce_parameters())
    assert np.abs(theirs - ours).max() < TRAJECTORY_TOLERANCE
    # and coherence matters here: without it both walk elsewhere
    apart, _ = run_social_force(state, GROUPS, 0.05, 100, pysocialforce_parameters(coherence_factor=0.0))
    assert np.abs(apart - ours).max() > 0.01


def test_the_wall_force_is_libpedsim_s_nearest_obstacle_force() -> None:
    # A step of 1 ms with a speed cap of 10 km/s makes the kernel look for the nearest wall
    # exactly within 10 m: every place of the room.
    points = _points_in_the_room(300, seed=1, clearance=PYSOCIALFORCE_RADIUS + 0.01)
    ours = _wall_forces(points, 1.0e-3, 1.0e4)
    theirs = OBSTACLE_FACTOR * pedsim_obstacle_force(points, ROOM, PYSOCIALFORCE_RADIUS, OBSTACLE_SIGMA)
    assert np.abs(ours - theirs).max() < 1e-9


@pytest.mark.parametrize("half_width", [0.8, 0.85])
def test_walking_along_walls_equals_pysocialforce_with_libpedsim_s_wall_force(half_width: float) -> None:
    # A corridor narrow enough that the nearest wall is always within the exact query: people
    # walking both ways push past each other between the walls for 10 s.
    state, walls = _corridor_scene(half_width)
    theirs, _ = run_pysocialforce(state, None, 0.05, 200, walls=walls)
    ours, _ = run_social_force(state, None, 0.05, 200, pysocialforce_parameters(), walls=walls)
    assert np.abs(theirs - ours).max() < TRAJECTORY_TOLERANCE
    assert half_width - np.abs(ours[:, :, 1]).max() < 0.15 + PYSOCIALFORCE_RADIUS  # the walls did push


def test_a_group_in_a_corridor_equals_pysocialforce_with_both() -> None:
    state, walls = _corridor_scene(0.8, count=12, seed=9)
    groups = [[0, 1, 2], [6, 7]]
    theirs, _ = run_pysocialforce(state, groups, 0.05, 200, walls=walls, coherence="pedsim")
    ours, _ = run_social_force(state, groups, 0.05, 200, pysocialforce_parameters(), walls=walls)
    assert np.abs(theirs - ours).max() < TRAJECTORY_TOLERANCE


def test_farther_walls_push_from_a_wall_point_at_most_a_map_cell_farther_than_the_nearest() -> None:
    # With pedsim's step and speed cap, walls beyond about a metre come from the nearest-wall
    # map: the force is libpedsim's formula for a point on a wall whose distance exceeds the
    # nearest wall's by at most a map cell's diagonal.
    points = _points_in_the_room(300, seed=2, clearance=1.2)
    ours = _wall_forces(points, 0.1, 1.3)
    amount = np.linalg.norm(ours, axis=1)
    distance = PYSOCIALFORCE_RADIUS - OBSTACLE_SIGMA * np.log(amount / OBSTACLE_FACTOR)  # what pedsim's formula gives
    nearest = np.array([wall_clearance(point[None, None], ROOM) for point in points])
    assert (distance >= nearest - 1e-9).all()
    assert (distance <= nearest + math.sqrt(2.0) * NEAREST_CELL).all()
    wall_points = points - distance[:, None] * ours / amount[:, None]
    assert max(wall_clearance(point[None, None], ROOM) for point in wall_points) < 1e-9
    # and where the map is exact (its point is the nearest), pedsim's force itself
    theirs = OBSTACLE_FACTOR * pedsim_obstacle_force(points, ROOM, PYSOCIALFORCE_RADIUS, OBSTACLE_SIGMA)
    exact = np.abs(distance - nearest) < 1e-9
    assert exact.any() and np.abs(ours[exact] - theirs[exact]).max() < 1e-6
