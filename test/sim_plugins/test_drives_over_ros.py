"""AckermannDrive and OmniDrive on ROS: a car takes cmd_vel and ackermann_msgs commands and an
omni base cmd_vel's linear.y; both publish odometry in the model's namespace and odom -> body
on /tf, with map -> odom on /tf_static; bad commands are dropped, the server goes on."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from test.sim_plugins.test_ackermann_drive import CAR
from test.sim_plugins.test_omni_drive import BASE

WORLD = """properties: {}
models:
  - {name: car, model: car.model.yaml, namespace: car, pose: [0, 0, 0]}
  - {name: omni, model: base.model.yaml, namespace: omni, pose: [0, 5, 0]}
"""


def _write(folder: Path) -> Path:
    (folder / "car.model.yaml").write_text(CAR.format(keys="    max_steer_angle: 0.5\n    pub_rate: 50"))
    (folder / "base.model.yaml").write_text(BASE.format(keys="    pub_rate: 50"))
    (folder / "world.yaml").write_text(WORLD)
    return folder / "world.yaml"


def test_a_car_and_an_omni_base_take_their_commands_and_publish_odometry_and_tf(ros_context, tmp_path: Path) -> None:
    from ackermann_msgs.msg import AckermannDriveStamped
    from geometry_msgs.msg import Twist
    from nav_msgs.msg import Odometry
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    from test.ros.conftest import Harness

    harness = Harness(ros_context, _write(tmp_path))
    try:
        client = harness.client
        odometry: dict[str, list] = {"/car/odometry/filtered": [], "/omni/odometry/filtered": []}
        for topic, messages in odometry.items():
            client.create_subscription(Odometry, topic, messages.append, 10)
        tf: list = []
        client.create_subscription(TFMessage, "/tf", tf.append, 100)
        statics: list = []
        client.create_subscription(TFMessage, "/tf_static", statics.append, QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
        ackermann = client.create_publisher(AckermannDriveStamped, "/car/ackermann_cmd", 1)
        twist = client.create_publisher(Twist, "/omni/cmd_vel", 1)
        car = harness.server.world.plugins.find(harness.server.world.models["car"], "drive")
        omni = harness.server.world.plugins.find(harness.server.world.models["omni"], "drive")

        command = AckermannDriveStamped()
        command.drive.speed, command.drive.steering_angle = 1.0, 0.3
        sideways = Twist()
        sideways.linear.y, sideways.angular.z = -0.4, 0.2

        def moving() -> bool:
            ackermann.publish(command)
            twist.publish(sideways)
            return car.speed > 0.9 and omni.state[1] < -0.3

        harness.run_until(moving, "both drives moving")
        assert car.steering_angle == pytest.approx(0.3) and omni.state.tolist() == pytest.approx([0.0, -0.4, 0.2])

        odometry_count = {topic: len(messages) for topic, messages in odometry.items()}
        harness.run_until(lambda: all(len(m) > odometry_count[t] + 2 for t, m in odometry.items()) and bool(statics),
                          "odometry and /tf_static")
        car_odometry, omni_odometry = odometry["/car/odometry/filtered"][-1], odometry["/omni/odometry/filtered"][-1]
        assert (car_odometry.header.frame_id, car_odometry.child_frame_id) == ("car_odom", "car_base")
        assert car_odometry.twist.twist.linear.x == pytest.approx(1.0, rel=1e-3)
        assert car_odometry.twist.twist.angular.z == pytest.approx(math.tan(0.3), rel=1e-3)
        assert omni_odometry.twist.twist.linear.y == pytest.approx(-0.4, rel=1e-3)
        sent = {(t.header.frame_id, t.child_frame_id) for message in tf for t in message.transforms}
        assert {("car_odom", "car_base"), ("omni_odom", "omni_base")} <= sent
        latched = {(t.header.frame_id, t.child_frame_id) for message in statics for t in message.transforms}
        assert {("map", "car_odom"), ("map", "omni_odom")} <= latched

        # A cmd_vel Twist takes over the car: linear.x speed, angular.z the steering angle.
        car_twist = client.create_publisher(Twist, "/car/cmd_vel", 1)
        straight = Twist()
        straight.linear.x = 0.5

        def straightened() -> bool:
            car_twist.publish(straight)
            return abs(car.steering_angle) < 1e-9 and abs(car.speed - 0.5) < 1e-9

        harness.run_until(straightened, "the car driving straight")
        # Bad commands are dropped, the drive keeps its command and the server goes on.
        command.drive.speed = math.nan
        bad = Twist()
        bad.linear.y = math.inf
        for _ in range(3):
            ackermann.publish(command)
            twist.publish(bad)
            harness.run_ticks(20)
        assert car.speed == pytest.approx(0.5) and omni.state[1] == pytest.approx(-0.4)
    finally:
        harness.close()
