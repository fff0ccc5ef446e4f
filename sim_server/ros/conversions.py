"""Conversions between core types and ROS messages."""

from __future__ import annotations

import math
import struct

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, Pose2D as Pose2DMsg

from sim_server.core.geometry import Pose2D
from sim_server.core.timing.timekeeper import NANOSECONDS_PER_SECOND


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


_STAMP_CDR = struct.Struct("<iI")
_COUNT_CDR = struct.Struct("<I")
_SCAN_FIELDS_CDR = struct.Struct("<7f")
_NO_INTENSITIES_CDR = _COUNT_CDR.pack(0)


class LaserScanCdr:
    """Serializes sensor_msgs/LaserScan of one laser (CDR, little-endian) for ``publish``, which
    sends bytes as they are: building a message object and converting it costs three times as
    much as publishing, for every scan of every laser.

    Everything in the message is 4-byte aligned except where the frame id's string ends, so the
    fixed part (frame id, angles, ranges) is laid out once here.

    Args:
        frame_id: the header's frame.
        angle_min, angle_max, angle_increment: the scan's angles (rad).
        range_min, range_max: the ranges' bounds (m).
    """

    __slots__ = ("_fixed",)

    def __init__(self, frame_id: str, angle_min: float, angle_max: float, angle_increment: float,
                 range_min: float, range_max: float) -> None:
        text = frame_id.encode() + b"\x00"
        padding = b"\x00" * (-len(text) % 4)  # the stamp's 8 bytes keep the string 4-aligned
        fields = _SCAN_FIELDS_CDR.pack(angle_min, angle_max, angle_increment, 0.0, 0.0, range_min, range_max)
        self._fixed = _COUNT_CDR.pack(len(text)) + text + padding + fields

    def serialize(self, stamp: bytes, ranges: bytes, intensities: bytes | None = None) -> bytes:
        """The message at ``stamp`` (from :func:`stamp_cdr`) with ``ranges`` and ``intensities``
        given as the bytes of float32 arrays."""
        return b"".join((
            _CDR_LITTLE_ENDIAN,
            stamp,
            self._fixed,
            _COUNT_CDR.pack(len(ranges) // 4),
            ranges,
            _COUNT_CDR.pack(len(intensities) // 4) + intensities if intensities else _NO_INTENSITIES_CDR,
        ))


def stamp_cdr(time_ns: int) -> bytes:
    """A builtin_interfaces/Time at ``time_ns`` nanoseconds in CDR, for :meth:`LaserScanCdr.serialize`."""
    return _STAMP_CDR.pack(*divmod(time_ns, NANOSECONDS_PER_SECOND))


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
