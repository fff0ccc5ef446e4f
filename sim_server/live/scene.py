"""What a Foxglove client is shown of a world, as the Foxglove SDK's well-known messages.

Everything is in the world frame, :data:`WORLD_FRAME` (``map``, as the ROS layer's), so that
Foxglove's 3D panel draws the world with no configuration:

* the walls of each loaded layer: a :class:`~foxglove.messages.SceneEntity` ``layer/<name>`` of
  line segments in the layer's colour;
* each model: an entity ``model/<name>`` with its footprints where they are now, polygons
  filled and outlined and circles as flat cylinders, in its bodies' colours;
* the pedestrians: an entity ``crowd/<name>`` per crowd, one flat orange cylinder per person;
* each laser: its scans as :class:`~foxglove.messages.LaserScan`, in the laser's frame, stamped
  when the laser made them;
* transforms (:class:`~foxglove.messages.FrameTransforms`) with the frame names of the ROS
  node's TF tree (the reference's rule: ``<namespace>_<body>``, the body's name alone in a model
  without a namespace; where models would share a name, each model's frames are prefixed with
  ``<model>/``): ``map`` to each body where it is (ground truth), each laser's body to the
  laser's frame.

Functions here build messages only; :mod:`sim_server.live.view` decides when to send them.
Units: metres, radians; stamps are sim time in nanoseconds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import numpy as np
from foxglove.messages import (
    Color, CylinderPrimitive, FrameTransform, FrameTransforms, LaserScan, LinePrimitive, LinePrimitiveLineType,
    Point3, Pose, Quaternion, SceneEntity, Timestamp,
    TriangleListPrimitive,
    Vector3,
)

from sim_server.core.format.entity_names import frame_id

if TYPE_CHECKING:
    from sim_server.core.physics.layer import Layer
    from sim_server.core.physics.model import Model

#: The world frame of every message.
WORLD_FRAME = "map"
#: Width of wall and outline lines, in pixels (scale-invariant: thin walls stay visible with the
#: whole world in view).
LINE_PIXELS = 1.5
#: Opacity of the models' filled footprints (their outlines are opaque).
FOOTPRINT_ALPHA = 0.6
#: Height (m) of the flat cylinders that stand for circles and people.
DISC_HEIGHT = 0.02
#: The colour of pedestrians (RGBA 0 to 1; the pictures' orange).
PEDESTRIAN_COLOR = (1.0, 0.55, 0.1, 0.9)
#: Prefixes of the entities' ids.
LAYER_PREFIX, MODEL_PREFIX, CROWD_PREFIX = "layer/", "model/", "crowd/"


def stamp(time_ns: int) -> Timestamp:
    """A Foxglove timestamp of ``time_ns`` nanoseconds."""
    return Timestamp(sec=int(time_ns // 1_000_000_000), nsec=int(time_ns % 1_000_000_000))


def color(rgba: Sequence[float], alpha: float | None = None) -> Color:
    """A Foxglove colour of RGBA values 0 to 1 (``alpha`` overriding the fourth)."""
    values = [float(v) for v in rgba] + [1.0] * (4 - len(rgba))
    return Color(r=values[0], g=values[1], b=values[2], a=values[3] if alpha is None else alpha)


def planar_pose(x: float, y: float, theta: float) -> Pose:
    """The pose of (x, y) (m) turned ``theta`` (rad) about z."""
    half = 0.5 * theta
    return Pose(position=Vector3(x=x, y=y, z=0.0), orientation=Quaternion(x=0.0, y=0.0, z=math.sin(half), w=math.cos(half)))


_ORIGIN = planar_pose(0.0, 0.0, 0.0)


def _flat_disc(x: float, y: float, radius: float, rgba: Color) -> CylinderPrimitive:
    diameter = 2.0 * radius
    return CylinderPrimitive(pose=planar_pose(x, y, 0.0), size=Vector3(x=diameter, y=diameter, z=DISC_HEIGHT),
                             bottom_scale=1.0, top_scale=1.0, color=rgba)


def layer_entity(layer: "Layer", time_ns: int) -> SceneEntity:
    """The loaded walls of ``layer`` as line segments in its colour."""
    edges = np.asarray(layer.world_edges(), dtype=np.float64).reshape(-1, 4)
    points = [Point3(x=x, y=y, z=0.0) for x, y in edges.reshape(-1, 2).tolist()]
    lines = [LinePrimitive(type=LinePrimitiveLineType.LineList, pose=_ORIGIN, thickness=LINE_PIXELS, scale_invariant=True,
                           points=points, color=color(layer.spec.color, alpha=1.0))] if points else []
    return SceneEntity(timestamp=stamp(time_ns), frame_id=WORLD_FRAME, id=LAYER_PREFIX + layer.name, lines=lines)


def model_entity(model: "Model", time_ns: int) -> SceneEntity:
    """The footprints of ``model`` where they are now: polygons filled (a triangle fan; Box2D's
    polygons are convex) and outlined, circles as flat cylinders, in their bodies' colours."""
    lines: list[LinePrimitive] = []
    triangles: list[TriangleListPrimitive] = []
    discs: list[CylinderPrimitive] = []
    for body, outline in model.world_footprints():
        rgba = color(body.spec.color)
        if isinstance(outline, tuple):
            discs.append(_flat_disc(*outline, rgba))
            continue
        corners = [Point3(x=x, y=y, z=0.0) for x, y in outline]
        lines.append(LinePrimitive(type=LinePrimitiveLineType.LineLoop, pose=_ORIGIN, thickness=LINE_PIXELS,
                                   scale_invariant=True, points=corners, color=color(body.spec.color, alpha=1.0)))
        fan = [point for k in range(1, len(corners) - 1) for point in (corners[0], corners[k], corners[k + 1])]
        if fan:
            triangles.append(TriangleListPrimitive(pose=_ORIGIN, points=fan, color=color(body.spec.color, FOOTPRINT_ALPHA)))
    return SceneEntity(timestamp=stamp(time_ns), frame_id=WORLD_FRAME, id=MODEL_PREFIX + model.name, lines=lines,
                       triangles=triangles, cylinders=discs)


def crowd_entity(name: str, circles: np.ndarray, time_ns: int) -> SceneEntity:
    """A crowd's people, ``circles`` (N, 3: x, y, radius; m), as flat orange cylinders."""
    rgba = color(PEDESTRIAN_COLOR)
    discs = [_flat_disc(x, y, r, rgba) for x, y, r in np.asarray(circles, dtype=np.float64).reshape(-1, 3).tolist()]
    return SceneEntity(timestamp=stamp(time_ns), frame_id=WORLD_FRAME, id=CROWD_PREFIX + name, cylinders=discs)


#: A planar transform: parent frame, child frame, x, y (m), theta (rad) and whether the child is
#: rolled over by pi (an upside-down laser).
PlanarTransform = tuple[str, str, float, float, float, bool]


def planar_transforms(models: Iterable["Model"], fixed: Iterable[PlanarTransform],
                      prefixes: Mapping[str, str] | None = None) -> list[PlanarTransform]:
    """``map`` to every body of ``models`` where it is now (frames as ROS names them, after the
    model's prefix in ``prefixes``, if any), then the ``fixed`` ones (a laser's)."""
    transforms = []
    prefixes = prefixes or {}
    for model in models:
        prefix = prefixes.get(model.name, "")
        for name, body in model.bodies.items():
            physics = body.physics_body
            x, y = physics.position
            transforms.append((WORLD_FRAME, prefix + frame_id(model.namespace, name), float(x), float(y),
                               float(physics.angle), False))
    transforms.extend(fixed)
    return transforms


def _rotation(theta: float, flipped: bool) -> Quaternion:
    half = 0.5 * theta
    if flipped:  # roll pi, then the yaw
        return Quaternion(x=math.cos(half), y=math.sin(half), z=0.0, w=0.0)
    return Quaternion(x=0.0, y=0.0, z=math.sin(half), w=math.cos(half))


def frame_transforms(transforms: list[PlanarTransform], time_ns: int) -> FrameTransforms:
    """``transforms`` (from :func:`planar_transforms`) as Foxglove's message."""
    when = stamp(time_ns)
    return FrameTransforms(transforms=[
        FrameTransform(timestamp=when, parent_frame_id=parent, child_frame_id=child,
                       translation=Vector3(x=x, y=y, z=0.0), rotation=_rotation(theta, flipped))
        for parent, child, x, y, theta, flipped in transforms
    ])


def laser_scan(ranges: np.ndarray, local_angles: np.ndarray, frame: str, time_ns: int) -> LaserScan:
    """A scan of evenly spaced beams at ``local_angles`` (rad, laser frame) with ``ranges`` (m,
    NaN for misses), made at ``time_ns`` by a laser whose frame is ``frame``."""
    start = float(local_angles[0]) if len(local_angles) else 0.0
    end = float(local_angles[-1]) if len(local_angles) else 0.0
    return LaserScan(timestamp=stamp(time_ns), frame_id=frame, pose=planar_pose(0.0, 0.0, 0.0), start_angle=start,
                     end_angle=end, ranges=np.asarray(ranges, dtype=np.float64).tolist(), intensities=[])
