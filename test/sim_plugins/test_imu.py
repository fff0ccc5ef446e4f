"""Imu in process: on a known motion the acceleration is the body's (a robot on a circle feels
v w towards the centre, one speeding up feels its acceleration), the yaw and yaw rate are the
body's; noise and bias walks have the statistics asked for, seeded; a batch of IMUs gives the
numbers each alone gives; bad keys are one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import World
from sim_server.core.errors import ConfigError

ROBOT = """
bodies:
  - name: base
    type: dynamic
    footprints:
      - {{type: polygon, points: [[-0.3, -0.2], [0.4, -0.2], [0.4, 0.25], [-0.3, 0.25]], density: 3}}
plugins:
  - type: DiffDrive
    name: drive
    body: base
{drive}
  - type: Imu
    name: imu
    body: base
{imu}
"""
STEP = 0.01


def _world(folder: Path, imu: str = "", drive: str = "", robots: int = 1, seed: int | None = 3) -> World:
    (folder / "robot.model.yaml").write_text(ROBOT.format(imu=imu, drive=drive))
    lines = ["properties: {}", "models:"]
    for index in range(robots):
        lines.append(f"  - {{name: r{index}, model: robot.model.yaml, namespace: r{index}, pose: [{3.0 * index}, 0, 0]}}")
    (folder / "world.yaml").write_text("\n".join(lines) + "\n")
    return World.from_file(folder / "world.yaml", step_size=STEP, seed=seed)


def _plugins(world: World, name: str) -> list:
    return [p for model in world.models.values() for p in world.plugins.plugins_of(model) if p.context.name == name]


def test_on_a_circle_the_imu_feels_v_times_w_towards_the_centre(tmp_path: Path) -> None:
    world = _world(tmp_path)
    try:
        drive, imu = _plugins(world, "drive")[0], _plugins(world, "imu")[0]
        drive.command.linear, drive.command.angular = 1.0, 0.5
        world.step(300)
        truth = imu.last_truth
        body = world.models["r0"].bodies["base"].physics_body
        assert truth.yaw_rate == pytest.approx(0.5, abs=1e-3) and math.isclose(
            math.remainder(truth.yaw - body.angle, 2 * math.pi), 0.0, abs_tol=1e-9)
        assert truth.ay == pytest.approx(0.5, rel=0.02) and abs(truth.ax) < 0.02  # v w, to the left
        assert imu.last_reading == truth  # no noise asked for
    finally:
        world.close()


def test_speeding_up_the_imu_feels_the_acceleration_forward(tmp_path: Path) -> None:
    world = _world(tmp_path, drive="    linear_dynamics: {acceleration_limit: 0.8}")
    try:
        drive, imu = _plugins(world, "drive")[0], _plugins(world, "imu")[0]
        drive.command.linear = 2.0
        world.step(50)  # half a second at 0.8 m/s^2
        assert imu.last_truth.ax == pytest.approx(0.8, rel=0.02) and abs(imu.last_truth.ay) < 1e-6
        world.step(300)  # at speed: no acceleration
        assert abs(imu.last_truth.ax) < 1e-6
    finally:
        world.close()


def test_an_imu_off_the_turning_point_feels_the_centripetal_of_its_own_circle(tmp_path: Path) -> None:
    """Spinning in place at w, an IMU 0.3 m ahead of the body's origin goes round a circle of
    0.3 m: it feels w^2 0.3 towards the origin (backwards in its frame)."""
    world = _world(tmp_path, imu="    origin: [0.3, 0, 0]")
    try:
        drive, imu = _plugins(world, "drive")[0], _plugins(world, "imu")[0]
        drive.command.linear, drive.command.angular = 0.0, 2.0
        world.step(200)
        assert imu.last_truth.ax == pytest.approx(-4.0 * 0.3, rel=0.02) and abs(imu.last_truth.ay) < 0.05
    finally:
        world.close()


def test_noise_has_the_variances_asked_for_and_a_seed_repeats_it(tmp_path: Path) -> None:
    imu_keys = ("    orientation_noise: [0, 0, 0.0004]\n    angular_velocity_noise: [0, 0, 0.0009]\n"
                "    linear_acceleration_noise: [0.01, 0.04, 0]")
    runs = []
    for _ in range(2):
        world = _world(tmp_path, imu=imu_keys)
        try:
            imu = _plugins(world, "imu")[0]
            errors = []
            for _ in range(2000):
                world.step()
                truth, reading = imu.last_truth, imu.last_reading
                errors.append((reading.yaw - truth.yaw, reading.yaw_rate - truth.yaw_rate,
                               reading.ax - truth.ax, reading.ay - truth.ay))
            runs.append(np.array(errors))
        finally:
            world.close()
    assert np.array_equal(runs[0], runs[1])  # seeded
    assert np.allclose(runs[0].std(axis=0), [0.02, 0.03, 0.1, 0.2], rtol=0.1)
    assert np.allclose(runs[0].mean(axis=0), 0.0, atol=0.02)


def test_a_bias_walk_spreads_as_the_square_root_of_time(tmp_path: Path) -> None:
    """200 IMUs still for 4 s with a gyro walk of 0.01 rad/s/sqrt(s): their biases spread with a
    standard deviation of 0.01 sqrt(4) = 0.02 rad/s, centred on 0."""
    world = _world(tmp_path, imu="    angular_velocity_bias_walk: [0, 0, 0.01]\n    pub_rate: 50", robots=200)
    try:
        world.step(400)
        biases = np.array([imu.last_reading.yaw_rate - imu.last_truth.yaw_rate for imu in _plugins(world, "imu")])
    finally:
        world.close()
    assert biases.std() == pytest.approx(0.02, rel=0.15) and abs(biases.mean()) < 0.006


def _readings(folder: Path, robots: int) -> list:
    world = _world(folder, imu="    linear_acceleration_noise: [0.01, 0.01, 0]\n    pub_rate: 20", robots=robots)
    try:
        for index, drive in enumerate(_plugins(world, "drive")):
            drive.command.linear, drive.command.angular = 0.7, -0.4 + 0.2 * index
        rows = []
        for _ in range(120):
            world.step()
            rows.append([(imu.last_truth, imu.last_reading) for imu in _plugins(world, "imu")])
        return rows
    finally:
        world.close()


def test_a_batch_of_imus_gives_what_each_alone_gives(tmp_path: Path, monkeypatch) -> None:
    """Five IMUs read in one batch, and the same five each by its own hook (the batch hook
    taken away): the same readings, noise included."""
    from sim_server.core.plugins import Plugin
    from sim_plugins.imu import Imu

    (tmp_path / "batch").mkdir()
    (tmp_path / "alone").mkdir()
    batched = _readings(tmp_path / "batch", 5)
    monkeypatch.setattr(Imu, "after_physics_step_batch", Plugin.after_physics_step_batch)
    alone = _readings(tmp_path / "alone", 5)
    assert len(batched) == len(alone) == 120 and all(truth is not None for truth, _ in batched[-1])
    for step_batched, step_alone in zip(batched, alone):
        for (truth_b, reading_b), (truth_a, reading_a) in zip(step_batched, step_alone):
            assert (truth_b is None) == (truth_a is None)
            if truth_b is None:
                continue
            assert truth_b.stamp_ns == truth_a.stamp_ns
            assert np.allclose([truth_b.yaw, truth_b.yaw_rate, truth_b.ax, truth_b.ay],
                               [truth_a.yaw, truth_a.yaw_rate, truth_a.ax, truth_a.ay], atol=1e-9)
            assert np.allclose([reading_b.ax, reading_b.ay], [reading_a.ax, reading_a.ay], atol=1e-9)


@pytest.mark.parametrize(("keys", "fault"), [
    ("    orientation_noise: [0, 0]", "orientation_noise"),
    ("    linear_acceleration_noise: [0, -1, 0]", "linear_acceleration_noise"),
    ("    pub_rate: -5", "pub_rate"),
    ("    update_rate: 40", "update_rate"),
    ("    angular_velocity_bias_walk: [0, 0, .nan]", "angular_velocity_bias_walk"),
    ("    orientation_covariance: [1, 2, 3]", "orientation_covariance"),
    ("    origin: [0, 0]", "origin"),
])
def test_bad_keys_are_one_line_naming_the_key(tmp_path: Path, keys: str, fault: str) -> None:
    with pytest.raises(ConfigError) as raised:
        world = _world(tmp_path, imu=keys)
        try:
            for imu in _plugins(world, "imu"):
                pass
        finally:
            world.close()
    assert fault in str(raised.value) and "\n" not in str(raised.value)


def test_over_ros_the_imu_publishes_its_readings_and_frame(ros_context, tmp_path: Path) -> None:
    """On ROS: sensor_msgs/Imu on imu/filtered and imu/ground_truth in the model's namespace,
    in its frame, with the covariances asked for; body -> IMU frame on /tf_static."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import Imu as ImuMessage
    from tf2_msgs.msg import TFMessage

    from test.ros.conftest import Harness

    (tmp_path / "robot.model.yaml").write_text(ROBOT.format(
        drive="", imu="    linear_acceleration_noise: [0.01, 0.01, 0]\n    origin: [0.1, 0, 0]\n    pub_rate: 50"))
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: bot, model: robot.model.yaml, namespace: bot, pose: [1, 2, 0.5]}\n")
    harness = Harness(ros_context, tmp_path / "world.yaml")
    try:
        got: dict[str, list] = {"/bot/imu/filtered": [], "/bot/imu/ground_truth": []}
        for topic, messages in got.items():
            harness.client.create_subscription(ImuMessage, topic, messages.append, 10)
        statics: list = []
        harness.client.create_subscription(TFMessage, "/tf_static", statics.append, QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
        harness.run_until(lambda: all(len(m) >= 3 for m in got.values()) and bool(statics), "IMU messages")
    finally:
        harness.close()
    noisy, truth = got["/bot/imu/filtered"][-1], got["/bot/imu/ground_truth"][-1]
    assert noisy.header.frame_id == truth.header.frame_id == "bot_imu"
    assert 2 * math.atan2(truth.orientation.z, truth.orientation.w) == pytest.approx(0.5)
    assert list(noisy.linear_acceleration_covariance)[:2] == [0.01, 0.0] and list(truth.linear_acceleration_covariance) == [0.0] * 9
    pairs = {(t.header.frame_id, t.child_frame_id): t for message in statics for t in message.transforms}
    assert pairs[("bot_base", "bot_imu")].transform.translation.x == pytest.approx(0.1)
