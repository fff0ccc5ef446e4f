"""ROS 2 messages without ROS: the hand-serialized /clock and LaserScan are byte for byte what
rclpy serializes, TFMessage is what rclpy reads, and the ros2msg schemas are the installed
packages' definitions, which mcap-ros2-support decodes our bytes with."""

from __future__ import annotations

import math
from array import array
from pathlib import Path

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage

from sim_server.core.format.ros2_cdr import (
    SCHEMAS, LaserScanCdr, clock_cdr, image_cdr, odometry_cdr, stamp_cdr, tf_message_cdr,
)


@pytest.mark.parametrize("time_ns", [0, 5_000_000, 1_999_999_999, 123 * 10**9 + 456, 2**31 * 10**9 - 1])
def test_clock_cdr_matches_rclpy_serialization(time_ns: int) -> None:
    message = Clock()
    message.clock.sec, message.clock.nanosec = divmod(time_ns, 10**9)
    assert clock_cdr(time_ns) == serialize_message(message)
    decoded = deserialize_message(clock_cdr(time_ns), Clock)
    assert decoded.clock.sec * 10**9 + decoded.clock.nanosec == time_ns


@pytest.mark.parametrize("seed", range(40))
def test_laser_scan_cdr_matches_rclpy_serialization(seed: int) -> None:
    rng = np.random.default_rng(seed)
    frame_id = "".join(rng.choice(list("abcxyz_019"), size=int(rng.integers(0, 12))))  # every padding
    angles = rng.uniform(-4.0, 4.0, 3).astype(np.float32)
    range_max = np.float32(rng.uniform(0.1, 100.0))
    ranges = rng.uniform(0.0, 100.0, int(rng.integers(0, 2000))).astype(np.float32)
    if seed % 5 == 0:
        ranges[::3] = np.nan  # out of range beams
    intensities = rng.uniform(0.0, 255.0, len(ranges)).astype(np.float32) if seed % 2 else None
    time_ns = int(rng.integers(0, 2**31 * 10**9))

    message = LaserScan()
    message.header.frame_id = frame_id
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(time_ns, 10**9)
    message.angle_min, message.angle_max, message.angle_increment = (float(a) for a in angles)
    message.range_max = float(range_max)
    message.ranges = array("f", ranges.tobytes())
    if intensities is not None:
        message.intensities = array("f", intensities.tobytes())
    serialized = LaserScanCdr(frame_id, *(float(a) for a in angles), 0.0, float(range_max)).serialize(
        stamp_cdr(time_ns), ranges.tobytes(), None if intensities is None else intensities.tobytes()
    )
    expected = bytearray(serialize_message(message))
    # rclpy leaves the alignment bytes after the frame id's string as they were in memory (not
    # always zero): those compare as zeros.
    string_end = 16 + len(frame_id) + 1  # encapsulation, stamp, string length, characters, NUL
    expected[string_end:string_end + (-(len(frame_id) + 1) % 4)] = bytes(-(len(frame_id) + 1) % 4)
    assert serialized == bytes(expected)
    decoded = deserialize_message(serialized, LaserScan)
    assert decoded.header.frame_id == frame_id and len(decoded.ranges) == len(ranges)


@pytest.mark.parametrize("seed", range(20))
def test_tf_message_cdr_is_what_rclpy_reads_and_as_long_as_it_writes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = ["map", "base", "a_b_laser_front", "x", "robot_12_base_link"]
    transforms = [
        (str(rng.choice(names)), str(rng.choice(names))[: int(rng.integers(1, 20))], float(rng.normal()), float(rng.normal()),
         float(rng.uniform(-7, 7)), bool(rng.integers(2)))
        for _ in range(int(rng.integers(0, 6)))
    ]
    time_ns = int(rng.integers(0, 2**31 * 10**9))
    serialized = tf_message_cdr(transforms, time_ns)
    decoded = deserialize_message(serialized, TFMessage)
    assert len(decoded.transforms) == len(transforms)
    for message, (parent, child, x, y, theta, flipped) in zip(decoded.transforms, transforms):
        assert (message.header.frame_id, message.child_frame_id) == (parent, child)
        assert message.header.stamp.sec * 10**9 + message.header.stamp.nanosec == time_ns
        assert (message.transform.translation.x, message.transform.translation.y) == (x, y)
        q = message.transform.rotation
        expected = (np.cos(theta / 2), np.sin(theta / 2), 0, 0) if flipped else (0, 0, np.sin(theta / 2), np.cos(theta / 2))
        assert np.allclose((q.x, q.y, q.z, q.w), expected)
    assert len(serialized) == len(serialize_message(decoded))  # the same layout, padding included


@pytest.mark.parametrize("type_name", sorted(SCHEMAS))
def test_the_schemas_are_what_the_installed_ros_defines(type_name: str) -> None:
    """Each ros2msg schema, field for field, is the definition of the ROS 2 package installed
    (comments and blank lines aside), and mcap-ros2-support decodes our bytes with it."""
    package, _, name = type_name.split("/")
    from ament_index_python.packages import get_package_share_directory

    def fields(path: Path) -> list[str]:
        lines = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
        return [" ".join(line.split()) for line in lines if line]

    parts = SCHEMAS[type_name].split("=" * 80 + "\n")
    assert fields_of(parts[0]) == fields(Path(get_package_share_directory(package)) / "msg" / f"{name}.msg")
    for part in parts[1:]:
        header, text = part.split("\n", 1)
        dependency, _, short = header.removeprefix("MSG: ").partition("/")
        assert fields_of(text) == fields(Path(get_package_share_directory(dependency)) / "msg" / f"{short}.msg"), header


def fields_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]


def test_mcap_ros2_support_decodes_our_messages_with_our_schemas() -> None:
    from mcap.records import Schema
    from mcap_ros2.decoder import DecoderFactory

    factory = DecoderFactory()

    def decode(type_name: str, data: bytes):
        schema = Schema(id=sorted(SCHEMAS).index(type_name) + 1, name=type_name, encoding="ros2msg",
                        data=SCHEMAS[type_name].encode())
        return factory.decoder_for("cdr", schema)(data)

    assert decode("rosgraph_msgs/msg/Clock", clock_cdr(5_000_000_123)).clock.nanosec == 123
    ranges = np.array([1.0, np.nan, 2.5], dtype=np.float32)
    scan = decode("sensor_msgs/msg/LaserScan", LaserScanCdr("laser", -1.0, 1.0, 1.0, 0.0, 20.0).serialize(
        stamp_cdr(7), ranges.tobytes()))
    assert scan.header.frame_id == "laser" and np.array_equal(np.array(scan.ranges, dtype=np.float32), ranges, equal_nan=True)
    tf = decode("tf2_msgs/msg/TFMessage", tf_message_cdr([("map", "base", 1.0, 2.0, 0.5, False)], 9))
    assert tf.transforms[0].child_frame_id == "base" and tf.transforms[0].transform.translation.y == 2.0


@pytest.mark.parametrize("seed", range(10))
def test_odometry_and_image_cdr_are_what_rclpy_reads_and_as_long_as_it_writes(seed: int) -> None:
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import Image

    rng = np.random.default_rng(seed)
    frame, child = "odom"[: int(rng.integers(1, 5))], "robot_base_link"[: int(rng.integers(1, 16))]
    values = [float(v) for v in rng.normal(size=6)]
    covariances = [float(v) for v in rng.uniform(0, 1, 72)]
    time_ns = int(rng.integers(0, 2**31 * 10**9))
    serialized = odometry_cdr(time_ns, frame, child, *values, covariances[:36], covariances[36:])
    odometry = deserialize_message(serialized, Odometry)
    assert (odometry.header.frame_id, odometry.child_frame_id) == (frame, child)
    assert odometry.header.stamp.sec * 10**9 + odometry.header.stamp.nanosec == time_ns
    pose, twist = odometry.pose.pose, odometry.twist.twist
    assert (pose.position.x, pose.position.y, twist.linear.x, twist.linear.y, twist.angular.z) == tuple(values[:2] + values[3:])
    assert np.isclose(2 * math.atan2(pose.orientation.z, pose.orientation.w), values[2]) or abs(values[2]) > math.pi
    assert list(odometry.pose.covariance) + list(odometry.twist.covariance) == covariances
    assert len(serialized) == len(serialize_message(odometry))

    width, height = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    pixels = rng.integers(0, 256, width * height * 3, dtype=np.uint8).tobytes()
    serialized = image_cdr(time_ns, child, pixels, width, height)
    image = deserialize_message(serialized, Image)
    assert (image.width, image.height, image.encoding, image.step, bytes(image.data)) == (width, height, "rgb8", 3 * width, pixels)
    assert len(serialized) == len(serialize_message(image))
