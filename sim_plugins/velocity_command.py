"""The velocity command of a drive plugin: a geometry_msgs/Twist (or TwistStamped) subscription.

Parameters: ``twist_sub`` (``cmd_vel``, in the model's namespace) and ``stamped`` (false: Twist;
true: TwistStamped, as Kilted's navigation and teleop stacks publish by default). Only
``linear.x`` and ``angular.z`` are used. In-process users set :attr:`linear` and :attr:`angular`.
"""

from __future__ import annotations

from sim_server.core.plugin_api import PluginContext
from sim_server.core.yaml_reader import YamlReader

COMMAND_QUEUE_DEPTH = 1


class VelocityCommand:
    """The latest command: ``linear`` (m/s) and ``angular`` (rad/s, or the steering angle)."""

    def __init__(self, context: PluginContext, config: YamlReader) -> None:
        self.context = context
        topic = config.get_str("twist_sub", "cmd_vel")
        stamped = config.get_bool("stamped", False)
        self.linear = 0.0
        self.angular = 0.0
        self._subscription = None
        node = context.ros_node
        if node is not None:
            if stamped:
                from geometry_msgs.msg import TwistStamped

                self._subscription = node.create_subscription(
                    TwistStamped, context.topic(topic), lambda m: self._set(m.twist), COMMAND_QUEUE_DEPTH
                )
            else:
                from geometry_msgs.msg import Twist

                self._subscription = node.create_subscription(Twist, context.topic(topic), self._set, COMMAND_QUEUE_DEPTH)

    def _set(self, twist) -> None:
        self.linear = float(twist.linear.x)
        self.angular = float(twist.angular.z)

    def close(self) -> None:
        """Destroy the subscription."""
        if self._subscription is not None:
            self.context.ros_node.destroy_subscription(self._subscription)
            self._subscription = None
