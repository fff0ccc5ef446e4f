"""The velocity command of a drive plugin: a geometry_msgs/Twist (or TwistStamped) subscription.

Parameters: ``twist_sub`` (``cmd_vel``, in the model's namespace) and ``stamped`` (false: Twist;
true: TwistStamped, as Kilted's navigation and teleop stacks publish by default). Only
``linear.x`` and ``angular.z`` are used. In-process users set :attr:`linear` and :attr:`angular`.

A command that is not finite or beyond :data:`~sim_server.core.limits.SPEED` /
:data:`~sim_server.core.limits.ANGULAR_SPEED` never reaches the world: a message carrying one is
dropped with a warning naming the topic (at most one per :data:`WARNING_PERIOD`), and setting one
in-process raises ValueError.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from sim_server.core import limits
from sim_server.core.plugins import PluginContext, YamlReader

COMMAND_QUEUE_DEPTH = 1
#: Wall seconds between warnings about dropped commands of one topic.
WARNING_PERIOD = 5.0
LOGGER = logging.getLogger("sim_server")


def _checked(value: float, within: limits.Range, what: str) -> float:
    """``value`` as a float, or ValueError when it is outside ``within``."""
    if not within.contains(value):
        raise ValueError(f"{what} command must be {within.describe()}, got {value!r}")
    return float(value)


class VelocityCommand:
    """The latest command: ``linear`` (m/s) and ``angular`` (rad/s, or the steering angle)."""

    #: Incremented whenever any command of the process changes: a batch of drives reads the
    #: commands again only then.
    changes = 0

    def __init__(self, context: PluginContext, config: YamlReader) -> None:
        self.context = context
        topic = config.get_str("twist_sub", "cmd_vel")
        stamped = config.get_bool("stamped", False)
        self._linear = 0.0
        self._angular = 0.0
        self._topic = context.topic(topic)
        self._dropped = 0
        self._next_warning = 0.0
        self._subscription = None
        node = context.ros_node
        if node is not None:
            if stamped:
                from geometry_msgs.msg import TwistStamped

                self._subscription = node.create_subscription(
                    TwistStamped, self._topic, lambda m: self._set(m.twist), COMMAND_QUEUE_DEPTH
                )
            else:
                from geometry_msgs.msg import Twist

                self._subscription = node.create_subscription(Twist, self._topic, self._set, COMMAND_QUEUE_DEPTH)

    @property
    def topic(self) -> str:
        """The topic commands come on (in the model's namespace; a live view's clients publish
        on it too)."""
        return self._topic

    @property
    def linear(self) -> float:
        """Commanded forward speed (m/s)."""
        return self._linear

    @linear.setter
    def linear(self, value: float) -> None:
        self._linear = _checked(value, limits.SPEED, "linear")
        VelocityCommand.changes += 1

    @property
    def angular(self) -> float:
        """Commanded turn rate (rad/s) or steering angle (rad)."""
        return self._angular

    @angular.setter
    def angular(self, value: float) -> None:
        self._angular = _checked(value, limits.ANGULAR_SPEED, "angular")
        VelocityCommand.changes += 1

    @staticmethod
    def set_all(commands: "Sequence[VelocityCommand]", linear: Sequence[float], angular: Sequence[float]) -> None:
        """Set ``commands[i]`` to ``linear[i]`` (m/s) and ``angular[i]`` (rad/s) for every ``i``,
        all or none: one ValueError names the first value out of its range, as the setters do
        (for many robots at once, e.g. a learning fleet's actions)."""
        commands = list(commands)
        if not all(isinstance(command, VelocityCommand) for command in commands):
            raise ValueError("set_all takes VelocityCommand objects only")
        columns = []
        for values, within, what in ((linear, limits.SPEED, "linear"), (angular, limits.ANGULAR_SPEED, "angular")):
            if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
                raise ValueError(f"{what} values must be a list of numbers, got {type(values).__name__}")
            for value in values:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ValueError(f"{what} command must be {within.describe()}, got {value!r:.100}")
                _checked(value, within, what)
            columns.append([float(value) for value in values])
        linear, angular = columns
        if not len(commands) == len(linear) == len(angular):
            raise ValueError(f"{len(commands)} commands, {len(linear)} linear and {len(angular)} angular values")
        for command, forward, turn in zip(commands, linear, angular):
            command._linear, command._angular = forward, turn
        VelocityCommand.changes += 1

    def _set(self, twist) -> None:
        linear, angular = float(twist.linear.x), float(twist.angular.z)
        if limits.SPEED.contains(linear) and limits.ANGULAR_SPEED.contains(angular):
            self._linear, self._angular = linear, angular
            VelocityCommand.changes += 1
            return
        self._dropped += 1
        now = time.monotonic()
        if now >= self._next_warning:
            LOGGER.warning(
                "%s: dropped %d velocity command(s) with linear.x or angular.z not finite or beyond +-%g "
                "(last: linear.x %r, angular.z %r); the model keeps its previous command",
                self._topic, self._dropped, limits.SPEED.high, linear, angular,
            )
            self._dropped = 0
            self._next_warning = now + WARNING_PERIOD

    def close(self) -> None:
        """Destroy the subscription."""
        if self._subscription is not None:
            self.context.ros_node.destroy_subscription(self._subscription)
            self._subscription = None
