"""The drives' compiled arithmetic: a batch step is the scalar functions applied row by row;
the yaw-rate steering inverts the bicycle model's turn; the wheel speed scale keeps the
direction and brings the fastest mecanum wheel to its limit; limits of 0 mean none."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.core.motion import drive_kernels as kernels
from sim_server.core.motion.dynamics_limits import DynamicsLimits


def _random_limits(rng: np.random.Generator, count: int) -> np.ndarray:
    limits = rng.uniform(0.2, 3.0, (count, 3))
    limits[rng.random((count, 3)) < 0.3] = 0.0  # some unlimited
    return limits


@pytest.mark.parametrize("seed", range(3))
def test_an_ackermann_batch_step_is_the_scalar_functions_row_by_row(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count, dt = 40, 0.02
    commands = np.column_stack([
        rng.uniform(-3, 3, count), rng.uniform(-1, 1, count), rng.uniform(0, 1, count) * (rng.random(count) < 0.5),
        rng.uniform(0, 2, count) * (rng.random(count) < 0.5), (rng.random(count) < 0.5).astype(float),
    ])
    commands[::7, 0] = 0.0  # standing still, some with a yaw rate asked for
    wheelbases, max_steer = rng.uniform(0.3, 3.0, count), rng.uniform(0.1, 1.2, count)
    speed_limits, steer_limits = _random_limits(rng, count), _random_limits(rng, count)
    state = np.column_stack([rng.uniform(-2, 2, count), rng.uniform(-0.3, 0.3, count), rng.uniform(-1, 1, count)])
    expected = state.copy()
    forward, turn_rate = np.zeros(count), np.zeros(count)
    kernels.step_ackermann(commands, wheelbases, max_steer, speed_limits, steer_limits, state, dt, forward, turn_rate)
    for i in range(count):
        speed_target = commands[i, 0]
        a, d, v = speed_limits[i]
        if v:
            speed_target = min(max(speed_target, -v), v)
        steer_target = commands[i, 1]
        if commands[i, 4] == kernels.YAW_RATE:
            steer_target = kernels.steering_for_yaw_rate(speed_target, commands[i, 1], wheelbases[i], expected[i, 1])
        steer_target = min(max(steer_target, -max_steer[i]), max_steer[i])
        tight = [x if not c else (c if not x else min(x, c)) for x, c in ((a, commands[i, 3]), (d, commands[i, 3]))]
        speed = DynamicsLimits(tight[0], tight[1], v).limit(expected[i, 0], speed_target, dt)
        rate = steer_limits[i, 2] if not commands[i, 2] else (commands[i, 2] if not steer_limits[i, 2] else min(steer_limits[i, 2], commands[i, 2]))
        steer, steer_rate = kernels.steer_towards(
            expected[i, 1], expected[i, 2], steer_target, dt, max_steer[i], steer_limits[i, 0], steer_limits[i, 1], rate)
        assert state[i].tolist() == [speed, steer, steer_rate]
        assert forward[i] == speed and turn_rate[i] == kernels.ackermann_turn(speed, steer, wheelbases[i])
        assert abs(steer) <= max_steer[i]


@pytest.mark.parametrize("seed", range(3))
def test_an_omni_batch_step_limits_each_axis_and_the_fastest_wheel(seed: int) -> None:
    rng = np.random.default_rng(10 + seed)
    count, dt = 40, 0.05
    commands = rng.uniform(-2, 2, (count, 3))
    limits = np.stack([_random_limits(rng, count) for _ in range(3)], axis=1)
    wheels = np.column_stack([rng.uniform(0.2, 0.8, count), rng.uniform(0.5, 3.0, count) * (rng.random(count) < 0.7)])
    state = rng.uniform(-1, 1, (count, 3))
    before = state.copy()
    forward, lateral, turn_rate = np.zeros(count), np.zeros(count), np.zeros(count)
    kernels.step_omni(commands, limits, wheels, state, dt, forward, lateral, turn_rate)
    assert (np.column_stack([forward, lateral, turn_rate]) == state).all()
    for i in range(count):
        scale = kernels.wheel_speed_scale(*commands[i], *wheels[i])
        stepped = [DynamicsLimits(*limits[i, axis]).limit(before[i, axis], commands[i, axis] * scale, dt) for axis in range(3)]
        again = kernels.wheel_speed_scale(*stepped, *wheels[i])
        assert state[i].tolist() == pytest.approx([value * again for value in stepped], rel=1e-12, abs=1e-15)
        if wheels[i, 1]:
            assert abs(state[i, 0]) + abs(state[i, 1]) + wheels[i, 0] * abs(state[i, 2]) <= wheels[i, 1] * (1 + 1e-12)


def test_the_yaw_rate_steering_inverts_the_bicycle_turn() -> None:
    for speed, yaw_rate, wheelbase in ((1.0, 0.3, 2.5), (-2.0, 0.4, 1.0), (0.5, -1.0, 0.4)):
        steer = kernels.steering_for_yaw_rate(speed, yaw_rate, wheelbase, 0.0)
        assert kernels.ackermann_turn(speed, steer, wheelbase) == pytest.approx(yaw_rate)
    assert kernels.steering_for_yaw_rate(0.0, 0.0, 1.0, 0.25) == 0.25  # standing, nothing asked: kept
    assert kernels.steering_for_yaw_rate(0.0, -0.1, 1.0, 0.25) == -math.pi / 2  # standing: fully over


def test_the_wheel_scale_keeps_direction_and_reaches_the_limit() -> None:
    assert kernels.wheel_speed_scale(1.0, 1.0, 0.0, 0.4, 1.0) == 0.5
    assert kernels.wheel_speed_scale(0.2, -0.1, 0.5, 0.4, 1.0) == 1.0  # within: untouched
    assert kernels.wheel_speed_scale(5.0, 5.0, 5.0, 0.4, 0.0) == 1.0  # no limit
    scale = kernels.wheel_speed_scale(0.5, 0.0, 2.5, 0.4, 1.0)
    assert 0.5 * scale + 0.4 * 2.5 * scale == pytest.approx(1.0)


def test_limits_of_zero_mean_none_and_the_velocity_limit_cuts_the_target() -> None:
    assert kernels.limited_velocity(0.0, 7.0, 0.1, 0.0, 0.0, 0.0) == 7.0
    assert kernels.limited_velocity(0.0, 7.0, 0.1, 0.0, 0.0, 2.0) == 2.0
    assert kernels.limited_velocity(0.0, 7.0, 0.1, 1.0, 0.0, 0.0) == pytest.approx(0.1)
    assert kernels.limited_velocity(1.0, -1.0, 0.1, 1.0, 4.0, 0.0) == pytest.approx(0.6)  # braking at 4
