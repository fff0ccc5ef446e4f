"""Conversions between core types and ROS messages."""

from __future__ import annotations

import math
import struct

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, Pose2D as Pose2DMsg

from sim_server.core.geometry import Pose2D
from sim_server.core.timekeeper import NANOSECONDS_PER_SECOND


def time_msg(time_ns: int) -> Time:
    """A builtin_interfaces/Time for ``time_ns`` nanoseconds."""
    sec, nanosec = divmod(time_ns, NANOSECONDS_PER_SECOND)
    return Time(sec=sec, nanosec=nanosec)


#: rosgraph_msgs/Clock serialized (CDR, little-endian): the encapsulation header, then the
#: stamp's sec (int32) and nanosec (uint32).
_CLOCK_CDR = struct.Struct("<4siI")
_CDR_LITTLE_ENDIAN = b"\x00\x01\x00\x00"


def clock_cdr(time_ns: int) -> bytes:
    """A serialized rosgraph_msgs/Clock at ``time_ns`` nanoseconds, for ``publish`` (which sends
    bytes as they are: no message object to build and convert, every step)."""
    sec, nanosec = divmod(time_ns, NANOSECONDS_PER_SECOND)
    return _CLOCK_CDR.pack(_CDR_LITTLE_ENDIAN, sec, nanosec)


def set_stamp(header, time_ns: int) -> None:
    """Write ``time_ns`` into a std_msgs/Header's stamp in place (no message allocated)."""
    header.stamp.sec, header.stamp.nanosec = divmod(time_ns, NANOSECONDS_PER_SECOND)


def pose2d_from_msg(msg: Pose2DMsg) -> Pose2D:
    """A core pose from geometry_msgs/Pose2D."""
    return Pose2D(float(msg.x), float(msg.y), float(msg.theta))


def set_pose_msg(target: Pose, x: float, y: float, theta: float) -> None:
    """Write a planar pose (m, rad) into a geometry_msgs/Pose in place."""
    target.position.x = x
    target.position.y = y
    target.position.z = 0.0
    half = 0.5 * theta
    target.orientation.x = 0.0
    target.orientation.y = 0.0
    target.orientation.z = math.sin(half)
    target.orientation.w = math.cos(half)
