"""The robots' social navigation metrics on ROS: ``~/social_metrics``
(``sim_msgs/msg/SocialMetrics``), one message per robot every :data:`PUBLISH_PERIOD` s of sim
time, while somebody subscribes.

The metrics are measured by :class:`~sim_server.core.crowd.world_metrics.WorldSocialMetrics`
(its docstring says what a robot is and when its episode starts) only while the topic has a
subscriber: the first subscriber starts every robot's episode, and with none left nothing is
measured.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from sim_msgs.msg import SocialMetrics
from sim_server.core.timing.timekeeper import TimeKeeper
from sim_server.core.world import World
from sim_server.ros.conversions import time_msg
from sim_server.ros.names import SOCIAL_METRICS_TOPIC
from sim_server.ros.state_datapacks import WORLD_FRAME
from sim_server.ros.subscriber_check import SubscriberCheck

if TYPE_CHECKING:
    from sim_server.core.crowd.world_metrics import WorldSocialMetrics

#: Time (s of sim time) between two messages of a robot.
PUBLISH_PERIOD = 1.0
#: Depth of the topic's queue (reliable): a message per robot each period.
QUEUE_DEPTH = 50


class SocialMetricsPublisher:
    """Publishes the robots' metrics of a world (an after-step hook of the world).

    Args:
        node: the server node.
        world: its world.
    """

    def __init__(self, node: Node, world: World) -> None:
        qos = QoSProfile(depth=QUEUE_DEPTH, reliability=ReliabilityPolicy.RELIABLE)
        self._publisher = node.create_publisher(SocialMetrics, SOCIAL_METRICS_TOPIC, qos)
        self._listened = SubscriberCheck(self._publisher)
        self._metrics: WorldSocialMetrics | None = None
        self._world = world
        self._next_publish = 0.0
        world.after_step_hooks.append(self.after_step)

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Measure the robots of ``world`` from now on (their episodes start afresh)."""
        self._world = world
        self._metrics = None
        world.after_step_hooks.append(self.after_step)

    def after_step(self, time: TimeKeeper) -> None:
        """Measure (while listened to) and publish each period."""
        if not self._listened():
            self._metrics = None
            return
        if self._metrics is None:
            from sim_server.core.crowd.world_metrics import WorldSocialMetrics  # only once listened to

            self._metrics = WorldSocialMetrics(self._world, time.step_size)
            self._next_publish = time.sim_time + PUBLISH_PERIOD
        if time.sim_time + 1e-9 < self._next_publish - PUBLISH_PERIOD:  # time went back: a reset
            self._next_publish = time.sim_time + PUBLISH_PERIOD
        self._metrics.after_step(time)
        if time.sim_time + 1e-9 < self._next_publish:
            return
        self._next_publish += PUBLISH_PERIOD * max(1, math.floor((time.sim_time - self._next_publish) / PUBLISH_PERIOD) + 1)
        stamp = time_msg(time.time_ns)
        for robot, values in self._metrics.results().items():
            message = SocialMetrics()
            message.header.stamp = stamp
            message.header.frame_id = WORLD_FRAME
            message.robot = robot
            message.names = list(values)
            message.values = [float(value) for value in values.values()]
            self._publisher.publish(message)

    def close(self) -> None:
        """Stop measuring."""
        self._metrics = None
