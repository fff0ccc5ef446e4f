"""The drives' arithmetic, one function per rule, in plain Python and compiled for batches.

Every function is compiled (:func:`~sim_server.core.compiled.jit`) and callable from Python: a
drive plugin steps one robot with :func:`limited_velocity` or :func:`steer_towards`, and a batch
of drives steps all of them in one compiled call (:func:`step_ackermann`, :func:`step_omni`) that
runs the same functions, so a robot moves the same alone or in a batch. Callees live in this
module with their callers: numba's cache checks a function against its own file only. Python
callers pass floats (one compiled specialisation; :func:`warm_up` loads them all).

Units: speeds m/s, turn rates and steering rates rad/s, angles rad, accelerations m/s^2 (rad/s^2),
lengths m, times s. A limit of 0 means none.
"""

from __future__ import annotations

import math

import numpy as np

from sim_server.core.compiled import jit

#: Columns of a (N, 3) limits array: acceleration, deceleration and velocity limits.
ACCELERATION, DECELERATION, VELOCITY = 0, 1, 2
#: How an Ackermann command's angular value reads: the steering angle (rad) or the yaw rate
#: (rad/s) to turn at, converted through the wheelbase and the commanded speed.
STEERING_ANGLE, YAW_RATE = 0, 1


@jit
def limited_velocity(
    velocity: float, target: float, dt: float, acceleration_limit: float, deceleration_limit: float,
    velocity_limit: float,
) -> float:
    """The velocity after ``dt`` seconds of moving from ``velocity`` towards ``target`` within the
    limits, as the reference's drives apply them: ``acceleration_limit`` while speeding up away from
    zero, ``deceleration_limit`` while slowing towards it (through zero: braking, then speeding up,
    in one step), ``velocity_limit`` on the magnitude."""
    accel, decel = acceleration_limit, deceleration_limit
    if velocity_limit != 0.0:
        target = min(max(target, -velocity_limit), velocity_limit)
    if target == 0.0:
        bound = decel
    elif velocity == 0.0:
        bound = accel
    elif velocity * target < 0.0:
        if decel != 0.0:
            first = min(max((target - velocity) / dt, -decel), decel)
            if (velocity + first * dt) * velocity > 0.0 and accel != 0.0:
                bound = decel
            elif accel == 0.0:
                bound = 0.0
            else:
                braking_time = abs(velocity) / decel
                bound = decel * braking_time / dt + accel * (1.0 - braking_time / dt)
        else:
            velocity = 0.0
            bound = accel
    elif abs(velocity) < abs(target):
        bound = accel
    else:
        bound = decel
    change = (target - velocity) / dt
    if bound != 0.0:
        change = min(max(change, -bound), bound)
    return velocity + change * dt


@jit
def steer_towards(
    steer: float, steer_rate: float, target: float, dt: float, max_angle: float, acceleration_limit: float,
    deceleration_limit: float, rate_limit: float,
) -> tuple[float, float]:
    """The steering angle and rate after ``dt`` seconds of turning the wheels from ``steer`` (at
    ``steer_rate``) towards ``target``: the rate changes within the acceleration limits and
    starts braking when the remaining angle is what braking takes; the angle stays within
    ``max_angle``. Returns (angle, rate)."""
    remaining = target - steer
    if acceleration_limit != 0.0:
        braking_distance = steer_rate * steer_rate / (2.0 * acceleration_limit)
    else:
        braking_distance = abs(remaining)
    wanted_rate = remaining / dt if abs(remaining) >= braking_distance else 0.0
    steer_rate = limited_velocity(steer_rate, wanted_rate, dt, acceleration_limit, deceleration_limit, rate_limit)
    steer += steer_rate * dt
    if max_angle != 0.0:
        steer = min(max(steer, -max_angle), max_angle)
    return steer, steer_rate


@jit
def ackermann_turn(speed: float, steer: float, wheelbase: float) -> float:
    """Yaw rate of a car (bicycle model) whose rear axle's midpoint moves at ``speed`` with its
    front wheels at ``steer``: speed tan(steer) / wheelbase."""
    return speed * math.tan(steer) / wheelbase


@jit
def steering_for_yaw_rate(speed: float, yaw_rate: float, wheelbase: float, current: float) -> float:
    """The steering angle that turns a car moving at ``speed`` at ``yaw_rate`` (the inverse of
    :func:`ackermann_turn`); standing still it keeps ``current`` unless a turn is asked for, then
    it steers fully towards it (a right angle, which the steering limit cuts)."""
    if speed != 0.0:
        return math.atan(wheelbase * yaw_rate / speed)
    if yaw_rate == 0.0:
        return current
    return math.copysign(0.5 * math.pi, yaw_rate)


@jit
def wheel_speed_scale(vx: float, vy: float, wz: float, half_extents_sum: float, max_wheel_speed: float) -> float:
    """The factor (<= 1) that keeps a mecanum base's fastest wheel within ``max_wheel_speed``
    (m/s at the rim) when the base moves at ``vx``, ``vy`` and turns at ``wz``: each wheel's
    rim speed is vx +- vy +- (lx + ly) wz, ``half_extents_sum`` being lx + ly (half the
    wheelbase plus half the track), so the fastest is ``abs(vx) + abs(vy) + (lx + ly) abs(wz)``."""
    if max_wheel_speed == 0.0:
        return 1.0
    fastest = abs(vx) + abs(vy) + half_extents_sum * abs(wz)
    return max_wheel_speed / fastest if fastest > max_wheel_speed else 1.0


@jit
def _tighter(configured: float, commanded: float) -> float:
    """The smaller of two limits where 0 means none."""
    if configured == 0.0:
        return commanded
    if commanded == 0.0:
        return configured
    return min(configured, commanded)


@jit
def _step_ackermann(commands, wheelbases, max_steer, speed_limits, steer_limits, state, dt, forward, turn_rate):
    changed = False
    for i in range(commands.shape[0]):
        target_speed = commands[i, 0]
        if speed_limits[i, VELOCITY] != 0.0:
            target_speed = min(max(target_speed, -speed_limits[i, VELOCITY]), speed_limits[i, VELOCITY])
        target_steer = commands[i, 1]
        if commands[i, 4] == YAW_RATE:
            target_steer = steering_for_yaw_rate(target_speed, commands[i, 1], wheelbases[i], state[i, 1])
        target_steer = min(max(target_steer, -max_steer[i]), max_steer[i])
        acceleration = _tighter(speed_limits[i, ACCELERATION], commands[i, 3])
        deceleration = _tighter(speed_limits[i, DECELERATION], commands[i, 3])
        speed = limited_velocity(state[i, 0], target_speed, dt, acceleration, deceleration, speed_limits[i, VELOCITY])
        rate_limit = _tighter(steer_limits[i, VELOCITY], commands[i, 2])
        steer, steer_rate = steer_towards(
            state[i, 1], state[i, 2], target_steer, dt, max_steer[i], steer_limits[i, ACCELERATION],
            steer_limits[i, DECELERATION], rate_limit,
        )
        if speed != state[i, 0] or steer != state[i, 1] or steer_rate != state[i, 2]:
            changed = True
        state[i, 0], state[i, 1], state[i, 2] = speed, steer, steer_rate
        forward[i] = speed
        turn_rate[i] = ackermann_turn(speed, steer, wheelbases[i])
    return changed


def step_ackermann(
    commands: np.ndarray, wheelbases: np.ndarray, max_steer: np.ndarray,
    speed_limits: np.ndarray, steer_limits: np.ndarray, state: np.ndarray, dt: float, forward: np.ndarray,
    turn_rate: np.ndarray,
) -> bool:
    """Step N cars' speed and steering by ``dt`` seconds towards their commands.

    Args:
        commands: (N, 5): the speed (m/s) and the steering angle (rad) or yaw rate (rad/s) asked
            for, the command's own steering rate and acceleration limits (0: none; the tighter
            of these and the configured ones apply), and :data:`STEERING_ANGLE` or
            :data:`YAW_RATE`: how the second value reads.
        wheelbases: (N,) m, > 0. max_steer: (N,) rad, > 0.
        speed_limits, steer_limits: (N, 3): acceleration, deceleration and velocity limits of the
            speed and of the steering angle.
        state: (N, 3), updated: speed (m/s), steering angle (rad), steering rate (rad/s).
        forward, turn_rate: (N,), set: the rear axle midpoint's speed (m/s), the yaw rate (rad/s).

    Returns:
        Whether any state changed: when none did, the same commands give the same step again.
    """
    return _step_ackermann(commands, wheelbases, max_steer, speed_limits, steer_limits, state, dt, forward, turn_rate)


@jit
def _step_omni(commands, limits, wheels, state, dt, forward, lateral, turn_rate):
    changed = False
    for i in range(commands.shape[0]):
        scale = wheel_speed_scale(commands[i, 0], commands[i, 1], commands[i, 2], wheels[i, 0], wheels[i, 1])
        for axis in range(3):
            state[i, axis] = limited_velocity(
                state[i, axis], commands[i, axis] * scale, dt, limits[i, axis, ACCELERATION],
                limits[i, axis, DECELERATION], limits[i, axis, VELOCITY],
            )
        scale = wheel_speed_scale(state[i, 0], state[i, 1], state[i, 2], wheels[i, 0], wheels[i, 1])
        for axis in range(3):
            state[i, axis] *= scale
        if state[i, 0] != forward[i] or state[i, 1] != lateral[i] or state[i, 2] != turn_rate[i]:
            changed = True
        forward[i], lateral[i], turn_rate[i] = state[i, 0], state[i, 1], state[i, 2]
    return changed


def step_omni(
    commands: np.ndarray, limits: np.ndarray, wheels: np.ndarray, state: np.ndarray, dt: float,
    forward: np.ndarray, lateral: np.ndarray, turn_rate: np.ndarray,
) -> bool:
    """Step N holonomic bases' velocities by ``dt`` seconds towards their commands.

    Args:
        commands: (N, 3): forward and sideways (to the left) speeds (m/s) and turn rate (rad/s).
        limits: (N, 3, 3): per axis (forward, sideways, turn), the acceleration, deceleration and
            velocity limits.
        wheels: (N, 2): lx + ly (m) and the largest wheel rim speed (m/s, 0: none) of a mecanum
            base; the command, and then the velocity, are scaled down together (keeping their
            direction) until no wheel is faster.
        state: (N, 3), updated: the velocities (m/s, m/s, rad/s).
        forward, lateral, turn_rate: (N,), set from ``state`` (and holding the last step's on entry).

    Returns:
        Whether any velocity changed from the last step's: when none did, the same commands give
        the same step again.
    """
    return _step_omni(commands, limits, wheels, state, dt, forward, lateral, turn_rate)


def warm_up() -> None:
    """Compile (or load) both batch steps and the functions Python calls (with floats)."""
    limited_velocity(0.0, 1.0, 0.01, 1.0, 1.0, 1.0)
    steer_towards(0.0, 0.0, 1.0, 0.01, 0.5, 1.0, 1.0, 1.0)
    one = np.zeros(1)
    step_ackermann(np.zeros((1, 5)), np.ones(1), np.ones(1), np.zeros((1, 3)),
                   np.zeros((1, 3)), np.zeros((1, 3)), 0.01, one, one.copy())
    step_omni(np.zeros((1, 3)), np.zeros((1, 3, 3)), np.zeros((1, 2)), np.zeros((1, 3)), 0.01, one, one.copy(),
              one.copy())
