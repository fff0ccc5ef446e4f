"""The markers of one entity, serialized once: a layer's line list, a model's footprints and joints.

A layer is one LINE_LIST in ``map`` (namespace = its name, id 0), written straight from its array
of loaded edges, or a DELETE of that marker when none is loaded. A model (namespace = its name,
ids 0, 1, ...) has per footprint a CYLINDER (circle) or closed LINE_STRIP (polygon) and per joint
lines from each body to its anchor, drawn in the body frames that :mod:`.frame_lock` finds on TF
or in ``map``, where :meth:`ModelMarkers.refresh` re-poses them in place. Templates
(:mod:`.wire`) are cached by shape, colour, line width and frame lock, so a thousand robots of
one model file share theirs.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Callable

import numpy as np
from visualization_msgs.msg import Marker

from sim_server.core.physics.layer import Layer
from sim_server.core.physics.model import Model
from sim_server.core.timing.timekeeper import NANOSECONDS_PER_SECOND
from sim_server.ros.visualization.messages import VIZ_FRAME, Color, delete_marker, new_marker, set_pose
from sim_server.ros.visualization.wire import MarkerBytes, MarkerTemplate, wire

#: Height of drawn cylinders (m).
CYLINDER_HEIGHT = 0.01


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
    return _TEMPLATES.get(("delete",), lambda: wire().template(delete_marker("", 0)))


def delete_marker_bytes(namespace: str, marker_id: int) -> MarkerBytes:
    """A DELETE of marker ``marker_id`` of ``namespace``."""
    return wire().instance(_delete_template(), VIZ_FRAME, namespace, marker_id, 0)


def layer_marker_bytes(layer: Layer, stamp_ns: int, line_width: float) -> MarkerBytes:
    """A layer's marker (namespace = its name, id 0): its loaded edges as one line list placed
    at the map origin, or a DELETE of that marker when no edge is loaded."""
    edges = layer.loaded_edges()
    if len(edges) == 0:
        return delete_marker_bytes(layer.name, 0)
    marker = new_marker("", 0, Marker.LINE_LIST, layer.spec.color)
    origin = layer.origin
    set_pose(marker, origin.x, origin.y, origin.theta)
    marker.scale.x = line_width
    return wire().instance(wire().template(marker, points=_points(edges)), VIZ_FRAME, layer.name, 0, stamp_ns)


def _footprint_template(footprint, color: Color, line_width: float, locked: bool) -> MarkerTemplate:
    """A footprint's marker: drawn in a body frame (``locked``) or re-posed in map."""

    def make() -> MarkerTemplate:
        if footprint.shape == "circle":
            marker = new_marker("", 0, Marker.CYLINDER, color)
            marker.scale.x = marker.scale.y = 2.0 * footprint.radius
            marker.scale.z = CYLINDER_HEIGHT
            marker.frame_locked = locked
            if locked:
                set_pose(marker, float(footprint.center[0]), float(footprint.center[1]), 0.0)
            return wire().template(marker, pose=not locked)
        marker = new_marker("", 0, Marker.LINE_STRIP, color)
        marker.scale.x = line_width
        marker.frame_locked = locked
        closed = list(footprint.points) + [footprint.points[0]]
        return wire().template(marker, points=_points(closed), pose=not locked)

    return _TEMPLATES.get(("footprint", footprint, color, line_width, locked), make)


def _joint_template(color: Color, line_width: float, anchor: tuple[float, float] | None) -> MarkerTemplate:
    """A joint's line from a body's origin to its anchor in that body's frame (``anchor``), or its
    four points (body A, anchor A, body B, anchor B) in map, rewritten on refresh (None)."""

    def make() -> MarkerTemplate:
        marker = new_marker("", 0, Marker.LINE_LIST, color)
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
        or was at the last call (it may have moved, then fallen asleep), or when ``force`` is set
        (the model was placed anew: :meth:`.publisher.DebugVisualization.on_model_moved`).
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
