"""AckermannDrive in process: a car drives the circle its wheelbase and steering angle give
(radius L / tan(steer)), its steering and speed obey their limits, a yaw-rate command turns it
at that rate, ackermann_msgs-style commands bring their own limits; a batch of cars moves as
each alone does; its odometry is the body's; bad keys are one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import World
from sim_server.core.errors import ConfigError
from sim_plugins.ackermann_drive import AckermannDrive
from test.sim_plugins.drive_tracks import DriveRun, body_row, plain_hooks, track

CAR = """
bodies:
  - name: base
    type: dynamic
    footprints:
      - {{type: polygon, points: [[-0.3, -0.4], [1.3, -0.4], [1.3, 0.4], [-0.3, 0.4]], density: 5}}
plugins:
  - type: AckermannDrive
    name: drive
    body: base
    wheelbase: 1.0
{keys}
"""
STEP = 0.01


def _world(folder: Path, keys: str = "", cars: int = 1, seed: int | None = 3, spacing: float = 6.0) -> World:
    (folder / "car.model.yaml").write_text(CAR.format(keys=keys))
    lines = ["properties: {}", "models:"]
    for index in range(cars):
        lines.append(f"  - {{name: c{index}, model: car.model.yaml, namespace: c{index}, pose: [{spacing * index}, 0, 0]}}")
    (folder / "world.yaml").write_text("\n".join(lines) + "\n")
    return World.from_file(folder / "world.yaml", step_size=STEP, seed=seed)


def _drive(world: World, name: str = "c0") -> AckermannDrive:
    return world.plugins.find(world.models[name], "drive")


def _circle_fit(points: np.ndarray) -> tuple[float, float, float]:
    """Centre (x, y) and radius of the least-squares circle through ``points`` (N, 2)."""
    x, y = points[:, 0], points[:, 1]
    a = np.column_stack([2 * x, 2 * y, np.ones_like(x)])
    (cx, cy, c), *_ = np.linalg.lstsq(a, x * x + y * y, rcond=None)
    return cx, cy, math.sqrt(c + cx * cx + cy * cy)


@pytest.mark.parametrize("steer", [0.3, -0.5])
def test_a_car_drives_the_circle_its_wheelbase_and_steering_angle_give(tmp_path: Path, steer: float) -> None:
    world = _world(tmp_path)
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.angular = 1.5, steer
        world.step(5)  # (steering at once: no limits)
        rear_axle = []
        for _ in range(600):
            world.step()
            body = drive.body
            rear_axle.append((body.position.x, body.position.y))  # the origin is the rear axle's midpoint
        _, _, radius = _circle_fit(np.array(rear_axle))
        assert radius == pytest.approx(1.0 / math.tan(abs(steer)), rel=0.005)
        assert drive.turning_radius == pytest.approx(1.0 / math.tan(abs(steer)))
        assert drive.body.angularVelocity == pytest.approx(1.5 * math.tan(steer) / 1.0, rel=1e-5)
    finally:
        world.close()


def test_the_rear_axle_may_sit_off_the_origin_and_the_origin_then_swings_wider(tmp_path: Path) -> None:
    """With the rear axle 0.5 m behind the origin, the rear axle still drives L / tan(steer) and
    the origin, 0.5 m ahead of it, a circle of sqrt(R^2 + 0.5^2)."""
    world = _world(tmp_path, "    rear_axle: [-0.5, 0.0]")
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.angular = 1.0, 0.4
        world.step(5)
        rear, origin = [], []
        for _ in range(800):
            world.step()
            body = drive.body
            origin.append((body.position.x, body.position.y))
            point = body.GetWorldPoint((-0.5, 0.0))
            rear.append((point.x, point.y))
        radius = 1.0 / math.tan(0.4)
        assert _circle_fit(np.array(rear))[2] == pytest.approx(radius, rel=0.005)
        assert _circle_fit(np.array(origin))[2] == pytest.approx(math.hypot(radius, 0.5), rel=0.005)
        truth = drive.odometry.last_truth  # the origin's velocity, in the body frame
        assert truth.vx == pytest.approx(1.0, rel=1e-4) and truth.vy == pytest.approx(0.5 * truth.wz, rel=1e-4)
    finally:
        world.close()


def test_steering_and_speed_obey_their_limits(tmp_path: Path) -> None:
    keys = """    max_steer_angle: 0.4
    angular_dynamics: {velocity_limit: 0.25}
    linear_dynamics: {acceleration_limit: 0.5, velocity_limit: 2.0}"""
    world = _world(tmp_path, keys)
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.angular = 5.0, 1.0
        world.step(100)  # 1 s
        assert drive.steering_angle == pytest.approx(0.25, abs=1e-9)
        assert drive.speed == pytest.approx(0.5, abs=1e-9)
        world.step(500)  # 6 s: the limits hold
        assert drive.steering_angle == pytest.approx(0.4) and drive.speed == pytest.approx(2.0)
        assert drive.body.angularVelocity == pytest.approx(2.0 * math.tan(0.4), rel=1e-5)
        drive.command.linear = -1.0  # reverse: braking for 4 s, then backwards
        world.step(500)
        assert drive.speed == pytest.approx(-0.5, abs=1e-9)
        assert drive.body.angularVelocity == pytest.approx(-0.5 * math.tan(0.4), rel=1e-5)
    finally:
        world.close()


def test_a_yaw_rate_command_turns_the_car_at_that_rate(tmp_path: Path) -> None:
    world = _world(tmp_path, "    command_angular: yaw_rate\n    max_steer_angle: 0.7")
    try:
        drive = _drive(world)
        drive.command.linear, drive.command.angular = 2.0, 0.6
        world.step(50)
        assert drive.body.angularVelocity == pytest.approx(0.6, rel=1e-5)
        assert drive.steering_angle == pytest.approx(math.atan(1.0 * 0.6 / 2.0))
        drive.command.linear = 0.5  # 0.6 rad/s at 0.5 m/s needs atan(1.2): more than the car steers
        world.step(50)
        assert drive.steering_angle == pytest.approx(0.7)
        drive.command.linear = 0.0  # standing still it keeps its wheels where they were
        world.step(10)
        assert drive.steering_angle == pytest.approx(0.7) and drive.body.angularVelocity == 0.0
    finally:
        world.close()


def test_an_ackermann_command_brings_its_own_tighter_limits(tmp_path: Path) -> None:
    world = _world(tmp_path, "    command_angular: yaw_rate\n    linear_dynamics: {acceleration_limit: 2.0}")
    try:
        drive = _drive(world)
        # Ackermann commands steer by angle, whatever command_angular says for cmd_vel.
        drive.set_ackermann(3.0, 0.2, steering_rate=0.1, acceleration=0.5)
        world.step(100)
        assert drive.speed == pytest.approx(0.5) and drive.steering_angle == pytest.approx(0.1)
        drive.set_ackermann(3.0, 0.2, acceleration=4.0)  # looser than the configured 2 m/s^2: 2 holds
        world.step(50)
        assert drive.speed == pytest.approx(1.5) and drive.steering_angle == pytest.approx(0.2)
        drive.command.linear = 1.5  # a cmd_vel command again: its angular.z is a yaw rate
        world.step(20)
        assert drive.body.angularVelocity == pytest.approx(0.2, rel=1e-5)
        for bad in ({"speed": math.nan}, {"steering_rate": -1.0}, {"acceleration": math.inf}, {"steering_angle": "left"}):
            values = {"speed": 1.0, "steering_angle": 0.0, **bad}
            with pytest.raises(ValueError):
                drive.set_ackermann(**values)
        assert drive.command.linear == 1.5  # nothing half-set
    finally:
        world.close()


def _row(drive: AckermannDrive) -> tuple:
    truth = drive.odometry.last_truth
    odometry = drive.odometry.last_odometry
    return (*body_row(drive), *drive.state.tolist(), None if truth is None else (truth.pose, truth.vx, truth.vy, truth.wz),
            None if odometry is None else (odometry.pose, odometry.vx, odometry.vy, odometry.wz))


RUN = DriveRun("drive", seed=5, command_seed=13, every=40, linear=2.0, angular=0.5, leaving="c2", leaves_at=100, row=_row)
LIMITS = """    rear_axle: [-0.2, 0.05]
    max_steer_angle: 0.45
    angular_dynamics: {velocity_limit: 0.8, acceleration_limit: 3.0}
    linear_dynamics: {acceleration_limit: 1.5, deceleration_limit: 3.0, velocity_limit: 1.8}
    pub_rate: 40
    odom_pose_noise: [0.0001, 0.0001, 0.00001]
    odom_twist_noise: [0.001, 0.0, 0.001]
    odom_drift: {translation_from_translation: 0.01, rotation_from_translation: 0.001}"""


def test_a_batch_of_cars_moves_as_each_alone_and_as_the_swig_path(tmp_path: Path) -> None:
    world = _world(tmp_path, LIMITS, cars=6, spacing=1.2)  # close enough to collide
    world.close()
    world_file = tmp_path / "world.yaml"
    batched = track(world_file, 200, True, RUN)
    assert batched == track(world_file, 200, False, RUN)
    with plain_hooks(AckermannDrive):
        assert batched == track(world_file, 200, True, RUN)
    assert len({row[0] for row in batched if row[4] != 0.0 and row[7] != 0.0}) == 6  # all drove and steered


@pytest.mark.parametrize(
    ("keys", "fault"),
    [
        ("", 'key "wheelbase"'),
        ("    wheelbase: 0", 'key "wheelbase"'),
        ("    wheelbase: -1", 'key "wheelbase"'),
        ("    wheelbase: .nan", 'key "wheelbase"'),
        ("    wheelbase: long", 'key "wheelbase"'),
        ("    max_steer_angle: 1.6", 'key "max_steer_angle"'),
        ("    max_steer_angle: 0", 'key "max_steer_angle"'),
        ("    command_angular: curvature", 'key "command_angular"'),
        ("    rear_axle: [0]", 'key "rear_axle"'),
        ("    angular_dynamics: {velocity_limit: -1}", 'key "velocity_limit"'),
        ("    linear_dynamics: {top_speed: 3}", "top_speed"),
        ("    body: chassis", 'key "body"'),
        ("    ackermann_sub: [a, b]", 'key "ackermann_sub"'),
    ],
)
def test_bad_keys_are_one_line_naming_the_key(tmp_path: Path, keys: str, fault: str) -> None:
    text = CAR.format(keys=keys)
    if keys.startswith("    wheelbase") or not keys:
        text = text.replace("    wheelbase: 1.0\n", "")
    if keys.startswith("    body"):
        text = text.replace("    body: base\n", "")
    (tmp_path / "car.model.yaml").write_text(text)
    (tmp_path / "world.yaml").write_text("properties: {}\nmodels:\n  - {name: c0, model: car.model.yaml}\n")
    with pytest.raises(ConfigError) as raised:
        World.from_file(tmp_path / "world.yaml", step_size=STEP).close()
    assert fault in str(raised.value) and "\n" not in str(raised.value)
