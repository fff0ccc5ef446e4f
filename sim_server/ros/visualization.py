"""Debug markers for RViz: one MarkerArray topic per layer and per model, in frame ``map``.

Layers are drawn once (edges as a line list) and latched; models are redrawn at
``viz_pub_rate`` (circles as cylinders, polygons as closed line strips, joints as lines from
each body to its anchor). Topics are ``~/debug/layer/<name>`` and ``~/debug/model/<name>``
(names made valid topic tokens, see :func:`topic_token`); their list is on ``~/debug/topics``.

Models come and go often with level streaming, and creating a publisher costs about 0.2 ms: a
removed model of a level keeps its publisher, with its DELETEALL latched, for :data:`PARK_TIME`
seconds (at most :data:`MAX_PARKED` of them), so that the model, coming back by the same name,
gets it again. A deleted model's publisher goes after :data:`RETIRE_TIME` (unless a model of the
same name takes it back before). The topic list is republished once per round of changes, not once per model.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from geometry_msgs.msg import Point
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.msg import DebugTopicList
from sim_server.core.geometry import Pose2D
from sim_server.core.layer import Layer
from sim_server.core.model import Model
from sim_server.core.world import World
from sim_server.ros.conversions import set_pose_msg, time_msg
from sim_server.ros.names import topic_token

#: Frame of every debug marker.
VIZ_FRAME = "map"
#: Width of drawn lines (m).
LINE_WIDTH = 0.02
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

LATCHED_QOS = QoSProfile(
    depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
)


def _color(rgba: tuple[float, float, float, float]) -> ColorRGBA:
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def _new_marker(namespace: str, marker_id: int, marker_type: int, rgba: tuple[float, float, float, float]) -> Marker:
    """A marker to add in frame :data:`VIZ_FRAME`."""
    marker = Marker()
    marker.header.frame_id = VIZ_FRAME
    marker.ns = namespace
    marker.id = marker_id
    marker.type = marker_type
    marker.action = Marker.ADD
    marker.color = _color(rgba)
    return marker


def layer_markers(layer: Layer, stamp_ns: int) -> MarkerArray:
    """The markers of a layer: its loaded edges as one line list placed at the map origin,
    after a DELETEALL so that unloaded tiles disappear."""
    marker = _new_marker(layer.name, 0, Marker.LINE_LIST, layer.spec.color)
    marker.header.stamp = time_msg(stamp_ns)
    origin = layer.origin
    set_pose_msg(marker.pose, origin.x, origin.y, origin.theta)
    marker.scale.x = LINE_WIDTH
    points = []
    for x1, y1, x2, y2 in layer.loaded_edges().tolist():
        points.append(Point(x=x1, y=y1, z=0.0))
        points.append(Point(x=x2, y=y2, z=0.0))
    marker.points = points
    return MarkerArray(markers=[delete_all_markers().markers[0], marker])


@dataclass
class _BodyMarker:
    marker: Marker
    body: object  # Box2D body
    offset: Pose2D  # marker frame in the body frame


class ModelMarkers:
    """The markers of one model, built once and re-posed on every update."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._bodies: list[_BodyMarker] = []
        self._joints: list[tuple[Marker, object]] = []
        next_id = 0
        for body in model.bodies.values():
            for footprint in body.spec.footprints:
                if footprint.shape == "circle":
                    marker = _new_marker(f"{model.name}/{body.name}", next_id, Marker.CYLINDER, body.spec.color)
                    marker.scale.x = marker.scale.y = 2.0 * footprint.radius
                    marker.scale.z = CYLINDER_HEIGHT
                    offset = Pose2D(footprint.center[0], footprint.center[1], 0.0)
                else:
                    marker = _new_marker(f"{model.name}/{body.name}", next_id, Marker.LINE_STRIP, body.spec.color)
                    marker.scale.x = LINE_WIDTH
                    closed = list(footprint.points) + [footprint.points[0]]
                    marker.points = [Point(x=x, y=y, z=0.0) for x, y in closed]
                    offset = Pose2D()
                next_id += 1
                self._bodies.append(_BodyMarker(marker, body.physics_body, offset))
        for joint in model.joints.values():
            marker = _new_marker(f"{model.name}/{joint.name}", next_id, Marker.LINE_LIST, joint.spec.color)
            next_id += 1
            marker.scale.x = LINE_WIDTH
            marker.pose.orientation.w = 1.0
            marker.points = [Point() for _ in range(4)]
            self._joints.append((marker, joint.physics_joint))
        self._array = MarkerArray(markers=[b.marker for b in self._bodies] + [m for m, _ in self._joints])

    def update(self, stamp_ns: int) -> MarkerArray:
        """Re-pose every marker to the current body poses and stamp them."""
        stamp = time_msg(stamp_ns)
        for item in self._bodies:
            position = item.body.position
            pose = Pose2D(position.x, position.y, item.body.angle).compose(item.offset)
            item.marker.header.stamp = stamp
            set_pose_msg(item.marker.pose, pose.x, pose.y, pose.theta)
        for marker, joint in self._joints:
            marker.header.stamp = stamp
            ends = (joint.bodyA.position, joint.anchorA, joint.bodyB.position, joint.anchorB)
            for point, (x, y) in zip(marker.points, ends):
                point.x, point.y = float(x), float(y)
        return self._array


def delete_all_markers() -> MarkerArray:
    """A MarkerArray that removes every marker of its topic in RViz."""
    marker = Marker()
    marker.header.frame_id = VIZ_FRAME
    marker.action = Marker.DELETEALL
    return MarkerArray(markers=[marker])


class DebugVisualization:
    """Owns the debug marker publishers of a world (a :class:`WorldListener`).

    Args:
        node: the server node (topics are relative to its private namespace).
        world: the world to draw.
        clock_ns: returns the sim time (ns) used to stamp markers.
    """

    def __init__(self, node: Node, world: World, clock_ns: Callable[[], int]) -> None:
        self._node = node
        self._world = world
        self._clock_ns = clock_ns
        self._topics: dict[str, str] = {}  # key ("layer/<name>" / "model/<name>") -> topic
        self._layer_publishers: dict[int, Publisher] = {}
        self._model_publishers: dict[str, tuple[Publisher, ModelMarkers]] = {}
        #: Publishers of deleted models by model name, oldest first, with the wall time they go.
        self._parked: OrderedDict[str, tuple[float, Publisher]] = OrderedDict()
        self._retiring: OrderedDict[str, tuple[float, Publisher]] = OrderedDict()
        self._topics_changed = False
        self._topic_list_publisher = node.create_publisher(DebugTopicList, "~/debug/topics", LATCHED_QOS)
        for layer in world.layers:
            publisher = self._create_publisher(f"layer/{layer.name}")
            publisher.publish(layer_markers(layer, clock_ns()))
            self._layer_publishers[id(layer)] = publisher
        for model in world.all_models():
            self.on_model_added(model)
        world.add_listener(self)
        self._publish_topic_list()

    def _create_publisher(self, key: str) -> Publisher:
        kind, _, name = key.partition("/")
        publisher = self._node.create_publisher(MarkerArray, f"~/debug/{kind}/{topic_token(name)}", LATCHED_QOS)
        self._topics[key] = publisher.topic_name
        return publisher

    def _publish_topic_list(self) -> None:
        self._topic_list_publisher.publish(DebugTopicList(topics=sorted(self._topics.values())))

    @property
    def topics(self) -> list[str]:
        """The fully qualified debug topic names currently offered."""
        return sorted(self._topics.values())

    # ------------------------------------------------------------------ WorldListener
    def on_model_added(self, model: Model) -> None:
        """Create the model's topic (or take back its parked one) and draw it."""
        parked = self._parked.pop(model.name, None) or self._retiring.pop(model.name, None)
        if parked is not None:
            publisher = parked[1]
            self._topics[f"model/{model.name}"] = publisher.topic_name
        else:
            publisher = self._create_publisher(f"model/{model.name}")
        markers = ModelMarkers(model)
        self._model_publishers[model.name] = (publisher, markers)
        publisher.publish(markers.update(self._clock_ns()))
        self._topics_changed = True

    def on_layers_changed(self, layers: list[Layer]) -> None:
        """Redraw layers whose pieces (tiles, or the whole layer) were loaded or unloaded."""
        for layer in layers:
            publisher = self._layer_publishers.get(id(layer))
            if publisher is not None:
                publisher.publish(layer_markers(layer, self._clock_ns()))

    def on_model_removed(self, model: Model) -> None:
        """Erase the model's markers and park its publisher (see the module doc)."""
        entry = self._model_publishers.pop(model.name, None)
        if entry is None:
            return
        publisher, _ = entry
        publisher.publish(delete_all_markers())
        self._topics.pop(f"model/{model.name}", None)
        self._topics_changed = True
        if not self._world.levels.owns_model(model.name):
            # Deleted, not streamed out: its name may never return. The publisher stays only long
            # enough to deliver the DELETEALL.
            self._retiring[model.name] = (time.monotonic() + RETIRE_TIME, publisher)
            return
        self._parked[model.name] = (time.monotonic() + PARK_TIME, publisher)
        while len(self._parked) > MAX_PARKED:
            self._node.destroy_publisher(self._parked.popitem(last=False)[1][1])

    # ------------------------------------------------------------------ periodic work
    def publish_models(self) -> None:
        """Redraw every model that has subscribers, republish a changed topic list and let
        parked publishers past their time go."""
        stamp_ns = self._clock_ns()
        for publisher, markers in self._model_publishers.values():
            if publisher.get_subscription_count() > 0:
                publisher.publish(markers.update(stamp_ns))
        if self._topics_changed:
            self._topics_changed = False
            self._publish_topic_list()
        now = time.monotonic()
        while self._parked and next(iter(self._parked.values()))[0] <= now:
            self._node.destroy_publisher(self._parked.popitem(last=False)[1][1])
        while self._retiring and next(iter(self._retiring.values()))[0] <= now:
            self._node.destroy_publisher(self._retiring.popitem(last=False)[1][1])

    def close(self) -> None:
        """Stop listening to the world and destroy every publisher."""
        self._world.remove_listener(self)
        for publisher in self._layer_publishers.values():
            self._node.destroy_publisher(publisher)
        for publisher, _ in self._model_publishers.values():
            self._node.destroy_publisher(publisher)
        for _, publisher in list(self._parked.values()) + list(self._retiring.values()):
            self._node.destroy_publisher(publisher)
        self._retiring.clear()
        self._node.destroy_publisher(self._topic_list_publisher)
        self._layer_publishers.clear()
        self._model_publishers.clear()
        self._parked.clear()
