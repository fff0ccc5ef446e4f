"""The wire format: markers as CDR bytes, joined into MarkerArray messages without a message object.

A marker is a *template*, its bytes from ``id`` on, made once by rclpy's serializer per shape,
colour, line width and frame lock (a thousand robots of one model file share theirs:
:mod:`.markers`), for both offsets modulo 8 a marker can start at (CDR aligns 8-byte values
relative to the message), and a *head* written here (stamp, frame id, namespace). A map-frame
marker's pose (a joint's points) is rewritten in place; a message is the CDR header, the count
and the markers' bytes joined, published as raw bytes. No message object is built per refresh:
rclpy converts a MarkerArray of 5,000 markers in about 100 ms, while joining its bytes takes well
under one. The scheme is checked against rclpy's serializer (joined bytes must deserialize to the
markers) when the first :class:`~.publisher.DebugVisualization` starts (:func:`wire`).
"""

from __future__ import annotations

import math
import struct
from typing import Iterable, Sequence

import numpy as np
from geometry_msgs.msg import Point
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import Marker, MarkerArray

from sim_server.core.timing.timekeeper import NANOSECONDS_PER_SECOND
from sim_server.ros.visualization.messages import delete_marker, new_marker, set_pose


class WireFormatError(RuntimeError):
    """Markers joined from their bytes do not deserialize to the markers they were made from."""


_ZEROS = (b"", b"\0", b"\0\0", b"\0\0\0")


class MarkerTemplate:
    """A marker's serialized bytes from its ``id`` on (everything but stamp, frame and namespace).

    ``tails[k]`` is for an ``id`` at a payload offset of ``4 k`` modulo 8 (CDR aligns 8-byte values
    relative to the message, so the bytes depend on it); ``pose_at[k]`` and ``points_at[k]`` are
    where in it the pose's 7 doubles and the first point start (-1 when not noted).
    """

    __slots__ = ("tails", "pose_at", "points_at")

    def __init__(self, tails: list[bytes], pose_at: list[int], points_at: list[int]) -> None:
        self.tails = tails
        self.pose_at = pose_at
        self.points_at = points_at


class MarkerBytes:
    """One marker serialized for both start offsets it can have in a MarkerArray.

    ``variants[0]`` is for a start (payload offset) divisible by 8, ``variants[1]`` for one that
    is 4 more than a multiple of 8 (a marker starts with an int32, so at a multiple of 4; its
    length need not be one: padding goes between markers); :attr:`pose_at` and
    :attr:`points_at` hold, per variant, where the pose and the first point start (-1: not
    noted). The stamp is at offset 0 of either variant.
    """

    __slots__ = ("variants", "pose_at", "points_at")

    def __init__(self, variants: list[bytearray], pose_at: list[int], points_at: list[int]) -> None:
        self.variants = variants
        self.pose_at = pose_at
        self.points_at = points_at


class Wire:
    """Serializes markers and joins their bytes into MarkerArray messages (see the module doc).

    A marker is a *template* (its bytes from ``id`` on, made by rclpy's serializer, shared by
    every marker of the same shape, color and frame lock) and a *head* written here: stamp,
    frame id and namespace (CDR: two int32, then each string as a uint32 length, its UTF-8 bytes
    and a NUL, padded to 4).
    """

    def __init__(self) -> None:
        empty = serialize_message(MarkerArray())
        self.encapsulation = bytes(empty[:4])
        order = "<" if empty[1] & 1 else ">"  # CDR_LE / PL_CDR_LE have the low bit set
        self._count = struct.Struct(order + "I")
        self._int32 = struct.Struct(order + "i")
        self._stamp = struct.Struct(order + "iI")
        self._pose = struct.Struct(order + "7d")
        #: ``pack_into`` of a stamp (sec, nanosec) and of a pose (7 doubles), for hot loops.
        self.stamp_packer = self._stamp.pack_into
        self.pose_packer = self._pose.pack_into
        self._order = order
        self.float64 = np.dtype(order + "f8")
        # Sentinels: doubles whose bytes (0xF8 and up) never occur in UTF-8, so in no name.
        self._pose_values = tuple(_sentinel(k) for k in range(7))
        self._pose_bytes = self._pose.pack(*self._pose_values)
        self._point_values = tuple(_sentinel(k) for k in range(7, 10))
        self._point_bytes = struct.pack(order + "3d", *self._point_values)
        # A marker that, placed first, makes the next marker start at a multiple of 8 (its text,
        # never published, sets its length).
        for length in range(16):
            pad = Marker(text="p" * length)
            size = len(serialize_message(MarkerArray(markers=[pad]))) - 8
            start = (4 + size + 3) & ~3
            if start % 8 == 0:
                self._pad, self._pad_start = pad, 4 + start
                break
        else:  # pragma: no cover - the text's length moves the size in steps of 1
            raise WireFormatError("no marker size makes the next one start at a multiple of 8")
        self._empty_head = len(self._head(0, "", ""))

    def _head(self, stamp_ns: int, frame: str, namespace: str) -> bytearray:
        head = bytearray(self._stamp.pack(*divmod(stamp_ns, NANOSECONDS_PER_SECOND)))
        for text in (frame, namespace):
            data = text.encode("utf-8", "replace") + b"\0"
            head += self._count.pack(len(data))
            head += data
            head += _ZEROS[-len(head) & 3]
        return head

    def template(self, marker: Marker, points: np.ndarray | None = None, pose: bool = False) -> MarkerTemplate:
        """The template of ``marker`` (which this call changes: pass a throw-away one); its stamp,
        frame, namespace and id are the instances' (:meth:`instance`).

        Args:
            marker: the marker; its ``points`` are replaced when ``points`` is given.
            points: (N, 3) float64 points, N > 0, written straight into the bytes.
            pose: note where the pose is, to rewrite it (:meth:`set_pose`); else the marker's.
        """
        marker.header.frame_id = marker.ns = ""
        marker.id = 0
        marker.header.stamp.sec = marker.header.stamp.nanosec = 0
        if pose:
            position, orientation = marker.pose.position, marker.pose.orientation
            (position.x, position.y, position.z, orientation.x, orientation.y, orientation.z,
             orientation.w) = self._pose_values
        if points is not None:
            x, y, z = self._point_values
            marker.points = [Point(x=x, y=y, z=z)]
            points_bytes = np.ascontiguousarray(points, dtype=self.float64).tobytes()
        tails: list[bytes] = [b"", b""]
        pose_at, points_at = [-1, -1], [-1, -1]
        for aligned in (True, False):
            data = serialize_message(MarkerArray(markers=[self._pad, marker] if aligned else [marker]))
            tail = bytearray(data[(self._pad_start if aligned else 8) + self._empty_head:])
            k = (((0 if aligned else 4) + self._empty_head) >> 2) & 1  # where the id lands (mod 8)
            if pose:
                pose_at[k] = tail.find(self._pose_bytes)
                if pose_at[k] < 0:
                    raise WireFormatError("cannot find the pose of a serialized marker")
            if points is not None:
                first = tail.find(self._point_bytes, max(pose_at[k], 0))
                one = self._count.pack(1)
                count_at = first - 4 if tail[first - 4:first] == one else first - 8
                if first < 0 or tail[count_at:count_at + 4] != one:
                    raise WireFormatError("cannot find the points of a serialized marker")
                tail[first:first + len(self._point_bytes)] = points_bytes
                self._count.pack_into(tail, count_at, len(points))
                points_at[k] = first
            tails[k] = bytes(tail)
        return MarkerTemplate(tails, pose_at, points_at)

    def instance(self, template: MarkerTemplate, frame: str, namespace: str, marker_id: int, stamp_ns: int) -> MarkerBytes:
        """A marker of ``template`` with this frame, namespace, id and stamp."""
        head = self._head(stamp_ns, frame, namespace)
        size = len(head)
        variants = []
        pose_at, points_at = [-1, -1], [-1, -1]
        for start in (0, 4):
            k = ((start + size) >> 2) & 1
            chunk = head + template.tails[k]
            self._int32.pack_into(chunk, size, marker_id)
            variants.append(chunk)
            index = start >> 2
            if template.pose_at[k] >= 0:
                pose_at[index] = size + template.pose_at[k]
            if template.points_at[k] >= 0:
                points_at[index] = size + template.points_at[k]
        return MarkerBytes(variants, pose_at, points_at)

    def marker(self, marker: Marker, points: np.ndarray | None = None, pose: bool = False) -> MarkerBytes:
        """Serialize one ``marker`` (changed by the call) with its stamp, frame, namespace and id."""
        stamp = marker.header.stamp
        stamp_ns = stamp.sec * NANOSECONDS_PER_SECOND + stamp.nanosec
        frame, namespace, marker_id = marker.header.frame_id, marker.ns, marker.id
        return self.instance(self.template(marker, points, pose), frame, namespace, marker_id, stamp_ns)

    def set_pose(self, item: MarkerBytes, sec: int, nanosec: int, x: float, y: float, theta: float) -> None:
        """Rewrite the stamp and the planar pose of a marker whose template noted its pose."""
        half = 0.5 * theta
        qz, qw = math.sin(half), math.cos(half)
        for chunk, at in zip(item.variants, item.pose_at):
            self._stamp.pack_into(chunk, 0, sec, nanosec)
            self._pose.pack_into(chunk, at, x, y, 0.0, 0.0, 0.0, qz, qw)

    def set_points(self, item: MarkerBytes, sec: int, nanosec: int, values: Sequence[float]) -> None:
        """Rewrite the stamp and the first ``len(values) / 3`` points of a marker made with points."""
        packer = struct.Struct(f"{self._order}{len(values)}d")
        for chunk, at in zip(item.variants, item.points_at):
            self._stamp.pack_into(chunk, 0, sec, nanosec)
            packer.pack_into(chunk, at, *values)

    def layout(self, items: Iterable[MarkerBytes]) -> list:
        """The parts of a MarkerArray message of ``items`` (join them to get the message); they
        stay valid while the markers' bytes are only rewritten in place."""
        parts: list = [self.encapsulation, b""]
        offset = 4  # the count comes first
        count = 0
        for item in items:
            gap = -offset & 3  # a marker starts with an int32: padding to a multiple of 4
            if gap:
                parts.append(_ZEROS[gap])
                offset += gap
            chunk = item.variants[(offset >> 2) & 1]
            parts.append(chunk)
            offset += len(chunk)
            count += 1
        parts[1] = self._count.pack(count)
        return parts

    def message(self, items: Iterable[MarkerBytes]) -> bytes:
        """A serialized MarkerArray of ``items``."""
        return b"".join(self.layout(items))

    def self_check(self) -> None:
        """Raise :class:`WireFormatError` unless joined markers have the length of rclpy's
        serialization of the same array and deserialize to it (padding bytes are not compared:
        rclpy's serializer leaves them as they were)."""
        points = np.array([[0.5, -1.25, 0.0], [2.0, 3.0, 0.0], [-7.5, 1e-3, 0.0]])

        def samples() -> list[Marker]:
            made = [
                new_marker("check", 0, Marker.CYLINDER, (1.0, 0.5, 0.25, 1.0), "a"),
                new_marker("check/\u00fc\u5730", 1, Marker.LINE_STRIP, (0.125, 0.25, 0.375, 0.5), "frame_bc"),
                delete_marker("chk", 7),
                new_marker("cd", 2, Marker.LINE_LIST, (1.0, 1.0, 1.0, 1.0)),
                new_marker("e", 3, Marker.CYLINDER, (0.0, 0.5, 1.0, 1.0), "abc"),
            ]
            made[1].frame_locked = True
            made[1].scale.x = 0.05
            made[1].header.stamp.sec, made[1].header.stamp.nanosec = 5, 6
            made[3].scale.x = 0.1
            made[4].scale.x = made[4].scale.y = 0.5
            set_pose(made[4], 1.0, 2.0, 3.0)
            return made

        made = samples()
        items = [
            self.marker(made[0], pose=True),
            self.marker(made[1], points=points),
            self.marker(made[2]),
            self.marker(made[3], points=points[:2]),
            self.marker(made[4]),
        ]
        self.set_pose(items[0], 12, 345, 1.5, -2.5, 0.75)
        self.set_points(items[3], 3, 4, [9.0, 8.0, 0.0, 7.0, 6.0, 0.0])
        expected = samples()
        expected[0].header.stamp.sec, expected[0].header.stamp.nanosec = 12, 345
        set_pose(expected[0], 1.5, -2.5, 0.75)
        expected[1].points = [Point(x=p[0], y=p[1], z=p[2]) for p in points]
        expected[3].header.stamp.sec, expected[3].header.stamp.nanosec = 3, 4
        expected[3].points = [Point(x=9.0, y=8.0), Point(x=7.0, y=6.0)]
        for order in ([0, 1, 2, 3, 4], [2, 1, 0, 4, 3], [1, 3, 2, 0], [4, 3, 0], [0], []):
            joined = self.message(items[i] for i in order)
            array = MarkerArray(markers=[expected[i] for i in order])
            if len(joined) != len(serialize_message(array)) or deserialize_message(joined, MarkerArray) != array:
                raise WireFormatError(f"markers joined in the order {order} differ from rclpy's serialization")


def _sentinel(k: int) -> float:
    """A double near 1 whose bytes include 0xF8-0xFF, which occur in no UTF-8 text."""
    return struct.unpack("<d", bytes([0xF8 + k % 4, 0xFC, 0xF8 + k // 4, 0xFD, 0xFE, 0xFF, 0xF0, 0x3F]))[0]


_WIRE: Wire | None = None


def wire() -> Wire:
    """The process's :class:`Wire`, checked against rclpy's serializer when first made."""
    global _WIRE
    if _WIRE is None:
        made = Wire()
        made.self_check()
        _WIRE = made
    return _WIRE
