"""ROS 2 messages as bytes, without ROS: CDR serialization (little-endian, as rmw sends and
rosbag2 stores) and ``ros2msg`` schemas of the messages the simulator publishes or records.

The ROS node publishes laser scans and ``/clock`` through these (no message object per scan),
and a recording with ROS 2 encoding (:mod:`sim_server.live.feed`) writes ``/tf``, ``/clock`` and
the scans with them, so ROS tools (rosbag2's MCAP storage, ``mcap-ros2-support``) read the file
without the simulator. Units: seconds and nanoseconds of sim time, metres, radians.
"""

from __future__ import annotations

import math
import struct
from typing import Iterable, Sequence

NANOSECONDS_PER_SECOND = 1_000_000_000
#: The encapsulation header of CDR, little-endian.
CDR_LITTLE_ENDIAN = b"\x00\x01\x00\x00"
#: The message encoding and the schema encoding of ROS 2 messages in MCAP.
MESSAGE_ENCODING, SCHEMA_ENCODING = "cdr", "ros2msg"

_CLOCK_CDR = struct.Struct("<4siI")
_STAMP_CDR = struct.Struct("<iI")
_COUNT_CDR = struct.Struct("<I")
_SCAN_FIELDS_CDR = struct.Struct("<7f")
_NO_INTENSITIES_CDR = _COUNT_CDR.pack(0)

_SEPARATOR = "=" * 80
_TIME = "int32 sec\nuint32 nanosec\n"
_HEADER = "builtin_interfaces/Time stamp\nstring frame_id\n"


def _schema(main: str, *parts: tuple[str, str]) -> str:
    """A ``ros2msg`` schema: the message's definition, then each one it uses (as rosbag2 writes)."""
    return main + "".join(f"{_SEPARATOR}\nMSG: {name}\n{text}" for name, text in parts)


#: ``ros2msg`` schemas by type name.
SCHEMAS = {
    "rosgraph_msgs/msg/Clock": _schema("builtin_interfaces/Time clock\n", ("builtin_interfaces/Time", _TIME)),
    "sensor_msgs/msg/LaserScan": _schema(
        "std_msgs/Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\nfloat32 time_increment\n"
        "float32 scan_time\nfloat32 range_min\nfloat32 range_max\nfloat32[] ranges\nfloat32[] intensities\n",
        ("std_msgs/Header", _HEADER), ("builtin_interfaces/Time", _TIME),
    ),
    "sensor_msgs/msg/Image": _schema(
        "std_msgs/Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\n"
        "uint8[] data\n",
        ("std_msgs/Header", _HEADER), ("builtin_interfaces/Time", _TIME),
    ),
    "nav_msgs/msg/Odometry": _schema(
        "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/PoseWithCovariance pose\n"
        "geometry_msgs/TwistWithCovariance twist\n",
        ("std_msgs/Header", _HEADER), ("builtin_interfaces/Time", _TIME),
        ("geometry_msgs/PoseWithCovariance", "Pose pose\nfloat64[36] covariance\n"),
        ("geometry_msgs/Pose", "Point position\nQuaternion orientation\n"),
        ("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n"),
        ("geometry_msgs/Quaternion", "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"),
        ("geometry_msgs/TwistWithCovariance", "Twist twist\nfloat64[36] covariance\n"),
        ("geometry_msgs/Twist", "Vector3 linear\nVector3 angular\n"),
        ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n"),
    ),
    "tf2_msgs/msg/TFMessage": _schema(
        "geometry_msgs/TransformStamped[] transforms\n",
        ("geometry_msgs/TransformStamped", "std_msgs/Header header\nstring child_frame_id\nTransform transform\n"),
        ("std_msgs/Header", _HEADER), ("builtin_interfaces/Time", _TIME),
        ("geometry_msgs/Transform", "Vector3 translation\nQuaternion rotation\n"),
        ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n"),
        ("geometry_msgs/Quaternion", "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n"),
    ),
}


def clock_cdr(time_ns: int) -> bytes:
    """A serialized rosgraph_msgs/Clock at ``time_ns`` nanoseconds."""
    sec, nanosec = divmod(time_ns, NANOSECONDS_PER_SECOND)
    return _CLOCK_CDR.pack(CDR_LITTLE_ENDIAN, sec, nanosec)


def stamp_cdr(time_ns: int) -> bytes:
    """A builtin_interfaces/Time at ``time_ns`` nanoseconds in CDR, for :meth:`LaserScanCdr.serialize`."""
    return _STAMP_CDR.pack(*divmod(time_ns, NANOSECONDS_PER_SECOND))


def _string(text: str) -> bytes:
    """A CDR string (at a 4-aligned offset): its length with the NUL, its bytes, the NUL."""
    data = text.encode() + b"\x00"
    return _COUNT_CDR.pack(len(data)) + data


class LaserScanCdr:
    """Serializes sensor_msgs/LaserScan of one laser: building a message object and converting
    it costs three times as much as publishing, for every scan of every laser.

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
        text = _string(frame_id)
        padding = b"\x00" * (-len(text) % 4)  # the stamp's 8 bytes keep the string 4-aligned
        fields = _SCAN_FIELDS_CDR.pack(angle_min, angle_max, angle_increment, 0.0, 0.0, range_min, range_max)
        self._fixed = text + padding + fields

    def serialize(self, stamp: bytes, ranges: bytes, intensities: bytes | None = None) -> bytes:
        """The message at ``stamp`` (from :func:`stamp_cdr`) with ``ranges`` and ``intensities``
        given as the bytes of float32 arrays."""
        return b"".join((
            CDR_LITTLE_ENDIAN,
            stamp,
            self._fixed,
            _COUNT_CDR.pack(len(ranges) // 4),
            ranges,
            _COUNT_CDR.pack(len(intensities) // 4) + intensities if intensities else _NO_INTENSITIES_CDR,
        ))


class _Writer:
    """CDR little-endian, aligned from the end of the encapsulation header."""

    def __init__(self) -> None:
        self.out = bytearray(CDR_LITTLE_ENDIAN)

    def align(self, size: int) -> None:
        self.out += b"\x00" * (-(len(self.out) - len(CDR_LITTLE_ENDIAN)) % size)

    def uint32(self, value: int) -> None:
        self.align(4)
        self.out += _COUNT_CDR.pack(value)

    def header(self, stamp: bytes, frame: str) -> None:
        self.align(4)
        self.out += stamp
        self.string(frame)

    def string(self, text: str) -> None:
        self.align(4)
        self.out += _string(text)

    def float64s(self, *values: float) -> None:
        self.align(8)
        self.out += struct.pack(f"<{len(values)}d", *values)

    def raw(self, data: bytes) -> None:
        self.out += data


def _quaternion(theta: float, flipped: bool = False) -> tuple[float, float, float, float]:
    """A yaw of ``theta`` (rad) as a quaternion (x, y, z, w); ``flipped``: rolled over by pi first."""
    half = 0.5 * theta
    return (math.cos(half), math.sin(half), 0.0, 0.0) if flipped else (0.0, 0.0, math.sin(half), math.cos(half))


def tf_message_cdr(transforms: Iterable[tuple[str, str, float, float, float, bool]], time_ns: int) -> bytes:
    """A serialized tf2_msgs/TFMessage of planar ``transforms`` (parent, child, x, y, theta,
    flipped: rolled over by pi, as an upside-down laser), all stamped ``time_ns``."""
    stamp = stamp_cdr(time_ns)
    items = list(transforms)
    writer = _Writer()
    writer.uint32(len(items))
    for parent, child, x, y, theta, flipped in items:
        writer.header(stamp, parent)
        writer.string(child)
        writer.float64s(x, y, 0.0, *_quaternion(theta, flipped))
    return bytes(writer.out)


def odometry_cdr(time_ns: int, frame: str, child: str, x: float, y: float, theta: float, vx: float, vy: float, wz: float,
                 pose_covariance: Sequence[float], twist_covariance: Sequence[float]) -> bytes:
    """A serialized nav_msgs/Odometry: a planar pose (m, rad) in ``frame`` and twist (m/s,
    rad/s) of ``child``, with 36-number covariances."""
    writer = _Writer()
    writer.header(stamp_cdr(time_ns), frame)
    writer.string(child)
    writer.float64s(x, y, 0.0, *_quaternion(theta), *pose_covariance)
    writer.float64s(vx, vy, 0.0, 0.0, 0.0, wz, *twist_covariance)
    return bytes(writer.out)


def image_cdr(time_ns: int, frame: str, pixels: bytes, width: int, height: int, encoding: str = "rgb8",
              bytes_per_pixel: int = 3) -> bytes:
    """A serialized sensor_msgs/Image of ``pixels`` (rows top to bottom)."""
    writer = _Writer()
    writer.header(stamp_cdr(time_ns), frame)
    writer.uint32(height)
    writer.uint32(width)
    writer.string(encoding)
    writer.raw(b"\x00")  # is_bigendian
    writer.uint32(width * bytes_per_pixel)
    writer.uint32(len(pixels))
    writer.raw(pixels)
    return bytes(writer.out)
