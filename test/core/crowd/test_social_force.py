"""The social force model against pysocialforce 1.1.2, an independent implementation of it.

pysocialforce computes every pair with its own formulas (NumPy); ours is the compiled kernel.
Where pysocialforce and pedsim differ (theta unwrapped; its group coherence's norm), the tests
show the difference rather than hide it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numba
import numpy as np
import pytest

from bench.orca_oracle import arrival_steps
from bench.social_force_oracle import (
    crowd_step, import_pysocialforce, pysocialforce_parameters, run_pysocialforce, run_social_force, walking_scene,
)
from sim_server.core import compiled
from sim_server.core.crowd import social_force
from sim_server.core.crowd.social_force import (
    NO_EXTRA_FORCES, PARALLEL_MIN_AGENTS, angle_of, neighbour_grids, no_robots, social_force_step,
)
from sim_server.core.crowd.walls import WallIndex
from sim_server.core.format.crowd_file import SocialForceParameters


def _forces(state: np.ndarray, parameters: SocialForceParameters, groups: list[list[int]] | None = None,
            walls: np.ndarray | None = None, dt: float = 1.0, radius: float = 0.35) -> np.ndarray:
    """One kernel step from a pysocialforce state with dt = 1: v' - v is the force (uncapped)."""
    count = len(state)
    position, velocity = state[:, 0:2].copy(), state[:, 2:4].copy()
    offset = state[:, 4:6] - position
    distance = np.linalg.norm(offset, axis=1)
    direction = offset / np.where(distance > 0, distance, 1)[:, None]
    group_ids = np.full(count, -1, dtype=np.int64)
    for index, members in enumerate(groups or []):
        group_ids[members] = index
    out = np.zeros((count, 2))
    grid = neighbour_grids(position, count, count, parameters.neighbor_range)
    index = WallIndex(np.zeros((0, 4)) if walls is None else walls)
    agents = (position, velocity, np.full(count, radius), np.zeros(count, dtype=np.int64), np.zeros((count, 2)))
    social_force_step(parameters.array(), dt, count, agents, (direction, distance, np.full(count, 1.0e3)),
                      (group_ids, len(groups or [])), grid, index.arrays(), 1, index.nearest_map(), no_robots(),
                      NO_EXTRA_FORCES, out)
    return (out - velocity) / dt


def test_trajectories_equal_pysocialforce_s_with_its_settings() -> None:
    state = walking_scene(30, 10.0, seed=1)
    theirs, _ = run_pysocialforce(state, None, 0.1, 100)
    ours, _ = run_social_force(state, None, 0.1, 100, pysocialforce_parameters())
    assert theirs.shape == ours.shape
    assert np.abs(theirs - ours).max() < 1e-9


def test_a_crowd_whose_pairs_go_in_parts_equals_pysocialforce_s_too() -> None:
    state = walking_scene(PARALLEL_MIN_AGENTS + 64, 18.0, seed=11)
    theirs, _ = run_pysocialforce(state, None, 0.05, 10)
    ours, _ = run_social_force(state, None, 0.05, 10, pysocialforce_parameters())
    assert np.abs(theirs - ours).max() < 1e-9


def test_a_large_crowd_s_forces_are_the_same_on_one_thread_or_several(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crowd of PARALLEL_MIN_AGENTS or more has its pairs computed in parts: the velocities are
    the same, to the bit, on numba's threads, on one thread, and while another parallel loop runs;
    and within rounding of one run over every row."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS): no parallel loop to compare with")
    count = 2 * PARALLEL_MIN_AGENTS
    monkeypatch.setattr(social_force.PAIR_THREADS, "parallel", lambda: True)  # whatever was faster lately
    threaded = crowd_step(count, seed=4)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        serial = crowd_step(count, seed=4)
    finally:
        numba.set_num_threads(threads)
    with compiled.parallel_turn(True) as taken:
        assert taken
        while_busy = crowd_step(count, seed=4)
    assert np.array_equal(threaded, serial) and np.array_equal(threaded, while_busy)
    monkeypatch.setattr(social_force, "PARALLEL_MIN_AGENTS", count + 1)
    one_run = crowd_step(count, seed=4)
    assert not np.array_equal(one_run, threaded)  # rounding differs: the sums run in another order ...
    assert np.allclose(one_run, threaded, rtol=0.0, atol=1e-12)  # ... by rounding only


def test_a_dense_scene_equals_pysocialforce_s_too() -> None:
    state = walking_scene(100, 8.0, seed=5)
    theirs, _ = run_pysocialforce(state, None, 0.05, 40)
    ours, _ = run_social_force(state, None, 0.05, 40, pysocialforce_parameters())
    assert np.abs(theirs - ours).max() < 1e-9


def test_group_repulsion_and_gaze_equal_pysocialforce_s() -> None:
    pysocialforce = import_pysocialforce()
    state = walking_scene(6, 3.0, seed=3)
    groups = [[0, 1, 2], [3, 4]]
    simulator = pysocialforce.Simulator(state.copy(), groups=groups, obstacles=None)
    forces = {type(force).__name__: force.get_force() for force in simulator.forces}
    nothing = dict(desired_factor=0.0, social_factor=0.0, coherence_factor=0.0, gaze_factor=0.0, group_repulsion_factor=0.0)
    base = replace(pysocialforce_parameters(), max_speed_multiplier=100.0, stop_distance=0.0, **nothing)
    repulsion = _forces(state, replace(base, group_repulsion_factor=1.0), groups)
    gaze = _forces(state, replace(base, gaze_factor=1.0), groups)
    assert np.abs(repulsion - forces["GroupRepulsiveForce"]).max() < 1e-12
    assert np.abs(gaze - forces["GroupGazeForceAlt"]).max() < 1e-12


def test_group_coherence_softens_by_the_distance_to_the_centre_where_pysocialforce_s_norm_is_always_0() -> None:
    # pysocialforce 1.1.2's GroupCoherenceForceAlt takes the norm with stateutils.speeds, which
    # reads columns 2:4 of the (n, 2) offsets: always 0. Ours is pedsim's formula.
    pysocialforce = import_pysocialforce()
    state = walking_scene(3, 4.0, seed=4)
    groups = [[0, 1, 2]]
    simulator = pysocialforce.Simulator(state.copy(), groups=groups, obstacles=None)
    theirs = next(f.get_force() for f in simulator.forces if type(f).__name__ == "GroupCoherenceForceAlt")
    to_centre = state[:, 0:2].mean(axis=0) - state[:, 0:2]
    threshold = (len(groups[0]) - 1) / 2.0
    assert np.allclose(theirs, to_centre * (math.tanh(0.0 - threshold) + 1.0) / 2.0)
    nothing = dict(desired_factor=0.0, social_factor=0.0, gaze_factor=0.0, group_repulsion_factor=0.0)
    ours = _forces(state, replace(pysocialforce_parameters(), max_speed_multiplier=100.0, stop_distance=0.0,
                                  coherence_factor=1.0, **nothing), groups)
    norms = np.linalg.norm(to_centre, axis=1)
    assert np.allclose(ours, to_centre * ((np.tanh(norms - threshold) + 1.0) / 2.0)[:, None], atol=1e-12)


def _pairwise_wrapped(state: np.ndarray, parameters: SocialForceParameters) -> np.ndarray:
    """The social force of every ordered pair, theta wrapped as pedsim (plain Python)."""
    position, velocity = state[:, 0:2], state[:, 2:4]
    forces = np.zeros((len(state), 2))
    for i in range(len(state)):
        for j in range(len(state)):
            if i == j:
                continue
            d = position[i] - position[j]
            r = np.linalg.norm(d)
            e = d / r
            interaction = parameters.lambda_importance * (velocity[j] - velocity[i]) + e
            b = parameters.gamma * np.linalg.norm(interaction)
            t = interaction / np.linalg.norm(interaction)
            theta = math.atan2(t[1], t[0]) - math.atan2(e[1], e[0])
            theta = (theta + math.pi) % (2 * math.pi) - math.pi
            along = math.exp(-r / b - (parameters.n_prime * b * theta) ** 2)
            side = -np.sign(theta) * math.exp(-r / b - (parameters.n * b * theta) ** 2)
            forces[i] += along * t + side * np.array([-t[1], t[0]])
    return parameters.social_factor * forces


def test_each_pair_computed_once_gives_every_pair_s_force() -> None:
    # With theta wrapped F_ji = -F_ij: the kernel computes each pair once.
    state = walking_scene(25, 6.0, seed=8)
    parameters = replace(SocialForceParameters(), neighbor_range=1e6, force_cutoff=0.0, max_speed_multiplier=100.0,
                         desired_factor=0.0, stop_distance=0.0)
    # within the fast atan2's 2e-10 rad, times the forces' slope in theta
    assert np.abs(_forces(state, parameters) - _pairwise_wrapped(state, parameters)).max() < 1e-8


def test_the_wrapped_model_walks_as_pysocialforce_s_on_average() -> None:
    # Wrapping theta changes single paths (the sideways term of pairs whose angles straddle
    # +-pi comes back), not how long people take.
    for seed in (1, 3):
        state = walking_scene(40, 12.0, seed=seed)
        theirs, _ = run_pysocialforce(state, None, 0.05, 600)
        ours, _ = run_social_force(state, None, 0.05, 600, replace(pysocialforce_parameters(), wrap_angle=True))
        their_arrival = arrival_steps(theirs[:, :, :2], state[:, 4:6], 0.5)
        our_arrival = arrival_steps(ours[:, :, :2], state[:, 4:6], 0.5)
        assert (our_arrival >= 0).sum() >= 0.9 * len(state)
        mean_theirs, mean_ours = their_arrival[their_arrival >= 0].mean(), our_arrival[our_arrival >= 0].mean()
        assert abs(mean_ours - mean_theirs) < 0.15 * mean_theirs


def test_the_range_and_cutoff_change_forces_little() -> None:
    state = walking_scene(200, 25.0, seed=9)
    full = _forces(state, replace(SocialForceParameters(), neighbor_range=1e6, force_cutoff=0.0, max_speed_multiplier=1e3))
    pedsim = _forces(state, replace(SocialForceParameters(), max_speed_multiplier=1e3))
    # pedsim's 10 m neighbourhood and the default cutoff leave most forces as they were
    assert np.median(np.linalg.norm(full - pedsim, axis=1)) < 0.05


def test_the_fast_atan2_is_within_2e_10_rad() -> None:
    rng = np.random.default_rng(0)
    for y, x in list(rng.normal(size=(20000, 2))) + [(0.0, 1.0), (0.0, -1.0), (1.0, 0.0), (-1.0, 0.0), (1e-300, -1.0),
                                                     (3.0, 3.0), (-3.0, -3.0), (0.0, 0.0)]:
        expected = math.atan2(y, x) if (x, y) != (0.0, 0.0) else 0.0
        if abs(abs(expected) - math.pi) < 1e-12:
            assert abs(abs(angle_of(y, x)) - math.pi) < 2e-10
        else:
            assert abs(angle_of(y, x) - expected) < 2e-10


def test_a_wall_pushes_and_no_body_enters_it() -> None:
    wall = np.array([[2.0, -5.0, 2.0, 5.0]])
    # walking straight at the wall at 1.3 m/s, the goal beyond it
    state = np.array([[0.0, 0.0, 1.3, 0.0, 5.0, 0.0]])
    parameters = SocialForceParameters()
    force = _forces(state, replace(parameters, desired_factor=0.0), walls=wall)
    assert force[0, 0] < 0.0 and abs(force[0, 1]) < 1e-12  # away from the wall
    position, velocity = state[0, 0:2].copy(), state[0, 2:4].copy()
    index = WallIndex(wall)
    stamp = 1
    for _ in range(400):
        out = np.zeros((1, 2))
        grid = neighbour_grids(position[None], 1, 1, 10.0)
        agents = (position[None].copy(), velocity[None].copy(), np.array([0.3]), np.zeros(1, dtype=np.int64),
                  np.zeros((1, 2)))
        walking = (np.array([[1.0, 0.0]]), np.array([5.0 - position[0]]), np.array([1.3]))
        stamp = social_force_step(parameters.array(), 0.05, 1, agents, walking, (np.full(1, -1, dtype=np.int64), 0),
                                  grid, index.arrays(), stamp, index.nearest_map(), no_robots(), NO_EXTRA_FORCES, out)
        velocity = out[0]
        position = position + velocity * 0.05
        assert 2.0 - position[0] >= 0.3 - 1e-9


@pytest.mark.parametrize("count", [5, PARALLEL_MIN_AGENTS], ids=["few", "in parts"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_non_finite_velocities_never_come_out(bad: float, count: int) -> None:
    # Nothing non-finite should reach the kernel; if it did, no non-finite velocity reaches Box2D.
    state = walking_scene(count, 3.0 * math.sqrt(count / 5), seed=2)
    count = len(state)
    position, velocity = state[:, 0:2].copy(), state[:, 2:4].copy()
    velocity[0, 0] = bad
    out = np.zeros((count, 2))
    empty = WallIndex(np.zeros((0, 4)))
    grid = neighbour_grids(position, count, count, 10.0)
    agents = (position, velocity, np.full(count, 0.3), np.zeros(count, dtype=np.int64), np.zeros((count, 2)))
    walking = (np.tile([1.0, 0.0], (count, 1)), np.full(count, 5.0), np.full(count, 1.3))
    social_force_step(SocialForceParameters().array(), 0.1, count, agents, walking,
                      (np.full(count, -1, dtype=np.int64), 0), grid, empty.arrays(), 1, empty.nearest_map(), no_robots(),
                      NO_EXTRA_FORCES, out)
    assert np.isfinite(out).all()


@pytest.mark.parametrize("shift", [(0.0, 0.0), (20.1, -13.7), (-1234.5, 0.3)])
def test_people_standing_in_a_line_push_each_other_along_it_wherever_they_stand(shift: tuple[float, float]) -> None:
    # theta is exactly 0 between people at rest (the interaction vector is their direction):
    # rounding must not pick a side for the sideways term (a copy of a world 20 m away walked
    # otherwise than the world alone)
    line = np.array([0.7, 0.3]) / np.hypot(0.7, 0.3)
    places = np.array([[0.0, 0.0], [0.7, 0.3], [1.4, 0.6], [2.8, 1.2]]) + np.array(shift)
    state = np.zeros((4, 6))
    state[:, 0:2] = places
    state[:, 4:6] = places + 100.0 * line  # far along the line: the desired force is along it
    forces = _forces(state, SocialForceParameters(), dt=1e-3)  # a short step: no speed cap
    sideways = forces @ np.array([-line[1], line[0]])
    assert np.abs(sideways).max() < 1e-9, sideways
    social = forces - _forces(state[[0]], SocialForceParameters(), dt=1e-3)[0]  # less the desired force, alike for all
    assert np.abs(social @ line).max() > 1e-3  # they do push each other, along the line
    unshifted = state.copy()
    unshifted[:, [0, 1, 4, 5]] -= np.array([*shift, *shift])
    assert np.allclose(forces, _forces(unshifted, SocialForceParameters(), dt=1e-3), rtol=0.0, atol=1e-6)
