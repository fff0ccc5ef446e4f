"""Plugins through real ROS topics: scans, cmd_vel driving, odometry, GPS fixes, contacts and TF."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import LaserScan, NavSatFix
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

from sim_server.core import Pose2D
from test.conftest import DEMO_WORLD, PLUGIN_TESTS
from test.ros.conftest import Harness

TF_STATIC_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)

ROBOT_MODEL = """
bodies:
  - name: base
    footprints:
      - {type: circle, radius: 0.3, density: 10}
plugins:
  - type: DiffDrive
    name: drive
    body: base
    stamped: STAMPED
    odom_frame_id: odom
    linear_dynamics: {acceleration_limit: 2.0}
  - type: Gps
    name: gps
    body: base
    ref_lat: 45.0
    ref_lon: -75.0
    update_rate: 20
"""


def robot_world(folder: Path, stamped: bool) -> Path:
    (folder / "robot.model.yaml").write_text(ROBOT_MODEL.replace("STAMPED", "true" if stamped else "false"))
    (folder / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: bot, model: robot.model.yaml, namespace: bot, pose: [1, 2, 0]}\n"
    )
    return folder / "world.yaml"


@pytest.fixture
def laser_harness(ros_context):
    harness = Harness(ros_context, PLUGIN_TESTS / "laser_tests" / "range_test" / "world.yaml", step_size=1.0)
    yield harness
    harness.close()


def test_laser_scans_and_static_tf(laser_harness: Harness) -> None:
    scans: dict[str, LaserScan] = {}
    for topic in ("/r/scan", "/scan_center", "/r/scan_back"):
        laser_harness.client.create_subscription(LaserScan, topic, lambda m, t=topic: scans.__setitem__(t, m), 10)
    statics: list[TFMessage] = []
    laser_harness.client.create_subscription(TFMessage, "/tf_static", statics.append, TF_STATIC_QOS)
    laser_harness.run_until(lambda: len(scans) == 3 and bool(statics), "scans and /tf_static")
    front = scans["/r/scan"]
    assert front.header.frame_id == "r_laser_front"
    assert (front.angle_min, front.angle_max, front.range_max) == pytest.approx((-math.pi / 2, math.pi / 2, 5.0))
    assert list(front.ranges) == pytest.approx([4.5, 4.4, 4.3], abs=1e-5) and len(front.intensities) == 0
    assert list(scans["/scan_center"].ranges) == pytest.approx([4.8, 4.7, 4.6, 4.9, 4.8], abs=1e-5)
    back = list(scans["/r/scan_back"].ranges)
    assert math.isnan(back[0]) and back[1:3] == pytest.approx([3.2, 3.5], abs=1e-5)
    pairs = {(t.header.frame_id, t.child_frame_id) for t in statics[-1].transforms}
    assert ("r_base_link", "r_laser_front") in pairs and ("r_base_link", "r_center_laser") in pairs


@pytest.mark.parametrize("stamped", [False, True])
def test_diff_drive_follows_cmd_vel(ros_context, tmp_path: Path, stamped: bool) -> None:
    harness = Harness(ros_context, robot_world(tmp_path, stamped))
    try:
        truth: list[Odometry] = []
        noisy: list[Odometry] = []
        transforms: list[TFMessage] = []
        harness.client.create_subscription(Odometry, "/bot/odometry/ground_truth", truth.append, 10)
        harness.client.create_subscription(Odometry, "/bot/odometry/filtered", noisy.append, 10)
        harness.client.create_subscription(TFMessage, "/tf", transforms.append, 100)
        message_type = TwistStamped if stamped else Twist
        command = harness.client.create_publisher(message_type, "/bot/cmd_vel", 1)
        message = message_type()
        twist = message.twist if stamped else message
        twist.linear.x, twist.angular.z = 0.5, 0.2
        harness.run_until(lambda: command.get_subscription_count() > 0, "cmd_vel subscription")
        command.publish(message)
        harness.run_until(lambda: bool(truth) and truth[-1].twist.twist.linear.x > 0.49, "the robot to reach 0.5 m/s")
        last = truth[-1]
        assert last.header.frame_id == "map" and last.child_frame_id == "bot_base"
        assert last.twist.twist.angular.z == pytest.approx(0.2, abs=1e-6)
        assert noisy[-1].header.frame_id == "bot_odom"
        moved = math.hypot(last.pose.pose.position.x - 1.0, last.pose.pose.position.y - 2.0)
        assert moved > 0.05
        assert any(t.header.frame_id == "bot_odom" and t.child_frame_id == "bot_base" for m in transforms for t in m.transforms)
    finally:
        harness.close()


def test_gps_publishes_fixes(ros_context, tmp_path: Path) -> None:
    harness = Harness(ros_context, robot_world(tmp_path, False))
    try:
        fixes: list[NavSatFix] = []
        harness.client.create_subscription(NavSatFix, "/bot/gps/fix", fixes.append, 10)
        harness.run_until(lambda: len(fixes) >= 2, "two GPS fixes")
        fix = fixes[-1]
        assert fix.header.frame_id == "bot_gps" and fix.status.status == 0
        # 1 m east and 2 m north of (45 N, 75 W).
        assert fix.latitude == pytest.approx(45.0 + 2.0 / 111_132.0, abs=2e-7)
        assert fix.longitude == pytest.approx(-75.0 + 1.0 / (111_412.0 * math.cos(math.radians(45.0))), abs=2e-7)
    finally:
        harness.close()


def test_bool_sensor_publishes_contacts(ros_context, tmp_path: Path) -> None:
    harness = Harness(ros_context, DEMO_WORLD)
    try:
        world = harness.server.world
        world.delete_model("walker1")  # it walks through the sensor now and then
        (tmp_path / "box.model.yaml").write_text(
            "bodies:\n  - name: box\n    type: static\n"
            "    footprints: [{type: polygon, density: 1, points: [[-0.3, -0.3], [0.3, -0.3], [0.3, 0.3], [-0.3, 0.3]]}]\n"
        )
        world.spawn_model(tmp_path / "box.model.yaml", "box", pose=Pose2D(2.0, 2.0, 0.0))
        values: list[bool] = []
        harness.client.create_subscription(Bool, "/detector_out", lambda m: values.append(m.data), 10)
        harness.run_until(lambda: len(values) >= 2, "two messages of the sensor alone")
        assert not any(values)
        world.move_model("sensor", Pose2D(2.0, 2.0, 0.0))
        harness.run_until(lambda: len(values) >= 2 and values[-1] and values[-2], "two messages of the touching sensor")
    finally:
        harness.close()
