"""Debug markers for RViz: every layer and model on one topic each, and on a topic of its own.

Topics (relative to the node's private namespace; all ``visualization_msgs/MarkerArray``,
reliable, transient local, depth 1):

``~/debug/layers``
    Every layer: marker namespace = the layer's name, id 0, its loaded edges as one LINE_LIST in
    frame ``map``. A layer with no loaded edges (no map, or every tile streamed out) sends a
    DELETE of that marker, never an empty line list.
``~/debug/models``
    Every model: marker namespace = the model's name (so RViz lists every model under
    *Namespaces* and each can be switched off), ids 0, 1, ... : per footprint a CYLINDER (circle)
    or closed LINE_STRIP (polygon), per joint lines from each body to its anchor.
``~/debug/layer/<token>``, ``~/debug/model/<token>``
    Flatland's per-entity topics: the same markers of one entity (a layer's message starts with
    a DELETEALL; a deleted model's topic gets a DELETEALL). ``<token>`` is the entity's name made
    a visible topic token (:mod:`sim_server.ros.names`).
``~/debug/topics``
    ``sim_msgs/DebugTopicList`` of the per-entity topics.

Full state, not deltas. A transient-local topic of depth 1 keeps only its last message, and that
message is all a subscriber joining late receives; a reliable subscriber that falls behind may
also skip messages. So every message on ``~/debug/layers`` and ``~/debug/models`` is the complete
current state: an ADD for every marker of every entity, plus, for ``~/debug/models``, a DELETE
for each marker of the models removed (deleted, or streamed out by levels) within the last
:data:`TOMBSTONE_TIME` wall seconds. A subscriber that was there sees those markers go; one that
joins later never had them. Only the removed model's markers go (DELETE by namespace and id, not
a DELETEALL). The models' message is sent in the refresh rounds (``viz_pub_rate``) in which models
came or went, and, while somebody subscribes, in rounds in which a marker drawn in ``map`` moved
(for motion alone at most :data:`MAX_MARKERS_PER_SECOND` markers a second: a world of thousands
of markers gets fewer, larger steps instead of swamping RViz, which redraws every marker it gets).

Frame-locked markers (the rule). A body whose TF frame (``<namespace>_<body>``, or ``<body>``
without a namespace: the plugins' frame rule) is published by this server's plugins with one
chain of parents up to ``map`` gets its footprints in that frame with ``frame_locked: true``:
RViz draws them where TF puts the body, at TF's rate, and they are sent only when models come or
go. A frame is on TF when a plugin claims it (the :class:`~sim_server.ros.tf_broadcast.TfBroadcaster`
registry of child frame, parent and owner, filled by the plugins as they initialise); the
chain must reach ``map`` with exactly one parent per frame and at most one plugin sending each
frame on ``/tf``. Typical cases: a ModelTfPublisher with ``publish_tf_world: true`` (``map ->
reference -> other bodies``), or a DiffDrive (``map -> <ns>_odom``, static, ``-> <ns>_<body>``)
with a ModelTfPublisher adding the other bodies. A DiffDrive's TF is its odometry, so with odometry
noise the footprint is drawn where the odometry believes the body is (as RViz draws the body's
laser scans). Every other body (no TF, a frame sent by two plugins or with two parents, two models
without namespaces sharing frame names, bodies a ModelTfPublisher excludes) is drawn in ``map``,
re-posed at ``viz_pub_rate`` while it moves. A joint is drawn as a line from each body's origin
to its anchor, in the two bodies' frames when both are locked, else in ``map``. Lock states are
checked when a model comes and again, at the next refresh, for the models sharing a frame of its
chains when any model comes or goes.

Wire format. A marker is a *template*, its bytes from ``id`` on, made once by rclpy's serializer
per shape, colour, line width and frame lock (a thousand robots of one model file share theirs),
for both offsets modulo 8 a marker can start at (CDR aligns 8-byte values relative to the
message), and a *head* written here (stamp, frame id, namespace). A map-frame marker's pose (a
joint's points) is rewritten in place; a message is the CDR header, the count and the markers'
bytes joined, published as raw bytes. No message object is built per refresh: rclpy converts a
MarkerArray of 5,000 markers in about 100 ms, while joining its bytes takes well under one. A
layer's line list is written straight from its edge array. The scheme is checked against rclpy's
serializer (joined bytes must deserialize to the markers) when the first
:class:`DebugVisualization` starts (:func:`wire`).

Costs (2-core development machine, shared): a model's markers take about 25 us to make (its
per-model publisher about 1 ms more with a thousand models). With 1,000 robots whose bodies are
on TF a refresh round costs about 0.02 ms: nothing moves in ``map``, nothing is sent. With 1,000
moving robots without TF it costs 7-20 ms (reading 1,000 Box2D poses, rewriting 2,000 markers,
sending 0.5 MB), so rounds are skipped as needed to keep them under :data:`MAX_REFRESH_SHARE`
of the wall time. Nothing is re-posed while nobody subscribes. (Frame-locked markers ride along
in every message, as a full state must; a world mixing thousands of them with moving map-frame
ones is where the marker budget above slows the messages down.)

Models come and go often with level streaming, and creating a publisher costs about 0.2 ms: a
removed model of a level keeps its per-model publisher, with its DELETEALL latched, for
:data:`PARK_TIME` seconds (at most :data:`MAX_PARKED` of them), so that the model, coming back by
the same name, gets it again. A deleted model's publisher goes after :data:`RETIRE_TIME`
(unless a model of the same name takes it back before). The topic list is republished once per
round of changes, not once per model.
"""

from __future__ import annotations

import math
import struct
import time
from collections import OrderedDict
from typing import Callable, Iterable, Sequence

import numpy as np
from geometry_msgs.msg import Point
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.msg import DebugTopicList
from sim_server.core.physics.layer import Layer
from sim_server.core.physics.model import Model
from sim_server.core.timing.timekeeper import NANOSECONDS_PER_SECOND
from sim_server.core.world import World
from sim_server.ros.names import ALL_LAYERS_TOPIC, ALL_MODELS_TOPIC, TopicTokens
from sim_server.ros.parameter_spec import DEFAULT_MARKER_LINE_WIDTH
from sim_server.ros.subscriber_check import SubscriberCheck
from sim_server.ros.tf_broadcast import existing_broadcaster

#: The fixed frame: frame of the layers and of every marker not locked to a body frame.
VIZ_FRAME = "map"
#: Height of drawn cylinders (m).
CYLINDER_HEIGHT = 0.01
#: How long (s, wall time) a deleted model's publisher is kept, its DELETEALL latched, for a
#: model of the same name to reuse before the topic goes.
PARK_TIME = 60.0
#: Most publishers of deleted models kept at once (the oldest go first).
MAX_PARKED = 1000
#: Wall seconds the publisher of a deleted model (not one of a level) is kept to deliver its
#: DELETEALL before it is destroyed.
RETIRE_TIME = 2.0
#: Wall seconds the DELETEs of a removed model's markers stay in the all-models message.
TOMBSTONE_TIME = 10.0
#: Most such DELETEs kept (the oldest models' go first), so that a storm of spawns and deletes
#: does not swell every message.
MAX_TOMBSTONES = 5000
#: Largest share of wall time spent re-posing map-frame markers: when a refresh round takes
#: longer than this share of the time since the last one (a thousand moving robots without TF),
#: rounds are skipped until it does not.
MAX_REFRESH_SHARE = 0.1
#: Most markers per second the all-models topic carries for motion alone (models coming or going
#: are sent at once): with thousands of markers, a message only because map-frame markers moved
#: goes out less often than ``viz_pub_rate``, so that RViz, which redraws every marker of every
#: message, and the middleware keep up.
MAX_MARKERS_PER_SECOND = 30000
#: Longest chain of TF parents followed from a body frame to ``map``.
MAX_TF_CHAIN = 16

LATCHED_QOS = QoSProfile(
    depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
)

Color = tuple[float, float, float, float]


# ---------------------------------------------------------------------------------- wire format
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
                _new_marker("check", 0, Marker.CYLINDER, (1.0, 0.5, 0.25, 1.0), "a"),
                _new_marker("check/\u00fc\u5730", 1, Marker.LINE_STRIP, (0.125, 0.25, 0.375, 0.5), "frame_bc"),
                _delete_marker("chk", 7),
                _new_marker("cd", 2, Marker.LINE_LIST, (1.0, 1.0, 1.0, 1.0)),
                _new_marker("e", 3, Marker.CYLINDER, (0.0, 0.5, 1.0, 1.0), "abc"),
            ]
            made[1].frame_locked = True
            made[1].scale.x = 0.05
            made[1].header.stamp.sec, made[1].header.stamp.nanosec = 5, 6
            made[3].scale.x = 0.1
            made[4].scale.x = made[4].scale.y = 0.5
            _set_pose(made[4], 1.0, 2.0, 3.0)
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
        _set_pose(expected[0], 1.5, -2.5, 0.75)
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


# ---------------------------------------------------------------------------------- markers
def _set_pose(marker: Marker, x: float, y: float, theta: float) -> None:
    pose = marker.pose
    pose.position.x, pose.position.y, pose.position.z = x, y, 0.0
    pose.orientation.x = pose.orientation.y = 0.0
    pose.orientation.z, pose.orientation.w = math.sin(0.5 * theta), math.cos(0.5 * theta)


def _new_marker(namespace: str, marker_id: int, marker_type: int, rgba: Color, frame: str = VIZ_FRAME) -> Marker:
    """A marker to add, with an identity pose."""
    marker = Marker()
    marker.header.frame_id = frame
    marker.ns = namespace
    marker.id = marker_id
    marker.type = marker_type
    marker.action = Marker.ADD
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = (float(v) for v in rgba)
    marker.pose.orientation.w = 1.0
    return marker


def _delete_marker(namespace: str, marker_id: int) -> Marker:
    marker = Marker()
    marker.header.frame_id = VIZ_FRAME
    marker.ns = namespace
    marker.id = marker_id
    marker.action = Marker.DELETE
    return marker


def delete_all_markers() -> MarkerArray:
    """A MarkerArray that removes every marker of its topic in RViz."""
    marker = Marker()
    marker.header.frame_id = VIZ_FRAME
    marker.action = Marker.DELETEALL
    return MarkerArray(markers=[marker])


def _stamp(stamp_ns: int) -> tuple[int, int]:
    return divmod(stamp_ns, NANOSECONDS_PER_SECOND)


def _points(xy) -> np.ndarray:
    """Planar points (N, 2) as (N, 3) with z = 0."""
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    result = np.zeros((len(xy), 3))
    result[:, :2] = xy
    return result


#: Most marker templates kept (shapes of footprints and joints; the oldest go first).
MAX_TEMPLATES = 4096


class _Templates:
    """Marker templates by shape: models of one file share them (a thousand robots, one template)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple, MarkerTemplate] = OrderedDict()

    def get(self, key: tuple, make: Callable[[], MarkerTemplate]) -> MarkerTemplate:
        template = self._cache.get(key)
        if template is None:
            template = self._cache[key] = make()
            if len(self._cache) > MAX_TEMPLATES:
                self._cache.popitem(last=False)
        return template


_TEMPLATES = _Templates()


def _delete_template() -> MarkerTemplate:
    return _TEMPLATES.get(("delete",), lambda: wire().template(_delete_marker("", 0)))


def delete_marker_bytes(namespace: str, marker_id: int) -> MarkerBytes:
    """A DELETE of marker ``marker_id`` of ``namespace``."""
    return wire().instance(_delete_template(), VIZ_FRAME, namespace, marker_id, 0)


def layer_marker_bytes(layer: Layer, stamp_ns: int, line_width: float) -> MarkerBytes:
    """A layer's marker (namespace = its name, id 0): its loaded edges as one line list placed
    at the map origin, or a DELETE of that marker when no edge is loaded."""
    edges = layer.loaded_edges()
    if len(edges) == 0:
        return delete_marker_bytes(layer.name, 0)
    marker = _new_marker("", 0, Marker.LINE_LIST, layer.spec.color)
    origin = layer.origin
    _set_pose(marker, origin.x, origin.y, origin.theta)
    marker.scale.x = line_width
    return wire().instance(wire().template(marker, points=_points(edges)), VIZ_FRAME, layer.name, 0, stamp_ns)


def body_frame(model: Model, body_name: str) -> str:
    """The TF frame of a model's body by the plugins' rule: ``<namespace>_<body>``, or the
    body's name when the model has no namespace."""
    namespace = model.namespace.strip("/")
    return f"{namespace}_{body_name}" if namespace else body_name


def _footprint_template(footprint, color: Color, line_width: float, locked: bool) -> MarkerTemplate:
    """A footprint's marker: drawn in a body frame (``locked``) or re-posed in map."""

    def make() -> MarkerTemplate:
        if footprint.shape == "circle":
            marker = _new_marker("", 0, Marker.CYLINDER, color)
            marker.scale.x = marker.scale.y = 2.0 * footprint.radius
            marker.scale.z = CYLINDER_HEIGHT
            marker.frame_locked = locked
            if locked:
                _set_pose(marker, float(footprint.center[0]), float(footprint.center[1]), 0.0)
            return wire().template(marker, pose=not locked)
        marker = _new_marker("", 0, Marker.LINE_STRIP, color)
        marker.scale.x = line_width
        marker.frame_locked = locked
        closed = list(footprint.points) + [footprint.points[0]]
        return wire().template(marker, points=_points(closed), pose=not locked)

    return _TEMPLATES.get(("footprint", footprint, color, line_width, locked), make)


def _joint_template(color: Color, line_width: float, anchor: tuple[float, float] | None) -> MarkerTemplate:
    """A joint's line from a body's origin to its anchor in that body's frame (``anchor``), or its
    four points (body A, anchor A, body B, anchor B) in map, rewritten on refresh (None)."""

    def make() -> MarkerTemplate:
        marker = _new_marker("", 0, Marker.LINE_LIST, color)
        marker.scale.x = line_width
        marker.frame_locked = anchor is not None
        points = _points([(0.0, 0.0), anchor]) if anchor is not None else np.zeros((4, 3))
        return wire().template(marker, points=points)

    return _TEMPLATES.get(("joint", color, line_width, anchor), make)


class ModelMarkers:
    """The markers of one model (namespace = its name), serialized once.

    Args:
        model: the model.
        locked: frames of the bodies drawn frame-locked, by body name; other bodies are drawn in
            ``map`` and re-posed by :meth:`refresh`.
        line_width: width of outlines and joint lines (m).
        stamp_ns: stamp of the markers.
    """

    def __init__(self, model: Model, locked: dict[str, str], line_width: float, stamp_ns: int) -> None:
        self.model = model
        self.locked = dict(locked)
        codec = wire()
        namespace = model.name
        items: list[MarkerBytes] = []
        #: (marker, Box2D body, x, y offset of the marker in the body frame) of map-frame markers.
        self._moving: list[tuple[MarkerBytes, object, float, float]] = []
        #: (marker, Box2D joint) of joints drawn in map.
        self._joints: list[tuple[MarkerBytes, object]] = []
        for body in model.bodies.values():
            frame = self.locked.get(body.name)
            color = tuple(body.spec.color)
            for footprint in body.spec.footprints:
                template = _footprint_template(footprint, color, line_width, frame is not None)
                item = codec.instance(template, frame or VIZ_FRAME, namespace, len(items), stamp_ns)
                items.append(item)
                if frame is None:
                    center = footprint.center if footprint.shape == "circle" else (0.0, 0.0)
                    self._moving.append((item, body.physics_body, float(center[0]), float(center[1])))
        for joint in model.joints.values():
            spec = joint.spec
            color = tuple(spec.color)
            frame_a, frame_b = self.locked.get(spec.body_a), self.locked.get(spec.body_b)
            if frame_a is not None and frame_b is not None:
                for frame, anchor in ((frame_a, spec.anchor_a), (frame_b, spec.anchor_b)):
                    template = _joint_template(color, line_width, (float(anchor[0]), float(anchor[1])))
                    items.append(codec.instance(template, frame, namespace, len(items), stamp_ns))
            else:
                item = codec.instance(_joint_template(color, line_width, None), VIZ_FRAME, namespace, len(items), stamp_ns)
                items.append(item)
                self._joints.append((item, joint.physics_joint))
        self.items = items
        index: dict[int, int] = {}
        bodies: list = []
        for physics_body in [body for _, body, _, _ in self._moving] + [
            body for _, joint in self._joints for body in (joint.bodyA, joint.bodyB)
        ]:
            if id(physics_body) not in index:
                index[id(physics_body)] = len(bodies)
                bodies.append(physics_body)
        #: The bodies whose poses the map-frame markers follow.
        self._bodies = bodies
        #: (marker, index of its body in _bodies, offset in the body frame) of map-frame markers.
        self._posed = [(item, index[id(body)], dx, dy) for item, body, dx, dy in self._moving]
        self._last: list[tuple[float, float, float]] | None = None
        self._was_awake = True
        self.refresh(stamp_ns, force=True)
        self._parts = codec.layout(items)

    @property
    def moves(self) -> bool:
        """Whether some marker is drawn in ``map`` and follows a body (needs :meth:`refresh`)."""
        return bool(self._bodies)

    def refresh(self, stamp_ns: int, force: bool = False) -> bool:
        """Re-pose the map-frame markers if a body moved since the last call; True if one did.

        Box2D moves only awake bodies, so poses are read only while one of the bodies is awake
        or was at the last call (it may have moved, then fallen asleep), or when ``force``d (the
        model was placed anew: :meth:`DebugVisualization.on_model_moved`).
        """
        bodies = self._bodies
        if not bodies:
            return False
        awake = False
        for body in bodies:
            if body.awake:
                awake = True
                break
        if not (awake or self._was_awake or force):
            return False
        self._was_awake = awake
        state = []
        for body in bodies:
            position = body.position
            state.append((position.x, position.y, body.angle))
        if state == self._last:
            return False
        self._last = state
        codec = wire()
        sec, nanosec = _stamp(stamp_ns)
        pack_stamp, pack_pose = codec.stamp_packer, codec.pose_packer
        cos, sin = math.cos, math.sin
        for item, at, dx, dy in self._posed:
            x, y, angle = state[at]
            if dx or dy:
                cos_a, sin_a = cos(angle), sin(angle)
                x, y = x + cos_a * dx - sin_a * dy, y + sin_a * dx + cos_a * dy
            half = 0.5 * angle
            qz, qw = sin(half), cos(half)
            for chunk, offset in zip(item.variants, item.pose_at):
                pack_stamp(chunk, 0, sec, nanosec)
                pack_pose(chunk, offset, x, y, 0.0, 0.0, 0.0, qz, qw)
        for item, joint in self._joints:
            a, anchor_a, b, anchor_b = joint.bodyA.position, joint.anchorA, joint.bodyB.position, joint.anchorB
            codec.set_points(item, sec, nanosec, (
                a.x, a.y, 0.0, anchor_a.x, anchor_a.y, 0.0, b.x, b.y, 0.0, anchor_b.x, anchor_b.y, 0.0,
            ))
        return True

    def message(self) -> bytes:
        """The model's markers as a serialized MarkerArray."""
        return b"".join(self._parts)


# ---------------------------------------------------------------------------------- TF frames
Claims = dict  # owner -> (parent frame, static)


def chain_to_map(frame: str, claims_of: Callable[[str], Claims], visited: set[str] | None = None) -> bool:
    """Whether TF links ``frame`` to :data:`VIZ_FRAME` through one parent per frame, each frame
    sent on /tf by at most one plugin. ``visited`` collects the frames looked at."""
    seen: set[str] = set()
    while frame != VIZ_FRAME:
        if visited is not None:
            visited.add(frame)
        if frame in seen or len(seen) >= MAX_TF_CHAIN:
            return False
        seen.add(frame)
        claims = claims_of(frame)
        if not claims:
            return False
        parents = {parent for parent, _ in claims.values()}
        dynamic = sum(1 for _, static in claims.values() if not static)
        if len(parents) != 1 or dynamic > 1:
            return False
        frame = parents.pop()
    return True


# ---------------------------------------------------------------------------------- the topics
#: Wall seconds a per-model topic's subscriber count is trusted (a thousand of them are not asked
#: every refresh: a new subscriber has the latched markers at once and their motion within this).
MODEL_TOPIC_CHECK_PERIOD = 0.5


class _TimedCheck:
    """Whether a publisher has subscribers, asked again after :data:`MODEL_TOPIC_CHECK_PERIOD`."""

    __slots__ = ("_publisher", "_listened", "_next")

    def __init__(self, publisher: Publisher) -> None:
        self._publisher = publisher
        self._listened = False
        self._next = 0.0

    def __call__(self, now: float) -> bool:
        if now >= self._next:
            self._listened = self._publisher.get_subscription_count() > 0
            self._next = now + MODEL_TOPIC_CHECK_PERIOD
        return self._listened


class _ModelEntry:
    __slots__ = ("markers", "publisher", "listened", "claimed", "frames", "moved")

    def __init__(self, markers: ModelMarkers, publisher: Publisher, claimed: list[str], frames: set[str]) -> None:
        self.markers = markers
        self.publisher = publisher
        self.listened = _TimedCheck(publisher)
        #: Child frames its plugins are configured to send.
        self.claimed = claimed
        #: The frames its lock state depends on (index keys; none for a model that never locks).
        self.frames = frames
        #: Placed anew (move_model): its poses are read at the next refresh, awake or not.
        self.moved = False


class DebugVisualization:
    """Owns the debug marker publishers of a world (a :class:`WorldListener`).

    Args:
        node: the server node (topics are relative to its private namespace).
        world: the world to draw.
        clock_ns: returns the sim time (ns) used to stamp markers.
        line_width: width of every line marker (layer edges, footprint outlines, joints), m.
    """

    def __init__(
        self, node: Node, world: World, clock_ns: Callable[[], int], line_width: float = DEFAULT_MARKER_LINE_WIDTH
    ) -> None:
        self._node = node
        self._world = world
        self._clock_ns = clock_ns
        self.line_width = float(line_width)
        self._wire = wire()
        self._layer_tokens = TopicTokens("layer")
        self._model_tokens = TopicTokens("model")
        self._topics: dict[str, str] = {}  # key ("layer/<name>" / "model/<name>") -> topic
        self._registry = None  # the TF broadcaster's claims registry, once a plugin made one
        self._layer_publishers: dict[int, Publisher] = {}
        self._layer_items: dict[int, MarkerBytes] = {}
        self._models: dict[str, _ModelEntry] = {}
        #: Models with markers in map that follow their bodies.
        self._moving: dict[str, _ModelEntry] = {}
        #: TF frame -> names of the models whose lock state depends on it.
        self._frame_models: dict[str, set[str]] = {}
        #: Frames whose models' lock state is checked again at the next refresh.
        self._frames_changed: set[str] = set()
        #: Removed models' DELETEs in the all-models message: name -> (wall time they go, {id: bytes}).
        self._tombstones: OrderedDict[str, tuple[float, dict[int, MarkerBytes]]] = OrderedDict()
        self._tombstone_count = 0
        self._models_changed = True
        self._models_parts: list | None = None
        #: Wall time (monotonic s) before which map-frame markers are not re-posed again.
        self._next_refresh = 0.0
        #: Markers moved since the all-models message was sent; when it may be sent for that.
        self._models_stale = False
        self._next_models_send = 0.0
        self._models_count = 0
        #: Publishers of deleted models by model name, oldest first, with the wall time they go.
        self._parked: OrderedDict[str, tuple[float, Publisher]] = OrderedDict()
        self._retiring: OrderedDict[str, tuple[float, Publisher]] = OrderedDict()
        self._topics_changed = False
        self._delete_all = serialize_message(delete_all_markers())
        self._delete_all_item = self._wire.marker(delete_all_markers().markers[0])
        self._topic_list_publisher = node.create_publisher(DebugTopicList, "~/debug/topics", LATCHED_QOS)
        self._layers_publisher = node.create_publisher(MarkerArray, ALL_LAYERS_TOPIC, LATCHED_QOS)
        self._models_publisher = node.create_publisher(MarkerArray, ALL_MODELS_TOPIC, LATCHED_QOS)
        self._models_listened = SubscriberCheck(self._models_publisher)
        stamp_ns = clock_ns()
        for layer in world.layers:
            publisher = self._create_publisher("layer", layer.name)
            self._layer_publishers[id(layer)] = publisher
            self._draw_layer(layer, stamp_ns)
        self._layers_publisher.publish(self._layers_message())
        for model in world.all_models():
            self.on_model_added(model)
        world.add_listener(self)
        self._publish_all_models()
        self._publish_topic_list()

    # ------------------------------------------------------------------ topics
    def _create_publisher(self, kind: str, name: str) -> Publisher:
        tokens = self._layer_tokens if kind == "layer" else self._model_tokens
        publisher = self._node.create_publisher(MarkerArray, f"~/debug/{kind}/{tokens.claim(name)}", LATCHED_QOS)
        self._topics[f"{kind}/{name}"] = publisher.topic_name
        return publisher

    def _destroy_model_publisher(self, name: str, publisher: Publisher) -> None:
        self._node.destroy_publisher(publisher)
        self._model_tokens.release(name)

    def _publish_topic_list(self) -> None:
        self._topic_list_publisher.publish(DebugTopicList(topics=sorted(self._topics.values())))

    @property
    def topics(self) -> list[str]:
        """The fully qualified per-entity debug topic names currently offered."""
        return sorted(self._topics.values())

    @property
    def all_topics(self) -> tuple[str, str]:
        """The fully qualified names of the all-layers and all-models topics."""
        return self._layers_publisher.topic_name, self._models_publisher.topic_name

    # ------------------------------------------------------------------ layers
    def _draw_layer(self, layer: Layer, stamp_ns: int) -> None:
        item = layer_marker_bytes(layer, stamp_ns, self.line_width)
        self._layer_items[id(layer)] = item
        items = [self._delete_all_item] + ([item] if len(layer.loaded_edges()) else [])
        self._layer_publishers[id(layer)].publish(self._wire.message(items))

    def _layers_message(self) -> bytes:
        return self._wire.message(self._layer_items[id(layer)] for layer in self._world.layers if id(layer) in self._layer_items)

    def on_layers_changed(self, layers: list[Layer]) -> None:
        """Redraw layers whose pieces (tiles, or the whole layer) were loaded or unloaded."""
        stamp_ns = self._clock_ns()
        drawn = False
        for layer in layers:
            if id(layer) in self._layer_publishers:
                self._draw_layer(layer, stamp_ns)
                drawn = True
        if drawn:
            self._layers_publisher.publish(self._layers_message())

    # ------------------------------------------------------------------ models
    def _claims_of(self, frame: str) -> Claims:
        return self._registry.claims_of(frame) if self._registry is not None else {}

    def _owners(self, model: Model) -> set[str]:
        """The names the model's plugins claim TF frames under."""
        return {plugin.context.describe() for plugin in self._world.plugins.plugins_of(model)}

    def _frames_claimed_by(self, model: Model) -> list[str]:
        """The child frames the model's plugins send."""
        if self._registry is None:
            return []
        return [frame for owner in self._owners(model) for frame in self._registry.frames_of(owner)]

    def _lock_state(self, model: Model) -> tuple[dict[str, str], set[str]]:
        """The frames of the model's bodies drawn frame-locked, and the frames the decision
        depends on (none when no plugin of the model sends a body's frame: it never locks).

        A body is locked when one of the model's own plugins sends its frame and the frame's
        chain reaches ``map`` (:func:`chain_to_map`)."""
        owners = self._owners(model)
        visited: set[str] = set()
        locked = {}
        candidate = False
        for body in model.bodies.values():
            frame = body_frame(model, body.name)
            visited.add(frame)
            if owners.isdisjoint(self._claims_of(frame)):
                continue
            candidate = True
            if chain_to_map(frame, self._claims_of, visited):
                locked[body.name] = frame
        return locked, visited if candidate else set()

    def _find_registry(self) -> None:
        """Take the node's TF broadcaster, for its registry of claimed frames, once a plugin
        made it (none is made here: a world without TF plugins has no /tf publishers)."""
        if self._registry is None:
            self._registry = existing_broadcaster(self._node)

    def _index(self, name: str, frames: Iterable[str]) -> None:
        for frame in frames:
            self._frame_models.setdefault(frame, set()).add(name)

    def _unindex(self, name: str, frames: Iterable[str]) -> None:
        for frame in frames:
            names = self._frame_models.get(frame)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._frame_models[frame]

    def on_model_added(self, model: Model) -> None:
        """Draw the model on its topic (created, or its parked one taken back) and, at the next
        refresh, on the all-models topic."""
        self._find_registry()
        claimed = self._frames_claimed_by(model)
        locked, frames = self._lock_state(model)
        parked = self._parked.pop(model.name, None) or self._retiring.pop(model.name, None)
        if parked is not None:
            publisher = parked[1]
            self._topics[f"model/{model.name}"] = publisher.topic_name
        else:
            publisher = self._create_publisher("model", model.name)
        markers = ModelMarkers(model, locked, self.line_width, self._clock_ns())
        entry = _ModelEntry(markers, publisher, claimed, frames)
        self._models[model.name] = entry
        if markers.moves:
            self._moving[model.name] = entry
        self._index(model.name, frames)
        self._frames_changed.update(frames)
        self._frames_changed.update(claimed)  # models whose chains they are in are checked again
        self._unbury(model.name, len(markers.items))
        publisher.publish(markers.message())
        self._models_changed = True
        self._topics_changed = True

    def on_model_moved(self, model: Model) -> None:
        """``move_model`` or ``set_model_state`` placed the model anew: read its poses next round."""
        entry = self._moving.get(model.name)
        if entry is not None:
            entry.moved = True

    def on_model_removed(self, model: Model) -> None:
        """Erase the model's markers (its topic's DELETEALL; DELETEs of its namespace on the
        all-models topic) and park its publisher (see the module doc)."""
        entry = self._models.pop(model.name, None)
        if entry is None:
            return
        self._moving.pop(model.name, None)
        self._unindex(model.name, entry.frames)
        self._frames_changed.update(entry.frames)
        self._frames_changed.update(entry.claimed)
        self._bury(model.name, range(len(entry.markers.items)))
        publisher = entry.publisher
        publisher.publish(self._delete_all)
        self._topics.pop(f"model/{model.name}", None)
        self._topics_changed = True
        self._models_changed = True
        if not self._world.levels.owns_model(model.name):
            # Deleted, not streamed out: its name may never return. The publisher stays only long
            # enough to deliver the DELETEALL.
            self._retiring[model.name] = (time.monotonic() + RETIRE_TIME, publisher)
            return
        self._parked[model.name] = (time.monotonic() + PARK_TIME, publisher)
        while len(self._parked) > MAX_PARKED:
            name, (_, oldest) = self._parked.popitem(last=False)
            self._destroy_model_publisher(name, oldest)

    def _bury(self, name: str, marker_ids: Iterable[int]) -> None:
        """Put DELETEs of the model's markers ``marker_ids`` into the all-models message."""
        _, dead = self._drop_tombstones(name)
        for marker_id in marker_ids:
            dead[marker_id] = delete_marker_bytes(name, marker_id)
        if dead:
            self._tombstones[name] = (time.monotonic() + TOMBSTONE_TIME, dead)
            self._tombstone_count += len(dead)
        while self._tombstone_count > MAX_TOMBSTONES:
            self._drop_tombstones(next(iter(self._tombstones)))

    def _drop_tombstones(self, name: str) -> tuple[float, dict[int, MarkerBytes]]:
        """Take the DELETEs of model ``name`` out of the all-models message."""
        entry = self._tombstones.pop(name, None)
        if entry is None:
            return 0.0, {}
        self._tombstone_count -= len(entry[1])
        self._models_parts = None
        return entry

    def _expire_tombstones(self, now: float) -> None:
        while self._tombstones and next(iter(self._tombstones.values()))[0] <= now:
            self._drop_tombstones(next(iter(self._tombstones)))

    def _unbury(self, name: str, count: int) -> None:
        """Take the DELETEs of ids below ``count`` of model ``name`` out: it draws them again."""
        expiry, dead = self._drop_tombstones(name)
        for marker_id in range(count):
            dead.pop(marker_id, None)
        if dead:
            self._tombstones[name] = (expiry, dead)
            self._tombstone_count += len(dead)

    def _check_locks(self) -> None:
        """Decide again the lock state of the models sharing frames with models that came or went,
        and redraw those whose state changed."""
        frames, self._frames_changed = self._frames_changed, set()
        names: set[str] = set()
        for frame in frames:
            names.update(self._frame_models.get(frame, ()))
        stamp_ns = self._clock_ns()
        for name in names:
            entry = self._models.get(name)
            if entry is None:
                continue
            model = entry.markers.model
            locked, frames = self._lock_state(model)
            self._unindex(name, entry.frames)
            entry.frames = frames
            self._index(name, frames)
            if locked == entry.markers.locked:
                continue
            old_count = len(entry.markers.items)
            markers = ModelMarkers(model, locked, self.line_width, stamp_ns)
            gone = range(len(markers.items), old_count)
            if gone:
                self._bury(name, gone)
                entry.publisher.publish(self._wire.message(delete_marker_bytes(name, i) for i in gone))
            self._unbury(name, len(markers.items))
            entry.markers = markers
            if markers.moves:
                self._moving[name] = entry
            else:
                self._moving.pop(name, None)
            entry.publisher.publish(markers.message())
            self._models_changed = True

    # ------------------------------------------------------------------ periodic work
    def _models_message(self) -> bytes:
        if self._models_parts is None:
            self._expire_tombstones(time.monotonic())
            items: list[MarkerBytes] = []
            for entry in self._models.values():
                items.extend(entry.markers.items)
            for _, dead in self._tombstones.values():
                items.extend(dead.values())
            self._models_parts = self._wire.layout(items)
            self._models_count = len(items)
        return b"".join(self._models_parts)

    def _publish_all_models(self) -> None:
        if self._models_changed:
            self._models_parts = None
        self._models_changed = self._models_stale = False
        self._models_publisher.publish(self._models_message())

    def publish_models(self) -> None:
        """The refresh round: check lock states of models sharing frames with models that came
        or went, re-pose moved map-frame markers (of models somebody watches), publish what
        changed, republish a changed topic list and let parked publishers past their time go."""
        if self._frames_changed:
            self._check_locks()
        stamp_ns = self._clock_ns()
        now = time.monotonic()
        moved = False
        if self._moving and now >= self._next_refresh:
            all_listened = self._models_listened()
            started = time.perf_counter()
            for entry in self._moving.values():
                if all_listened:
                    if entry.markers.refresh(stamp_ns, entry.moved):
                        moved = True
                        if entry.listened(now):
                            entry.publisher.publish(entry.markers.message())
                    entry.moved = False
                elif entry.listened(now):
                    if entry.markers.refresh(stamp_ns, entry.moved):
                        entry.publisher.publish(entry.markers.message())
                    entry.moved = False
            self._next_refresh = now + (time.perf_counter() - started) / MAX_REFRESH_SHARE
        self._models_stale |= moved
        if self._models_changed or (self._models_stale and now >= self._next_models_send):
            self._publish_all_models()
            self._next_models_send = now + self._models_count / MAX_MARKERS_PER_SECOND
        self._expire_tombstones(time.monotonic())
        if self._topics_changed:
            self._topics_changed = False
            self._publish_topic_list()
        now = time.monotonic()
        while self._parked and next(iter(self._parked.values()))[0] <= now:
            name, (_, publisher) = self._parked.popitem(last=False)
            self._destroy_model_publisher(name, publisher)
        while self._retiring and next(iter(self._retiring.values()))[0] <= now:
            name, (_, publisher) = self._retiring.popitem(last=False)
            self._destroy_model_publisher(name, publisher)

    def close(self) -> None:
        """Stop listening to the world and destroy every publisher."""
        self._world.remove_listener(self)
        for publisher in self._layer_publishers.values():
            self._node.destroy_publisher(publisher)
        for entry in self._models.values():
            self._node.destroy_publisher(entry.publisher)
        for _, publisher in list(self._parked.values()) + list(self._retiring.values()):
            self._node.destroy_publisher(publisher)
        for publisher in (self._topic_list_publisher, self._layers_publisher, self._models_publisher):
            self._node.destroy_publisher(publisher)
        self._retiring.clear()
        self._layer_publishers.clear()
        self._models.clear()
        self._moving.clear()
        self._parked.clear()
        self._tombstones.clear()
        self._tombstone_count = 0
