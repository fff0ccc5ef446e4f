"""pedsim_ros's random and along-wall forces: pedsim's distributions, fading and thresholds,
worked by hand; each person's random force its own, whatever the others do."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core.crowd.pedsim_forces import STUCK_SPEED, WALL_ANGLE, WALL_DISTANCE, _deviation, pedsim_forces
from sim_server.core.crowd.people import NO_DEVIATION
from sim_server.core.crowd.walls import WallIndex
from test.core.crowd.test_crowd import WALKERS, make_world

RANDOM, FADING, ALONG = 0.1, 1.0, 2.0
GOAL_THRESHOLD = 0.2


class Scene:
    """People at ``positions`` wanting to walk along ``directions`` at 1.3 m/s, with walls."""

    def __init__(self, positions, velocities, directions, walls=np.zeros((0, 4)), keys=None) -> None:
        self.positions = np.array(positions, dtype=float).reshape(-1, 2)
        count = len(self.positions)
        self.velocities = np.array(velocities, dtype=float).reshape(-1, 2)
        directions = np.array(directions, dtype=float).reshape(-1, 2)
        self.directions = directions / np.linalg.norm(directions, axis=1)[:, None]
        self.keys = np.arange(1, count + 1, dtype=np.uint64) * np.uint64(104729) if keys is None else keys
        self.deviations = np.zeros((count, 4))
        self.index = np.full(count, NO_DEVIATION, dtype=np.int64)
        self.walls = WallIndex(np.array(walls, dtype=float).reshape(-1, 4))
        self.stamp = 1

    def forces(self, now: float, random: float = RANDOM, along: float = ALONG, fading: float = FADING) -> np.ndarray:
        count = len(self.positions)
        out = np.full((count, 2), np.nan)
        self.stamp = pedsim_forces(
            count, now, (float(random), float(fading), float(along), float(GOAL_THRESHOLD)),
            (self.keys, self.deviations, self.index), (self.positions, self.velocities, np.zeros((count, 2))),
            (self.directions, np.full(count, 10.0), np.full(count, 1.3)), self.walls.arrays(), self.stamp, out,
        )
        return out


# ------------------------------------------------------------------------------ random force


def test_deviations_have_pedsim_s_distribution() -> None:
    # a uniform direction and a length drawn from N(0, 1): E|d|^2 = 1, the angle uniform
    keys = np.arange(1, 40001, dtype=np.uint64) * np.uint64(7919)
    deviations = np.array([_deviation(key, 5) for key in keys])
    squared = (deviations ** 2).sum(axis=1)
    assert abs(squared.mean() - 1.0) < 0.03
    assert np.abs(deviations.mean(axis=0)).max() < 0.02
    angles = np.sort(np.arctan2(deviations[:, 1], deviations[:, 0]))
    uniform = (np.arange(1, len(angles) + 1) / len(angles)) * 2.0 * math.pi - math.pi
    assert np.abs(angles - uniform).max() < 1.36 / math.sqrt(len(angles)) * 2.0 * math.pi  # KS at 5 %
    lengths = np.sqrt(squared)
    assert abs(np.mean(lengths) - math.sqrt(2.0 / math.pi)) < 0.02  # |N(0, 1)|'s mean


@pytest.mark.parametrize("fading", [1.0, 0.4, 2.5])
def test_the_force_fades_from_one_deviation_to_the_next(fading: float) -> None:
    scene = Scene([[0.0, 0.0], [5.0, 0.0]], np.zeros((2, 2)), [[1.0, 0.0], [0.0, 1.0]])
    for now in (0.0, 0.3 * fading, 0.99 * fading, 1.0 * fading, 3.7 * fading, 3.2 * fading, 40.05 * fading):
        forces = scene.forces(now, fading=fading, along=0.0)
        period = math.floor(now / fading)
        progress = now / fading - period
        for person in range(2):
            now_deviation = np.array(_deviation(scene.keys[person], period))
            next_deviation = np.array(_deviation(scene.keys[person], period + 1))
            expected = RANDOM * ((1.0 - progress) * now_deviation + progress * next_deviation)
            assert np.allclose(forces[person], expected, rtol=0.0, atol=1e-12), (now, person)


def test_the_force_is_continuous_across_periods() -> None:
    scene = Scene([[0.0, 0.0]], [[0.0, 0.0]], [[1.0, 0.0]])
    before = scene.forces(2.0 - 1e-9, along=0.0)
    after = scene.forces(2.0, along=0.0)
    assert np.abs(before - after).max() < 1e-8


def test_a_person_s_force_is_the_same_alone_and_among_others() -> None:
    keys = np.array([11, 22, 33, 44], dtype=np.uint64)
    everyone = Scene(np.zeros((4, 2)), np.zeros((4, 2)), np.ones((4, 2)), keys=keys)
    alone = Scene(np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 2)), keys=keys[2:3])
    for now in (0.0, 0.5, 1.25, 7.5):
        assert np.array_equal(everyone.forces(now)[2], alone.forces(now)[0])


def test_no_random_force_at_factor_0() -> None:
    scene = Scene([[0.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]])
    assert np.array_equal(scene.forces(3.3, random=0.0), np.zeros((1, 2)))


# ------------------------------------------------------------------------------ along-wall force

#: A wall across the way of a person at the origin walking along +x, 0.5 m ahead, drawn upwards.
WALL_AHEAD = [[0.5, -3.0, 0.5, 3.0]]


def along(positions, velocities, directions, walls) -> np.ndarray:
    return Scene(positions, velocities, directions, walls).forces(0.0, random=0.0)


def test_a_stuck_person_facing_a_wall_is_pushed_along_it_as_it_is_drawn() -> None:
    # straight at it, neither way is nearer its wish: pedsim takes the wall's direction as drawn
    assert np.allclose(along([0.0, 0.0], [0.0, 0.0], [1.0, 0.0], WALL_AHEAD), [[0.0, ALONG]])
    reversed_wall = [[0.5, 3.0, 0.5, -3.0]]
    assert np.allclose(along([0.0, 0.0], [0.0, 0.0], [1.0, 0.0], reversed_wall), [[0.0, -ALONG]])


@pytest.mark.parametrize("degrees", [-15.0, 15.0])
def test_the_push_is_the_way_nearer_the_wish(degrees: float) -> None:
    # the wall's nearest point is straight ahead, within 20 degrees of the wish
    turn = math.radians(degrees)
    force = along([0.0, 0.0], [0.0, 0.0], [math.cos(turn), math.sin(turn)], WALL_AHEAD)
    assert np.allclose(force, [[0.0, math.copysign(ALONG, degrees)]])


@pytest.mark.parametrize("case", ["moving", "far", "beside", "behind"])
def test_no_push_unless_stuck_near_a_wall_in_the_way(case: str) -> None:
    position, velocity, direction, walls = [0.0, 0.0], [0.0, 0.0], [1.0, 0.0], WALL_AHEAD
    if case == "moving":
        velocity = [0.0, STUCK_SPEED * 1.01]
    elif case == "far":
        walls = [[WALL_DISTANCE + 0.01, -3.0, WALL_DISTANCE + 0.01, 3.0]]
    elif case == "beside":  # the wall's nearest point 25 degrees off the wish
        turn = WALL_ANGLE + math.radians(5.0)
        direction = [math.cos(turn), math.sin(turn)]
    else:
        direction = [-1.0, 0.0]
    assert np.array_equal(along(position, velocity, direction, walls), np.zeros((1, 2)))


def test_slow_enough_is_stuck() -> None:
    # drifting up at just under the threshold: the wish is the desired force, e v0 - v, which
    # leans down, so the push is downwards
    force = along([0.0, 0.0], [0.0, STUCK_SPEED * 0.99], [1.0, 0.0], WALL_AHEAD)
    assert np.allclose(force, [[0.0, -ALONG]])


def test_the_nearest_wall_decides() -> None:
    # a corner: the wall ahead (0.5 m) nearer than the one above (0.55 m), drawn leftwards
    walls = [[0.5, -3.0, 0.5, 0.55], [3.0, 0.55, -3.0, 0.55]]
    assert np.allclose(along([0.0, 0.0], [0.0, 0.0], [1.0, 0.0], walls), [[0.0, ALONG]])
    # a little higher, the wall above is nearer, but 90 degrees off the wish: no push
    assert np.array_equal(along([0.0, 0.1], [0.0, 0.0], [1.0, 0.0], walls), np.zeros((1, 2)))


# ------------------------------------------------------------------------------ in a crowd


@pytest.mark.parametrize("key", ["random_factor", "along_wall_factor"])
def test_a_world_file_turns_each_force_off(tmp_path: Path, key: str) -> None:
    # the same seed: the same starts and goals; the paths differ where a force is off
    paths = {}
    for setting in ("default", "off", "default again"):
        folder = tmp_path / setting.replace(" ", "_")
        folder.mkdir()
        crowd = WALKERS + (f"    parameters: {{{key}: 0}}\n" if setting == "off" else "")
        world = make_world(folder, crowd, seed=4)
        world.step(300)
        paths[setting] = world.crowds.named("people").positions().copy()
        world.close()
    assert np.array_equal(paths["default"], paths["default again"])
    if key == "random_factor":  # the random force always acts; the along-wall force only where someone is stuck
        assert not np.array_equal(paths["default"], paths["off"])
