"""Driving from the viewer: velocity commands that clients publish (the protocol's client
publish capability; Foxglove's Teleop panel) reach the drive whose command topic they name.

A client advertises a channel with the JSON encoding on a drive's topic (``/<robot>/cmd_vel``,
as in ROS; ``/cmd_vel`` for a robot without a namespace) and publishes ``geometry_msgs/Twist``
(``{"linear": {"x": ...}, "angular": {"z": ...}}``) or ``TwistStamped`` (the same under
``"twist"``) as JSON. Only ``linear.x`` (m/s) and ``angular.z`` (rad/s, or a tricycle's or a
car's steering angle in rad) are used, and ``linear.y`` (m/s) by a drive that slides (OmniDrive),
as by the drives' ROS subscriptions.

A command holds for :data:`COMMAND_HOLD` wall seconds after the last message (the Teleop panel
publishes while a button is held, and sends nothing on release); then, or at once when the
client goes, the drive is stopped, unless something else (a ROS node, a script) has commanded
it since. A message that cannot be used (too large, not JSON, not finite or beyond the speed
limits, a topic no drive listens to) is dropped with a warning to the clients and the log, at
most one per :data:`WARNING_PERIOD` a topic and one per :data:`ANY_WARNING_PERIOD` in all. Client callbacks run on the SDK's threads; the
commands are set on the step loop's thread (:meth:`Teleop.apply`).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from typing import TYPE_CHECKING, Any, Callable

from sim_server.core import limits
from sim_server.core.errors import one_line
from sim_server.live.discovery import absolute_topic, drive_commands

if TYPE_CHECKING:
    from sim_server.core.world import World

LOGGER = logging.getLogger("sim_server")
#: Wall seconds a command from the viewer holds after its last message.
COMMAND_HOLD = 1.5
#: Wall seconds between two warnings about one topic.
WARNING_PERIOD = 5.0
#: Wall seconds between two warnings of any topic (a status goes to every client: a flood of
#: them would fill honest clients' queues).
ANY_WARNING_PERIOD = 1.0
#: The encoding of the messages taken.
JSON = "json"


def twist_command(data: bytes) -> tuple[float, float, float]:
    """``(linear.x, angular.z, linear.y)`` of a JSON Twist or TwistStamped; ValueError (one
    line) for a message that cannot be used."""
    if len(data) > limits.MAX_VIEW_MESSAGE_BYTES:
        raise ValueError(f"a message must be at most {limits.MAX_VIEW_MESSAGE_BYTES} bytes, got {len(data)}")
    try:
        message = json.loads(data.decode("utf-8"), parse_constant=lambda name: math.nan)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"not JSON: {one_line(str(error), 100)}") from None
    if isinstance(message, dict) and isinstance(message.get("twist"), dict):
        message = message["twist"]
    if not isinstance(message, dict):
        raise ValueError("not a geometry_msgs/Twist (a JSON object with linear and angular)")
    values = []
    for part, axis, within in (("linear", "x", limits.SPEED), ("angular", "z", limits.ANGULAR_SPEED),
                               ("linear", "y", limits.SPEED)):
        vector = message.get(part, {})
        value = vector.get(axis, 0.0) if isinstance(vector, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not within.contains(value):
            raise ValueError(f"{part}.{axis} must be {within.describe()}, got {one_line(repr(value), 40)}")
        values.append(float(value))
    return values[0], values[1], values[2]


def _slides(command: Any) -> bool:
    """Whether ``command`` takes a sideways speed (an OmniDrive's)."""
    return bool(getattr(command, "uses_lateral", False))


def _set(command: Any, linear: float, angular: float, lateral: float) -> None:
    """Command ``linear`` (m/s), ``angular`` (rad/s) and, where the drive slides, ``lateral`` (m/s)."""
    command.linear, command.angular = linear, angular
    if _slides(command):
        command.lateral = lateral


def _current(command: Any) -> tuple[float, ...]:
    """What ``command`` holds now: (linear, angular), and lateral where the drive slides."""
    return (command.linear, command.angular, command.lateral) if _slides(command) else (command.linear, command.angular)


def _current_of(command: Any, values: tuple[float, float, float]) -> tuple[float, ...]:
    """What ``command`` holds after :func:`_set` of ``values``."""
    return values if _slides(command) else values[:2]


class _Drives:
    """The velocity commands of a world's drives by topic, found again after models came or
    left (the world's listener)."""

    def __init__(self, world: "World") -> None:
        self.world = world
        self.by_topic: dict[str, list[Any]] = {}
        self._dirty = True
        world.add_listener(self)

    def on_model_added(self, model: Any) -> None:
        self._dirty = True

    def on_model_removed(self, model: Any) -> None:
        self._dirty = True

    def close(self) -> None:
        try:
            self.world.remove_listener(self)
        except ValueError:  # a closed world forgot its listeners
            pass

    def current(self) -> dict[str, list[Any]]:
        if self._dirty:
            self._dirty = False
            self.by_topic = drive_commands(self.world)
        return self.by_topic


class Teleop:
    """Commands published by clients, for the drives of the world; ``status(text)`` tells the
    clients of a message dropped."""

    def __init__(self, world: "World", status: Callable[[str], None] = lambda text: None) -> None:
        self._status = status
        self._lock = threading.Lock()
        self._channels: dict[tuple[int, int], str] = {}
        #: The newest command of each topic not yet set: (linear, angular, lateral).
        self._new: dict[str, tuple[float, float]] = {}
        #: Topics whose last publishing channel went away.
        self._gone: set[str] = set()
        #: The commands set: topic -> ((linear, angular, lateral), the wall time of the last message).
        self._driving: dict[str, tuple[tuple[float, float], float]] = {}
        self._last_message: dict[str, float] = {}
        self._next_warning: dict[str, float] = {}
        self._next_any_warning = 0.0
        self._unsaid = 0
        self._drives = _Drives(world)
        #: Messages dropped so far.
        self.dropped = 0

    # ------------------------------------------------------------------ the SDK's threads
    def advertised(self, client_id: int, channel_id: int, topic: str, encoding: str) -> None:
        """A client advertised a channel to publish on."""
        topic = absolute_topic(topic)
        if encoding != JSON:
            self._warn(topic, f'{topic}: the simulator takes JSON messages, not "{one_line(encoding, 40)}"')
            return
        with self._lock:
            if len(self._channels) >= limits.MAX_VIEW_CLIENT_CHANNELS:
                full = True
            else:
                full = False
                self._channels[(client_id, channel_id)] = topic
        if full:
            self._warn(topic, f"{topic}: ignored, clients advertised {limits.MAX_VIEW_CLIENT_CHANNELS} channels already")

    def unadvertised(self, client_id: int, channel_id: int) -> None:
        """A client's channel went away (also when the client leaves)."""
        with self._lock:
            topic = self._channels.pop((client_id, channel_id), None)
            if topic is not None and topic not in self._channels.values():
                self._gone.add(topic)
                self._new.pop(topic, None)

    def message(self, client_id: int, channel_id: int, data: bytes) -> None:
        """A message of a client's channel."""
        topic = self._channels.get((client_id, channel_id))
        if topic is None:
            return  # a channel never advertised, or refused: nothing to drive
        try:
            command = twist_command(data)
        except ValueError as error:
            self._drop(topic, f"{topic}: dropped a command: {error}")
            return
        with self._lock:
            self._new[topic] = command
            self._last_message[topic] = time.monotonic()
            self._gone.discard(topic)

    def _drop(self, topic: str, text: str) -> None:
        self.dropped += 1
        self._warn(topic, text)

    def _warn(self, topic: str, text: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now < self._next_warning.get(topic, 0.0) or now < self._next_any_warning:
                self._unsaid += 1
                return
            if len(self._next_warning) > limits.MAX_VIEW_CLIENT_CHANNELS:
                self._next_warning.clear()
            self._next_warning[topic] = now + WARNING_PERIOD
            self._next_any_warning = now + ANY_WARNING_PERIOD
            if self._unsaid:
                text += f" (and {self._unsaid} more warning(s) not shown)"
                self._unsaid = 0
        LOGGER.warning("live view: %s", text)
        self._status(text)

    # ------------------------------------------------------------------ the step loop's thread
    def apply(self) -> None:
        """Set the drives' commands that came, stop those whose commands ran out."""
        drives = self._drives.current()
        if not (self._new or self._driving):
            return
        now = time.monotonic()
        with self._lock:
            new, self._new = self._new, {}
            gone, self._gone = self._gone, set()
            last = dict(self._last_message)
        for topic, values in new.items():
            if topic not in drives:
                self._drop(topic, f"no drive listens on {topic} (drives: {', '.join(sorted(drives)[:10]) or 'none'})")
                continue
            for command in drives[topic]:
                _set(command, *values)
            self._driving[topic] = (values, last.get(topic, now))
        for topic, (values, since) in list(self._driving.items()):
            if topic in new:
                continue
            if topic in gone or now - last.get(topic, since) > COMMAND_HOLD:
                del self._driving[topic]
                for command in drives.get(topic, ()):
                    if _current(command) == _current_of(command, values):  # nothing else commanded it since
                        _set(command, 0.0, 0.0, 0.0)

    def use_world(self, world: "World") -> None:
        """Drive ``world``'s robots from now on."""
        self._drives.close()
        self._drives = _Drives(world)
        self._driving.clear()

    def close(self) -> None:
        self._drives.close()
