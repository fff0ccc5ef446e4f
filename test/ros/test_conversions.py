"""Message conversions: the hand-serialized /clock and LaserScan are byte for byte what rclpy serializes."""

from __future__ import annotations

from array import array

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan

from sim_server.ros.conversions import LaserScanCdr, clock_cdr, stamp_cdr


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
