"""The ackermann_msgs package as built here (or as the ROS installation provides it) has the
upstream definitions (ros-drivers/ackermann_msgs, the same in ROS 1 and ROS 2): the fields, their
types and their order, which DDS matches on, so nodes built against the real package talk to
the simulator's AckermannDrive."""

from __future__ import annotations

import pytest

ackermann_msgs = pytest.importorskip("ackermann_msgs.msg", reason="built by make setup (compat/ackermann_msgs)")

UPSTREAM = {
    "AckermannDrive": [
        ("steering_angle", "float"), ("steering_angle_velocity", "float"), ("speed", "float"),
        ("acceleration", "float"), ("jerk", "float"),
    ],
    "AckermannDriveStamped": [("header", "std_msgs/Header"), ("drive", "ackermann_msgs/AckermannDrive")],
}


@pytest.mark.parametrize("name", sorted(UPSTREAM))
def test_fields_are_upstreams_in_order(name: str) -> None:
    generated = getattr(ackermann_msgs, name)
    assert list(generated.get_fields_and_field_types().items()) == UPSTREAM[name]


def test_a_stamped_command_round_trips_through_serialization() -> None:
    from rclpy.serialization import deserialize_message, serialize_message

    message = ackermann_msgs.AckermannDriveStamped()
    message.header.frame_id = "base_link"
    message.drive.speed, message.drive.steering_angle, message.drive.acceleration = 1.5, -0.25, 2.0
    back = deserialize_message(serialize_message(message), ackermann_msgs.AckermannDriveStamped)
    assert (back.header.frame_id, back.drive.speed, back.drive.steering_angle, back.drive.acceleration) == (
        "base_link", 1.5, -0.25, 2.0)
