"""Message conversions: the hand-serialized /clock is byte for byte what rclpy serializes."""

from __future__ import annotations

import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock

from sim_server.ros.conversions import clock_cdr


@pytest.mark.parametrize("time_ns", [0, 5_000_000, 1_999_999_999, 123 * 10**9 + 456, 2**31 * 10**9 - 1])
def test_clock_cdr_matches_rclpy_serialization(time_ns: int) -> None:
    message = Clock()
    message.clock.sec, message.clock.nanosec = divmod(time_ns, 10**9)
    assert clock_cdr(time_ns) == serialize_message(message)
    decoded = deserialize_message(clock_cdr(time_ns), Clock)
    assert decoded.clock.sec * 10**9 + decoded.clock.nanosec == time_ns
