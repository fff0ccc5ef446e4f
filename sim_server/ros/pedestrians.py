"""The pedestrians on ROS: their states on one topic, their markers for RViz.

* ``~/pedestrians`` (``sim_msgs/msg/Pedestrians``): every pedestrian of every crowd in one
  message of parallel arrays (names, crowds, x, y, yaw, vx, vy, radius, group, state), world
  frame, stamped with sim time, after each crowd update (a crowd's ``update_rate``, sim time).
* ``~/debug/pedestrians`` (``visualization_msgs/msg/MarkerArray``): a crowd's people as one
  ``SPHERE_LIST`` marker of flat discs of their diameter (namespace: the crowd's name, id 0) and
  their headings as one ``LINE_LIST`` (id 1), in ``map``, on the same schedule.

Nothing per pedestrian: no topic, publisher or TF frame of its own, so a thousand people cost
one message on each topic. Each is built and sent only while somebody subscribes to it.
"""

from __future__ import annotations

import math
from array import array

from geometry_msgs.msg import Point
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.msg import Pedestrians
from sim_server.core.timing.timekeeper import TimeKeeper
from sim_server.core.world import World
from sim_server.ros.conversions import time_msg
from sim_server.ros.names import PEDESTRIAN_MARKERS_TOPIC as MARKERS_TOPIC
from sim_server.ros.names import PEDESTRIANS_TOPIC
from sim_server.ros.state_datapacks import WORLD_FRAME
from sim_server.ros.subscriber_check import SubscriberCheck

#: Depth of both topics' queues (reliable): a subscriber that falls behind loses old states.
QUEUE_DEPTH = 5
#: The markers' colour (RGBA, 0 to 1): the pictures' orange.
MARKER_COLOR = (1.0, 0.55, 0.1, 0.9)
#: Height (m) of the discs drawn for people, and length of their heading lines in radii.
MARKER_HEIGHT = 0.1
HEADING_LENGTH = 1.5


class PedestrianPublisher:
    """Publishes a world's pedestrians (an after-step hook of the world).

    Args:
        node: the server node.
        world: its world.
    """

    def __init__(self, node: Node, world: World) -> None:
        qos = QoSProfile(depth=QUEUE_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
        self._node = node
        self._states = node.create_publisher(Pedestrians, PEDESTRIANS_TOPIC, qos)
        self._markers = node.create_publisher(MarkerArray, MARKERS_TOPIC, qos)
        self._states_listened = SubscriberCheck(self._states)
        self._markers_listened = SubscriberCheck(self._markers)
        self._world = world
        self._marked: set[str] = set()
        world.after_step_hooks.append(self.publish)

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Publish the pedestrians of ``world`` from now on."""
        self._world = world
        world.after_step_hooks.append(self.publish)

    def publish(self, time: TimeKeeper) -> None:
        """After a step that followed a crowd update: the states and markers, where listened to."""
        crowds = self._world.crowds
        if not crowds or not any(crowd.updates_at(time.iterations - 1) for crowd in crowds):
            return
        states_wanted, markers_wanted = self._states_listened(), self._markers_listened()
        if not (states_wanted or markers_wanted):
            return
        snapshots = [crowd.snapshot() for crowd in crowds]
        stamp = time_msg(time.time_ns)
        if states_wanted:
            self._states.publish(states_message(snapshots, stamp))
        if markers_wanted:
            self._markers.publish(self._marker_message(snapshots, stamp))

    def _marker_message(self, snapshots: list, stamp) -> MarkerArray:
        markers = []
        shown = set()
        for snapshot in snapshots:
            shown.add(snapshot.crowd)
            discs = Marker(ns=snapshot.crowd, id=0, type=Marker.SPHERE_LIST, action=Marker.ADD)
            discs.header.frame_id, discs.header.stamp = WORLD_FRAME, stamp
            discs.pose.orientation.w = 1.0
            discs.scale.x = discs.scale.y = 2.0 * snapshot.radius
            discs.scale.z = MARKER_HEIGHT
            discs.color = ColorRGBA(r=MARKER_COLOR[0], g=MARKER_COLOR[1], b=MARKER_COLOR[2], a=MARKER_COLOR[3])
            discs.points = [Point(x=x, y=y, z=0.0) for x, y in snapshot.positions.tolist()]
            headings = Marker(ns=snapshot.crowd, id=1, type=Marker.LINE_LIST, action=Marker.ADD)
            headings.header = discs.header
            headings.pose.orientation.w = 1.0
            headings.scale.x = 0.2 * snapshot.radius
            headings.color = ColorRGBA(r=0.4, g=0.2, b=0.0, a=1.0)
            reach = HEADING_LENGTH * snapshot.radius
            points = []
            for (x, y), yaw in zip(snapshot.positions.tolist(), snapshot.headings.tolist()):
                points.append(Point(x=x, y=y, z=MARKER_HEIGHT))
                points.append(Point(x=x + reach * math.cos(yaw), y=y + reach * math.sin(yaw), z=MARKER_HEIGHT))
            headings.points = points
            markers += [discs, headings]
        for gone in self._marked - shown:  # a crowd of a world no longer loaded
            markers += [Marker(ns=gone, id=0, action=Marker.DELETE), Marker(ns=gone, id=1, action=Marker.DELETE)]
        self._marked = shown
        return MarkerArray(markers=markers)

    def close(self) -> None:
        """Stop publishing."""
        if self.publish in self._world.after_step_hooks:
            self._world.after_step_hooks.remove(self.publish)
        self._node.destroy_publisher(self._states)
        self._node.destroy_publisher(self._markers)


def states_message(snapshots: list, stamp) -> Pedestrians:
    """Every crowd's snapshot (:class:`~sim_server.core.crowd.crowd.CrowdState`) as one message."""
    message = Pedestrians()
    message.header.frame_id, message.header.stamp = WORLD_FRAME, stamp
    names: list[str] = []
    crowds: list[str] = []
    columns: dict[str, array] = {key: array("d") for key in ("x", "y", "yaw", "vx", "vy", "radius")}
    groups, states = array("i"), array("B")
    for snapshot in snapshots:
        count = len(snapshot.names)
        names += snapshot.names
        crowds += [snapshot.crowd] * count
        columns["x"].extend(snapshot.positions[:, 0].tolist())
        columns["y"].extend(snapshot.positions[:, 1].tolist())
        columns["yaw"].extend(snapshot.headings.tolist())
        columns["vx"].extend(snapshot.velocities[:, 0].tolist())
        columns["vy"].extend(snapshot.velocities[:, 1].tolist())
        columns["radius"].extend([snapshot.radius] * count)
        groups.extend(snapshot.groups.astype(int).tolist())
        states.extend(snapshot.states.tolist())
    message.names, message.crowds = names, crowds
    for key, values in columns.items():
        setattr(message, key, values)
    message.group, message.state = groups, states
    return message
