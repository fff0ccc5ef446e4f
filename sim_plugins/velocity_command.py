"""The velocity command of a drive plugin: a geometry_msgs/Twist (or TwistStamped) subscription.

Parameters: ``twist_sub`` (``cmd_vel``, in the model's namespace) and ``stamped`` (false: Twist;
true: TwistStamped, as Kilted's navigation and teleop stacks publish by default). Only
``linear.x`` and ``angular.z`` are used, and ``linear.y`` by drives that slide sideways
(OmniDrive). In-process users set :attr:`linear`, :attr:`angular` (and :attr:`lateral`).

A command that is not finite or beyond :data:`~sim_server.core.limits.SPEED` /
:data:`~sim_server.core.limits.ANGULAR_SPEED` never reaches the world: a message carrying one is
dropped with a warning naming the topic (at most one per :data:`WARNING_PERIOD`), and setting one
in-process raises ValueError.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from sim_server.core.plugins import PluginContext, TwistCommand, YamlReader, limits

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
    """The latest command: ``linear`` (m/s), ``angular`` (rad/s, or the steering angle) and, for
    a drive made with ``lateral=True``, ``lateral`` (m/s, to the left)."""

    #: Incremented whenever any command of the process changes: a batch of drives reads the
    #: commands again only then.
    changes = 0

    def __init__(self, context: PluginContext, config: YamlReader, *, lateral: bool = False) -> None:
        self.context = context
        topic = config.get_topic("twist_sub", "cmd_vel")
        stamped = config.get_bool("stamped", False)
        #: Whether ``linear.y`` is read (a drive that slides sideways); else it stays 0.
        self.uses_lateral = lateral
        self._linear = 0.0
        self._angular = 0.0
        self._lateral = 0.0
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
    def lateral(self) -> float:
        """Commanded sideways speed (m/s, to the left; 0 for drives that cannot slide)."""
        return self._lateral

    @lateral.setter
    def lateral(self, value: float) -> None:
        value = _checked(value, limits.SPEED, "lateral")
        if value != 0.0 and not self.uses_lateral:
            raise ValueError(f"{self._topic}: this drive cannot move sideways (lateral command {value!r})")
        self._lateral = value
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
    def set_all(
        commands: "Sequence[TwistCommand]", linear: Sequence[float], angular: Sequence[float],
        lateral: Sequence[float] | None = None,
    ) -> None:
        """Set ``commands[i]`` to ``linear[i]`` (m/s) and ``angular[i]`` (rad/s), and
        ``lateral[i]`` (m/s) when given, for every ``i``, all or none: one ValueError names the
        first value out of its range, as the setters do (for many robots at once, e.g. a
        learning fleet's actions); a drive that cannot slide takes only 0 sideways. The commands
        are this class's, or any other drive's ``TwistCommand`` (set through its setters)."""
        commands = list(commands)
        own = [isinstance(command, VelocityCommand) for command in commands]
        if not all(mine or isinstance(command, TwistCommand) for mine, command in zip(own, commands)):
            raise ValueError("set_all takes TwistCommand objects only (VelocityCommand or another drive's)")
        columns = []
        given = [(linear, limits.SPEED, "linear"), (angular, limits.ANGULAR_SPEED, "angular")]
        if lateral is not None:
            given.append((lateral, limits.SPEED, "lateral"))
        for values, within, what in given:
            if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
                raise ValueError(f"{what} values must be a list of numbers, got {type(values).__name__}")
            for value in values:
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ValueError(f"{what} command must be {within.describe()}, got {value!r:.100}")
                _checked(value, within, what)
            columns.append([float(value) for value in values])
        linear, angular = columns[0], columns[1]
        sideways = columns[2] if lateral is not None else None
        if not len(commands) == len(linear) == len(angular) == len(sideways if sideways is not None else linear):
            counts = f"{len(linear)} linear and {len(angular)} angular"
            if sideways is not None:
                counts = f"{len(linear)} linear, {len(angular)} angular and {len(sideways)} lateral"
            raise ValueError(f"{len(commands)} commands, {counts} values")
        if sideways is not None:
            for command, value in zip(commands, sideways):
                if value != 0.0 and not command.uses_lateral:
                    raise ValueError(f"{command.topic}: this drive cannot move sideways (lateral command {value!r})")
        for index, (command, forward, turn) in enumerate(zip(commands, linear, angular)):
            if own[index]:
                command._linear, command._angular = forward, turn
                if sideways is not None:
                    command._lateral = sideways[index]
            else:
                command.linear, command.angular = forward, turn
                if sideways is not None:
                    command.lateral = sideways[index]
        VelocityCommand.changes += 1

    def _set(self, twist) -> None:
        linear, angular = float(twist.linear.x), float(twist.angular.z)
        lateral = float(twist.linear.y) if self.uses_lateral else 0.0
        if limits.SPEED.contains(linear) and limits.ANGULAR_SPEED.contains(angular) and limits.SPEED.contains(lateral):
            self._linear, self._angular, self._lateral = linear, angular, lateral
            VelocityCommand.changes += 1
            return
        self.drop(
            f"linear.x, linear.y or angular.z not finite or beyond +-{limits.SPEED.high:g} "
            f"(last: linear.x {linear!r}, linear.y {lateral!r}, angular.z {angular!r})"
        )

    def drop(self, why: str, topic: str | None = None) -> None:
        """Count a command dropped because of ``why`` (its values, for the warning) and warn
        about it on ``topic`` (default :attr:`topic`), at most once per :data:`WARNING_PERIOD`."""
        self._dropped += 1
        now = time.monotonic()
        if now >= self._next_warning:
            LOGGER.warning(
                "%s: dropped %d velocity command(s) with %s; the model keeps its previous command",
                topic or self._topic, self._dropped, why,
            )
            self._dropped = 0
            self._next_warning = now + WARNING_PERIOD

    def close(self) -> None:
        """Destroy the subscription."""
        if self._subscription is not None:
            self.context.ros_node.destroy_subscription(self._subscription)
            self._subscription = None
