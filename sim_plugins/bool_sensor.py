"""BoolSensor: std_msgs/Bool telling whether the model touched anything since the last message.

Parameters: ``topic`` (``bool_sensor``, in the model's namespace), ``update_rate`` (Hz, .inf),
``body`` (must exist; default the first body). As in the reference, a contact on any body of the
model counts, sensors included, and a contact that began and ended between two messages is still
reported once.
"""

from __future__ import annotations

import math

from sim_server.core.plugins import ModelPlugin, TimeKeeper, UpdateTimer, YamlReader
from sim_plugins.common import body_of


class BoolSensor(ModelPlugin):
    """Latches contacts between publications."""

    def on_initialize(self, config: YamlReader) -> None:
        topic = config.get_topic("topic", "bool_sensor")
        self.timer = UpdateTimer(config.get_rate("update_rate", math.inf))
        body_name = config.get_name("body", self.model.first_body.name)
        self.body = body_of(self.model, config, body_name)
        self.contacts = 0
        self.hit_something = False
        #: The last value published (for in-process use).
        self.last_value: bool | None = None
        self._publisher = None
        if self.context.ros_node is not None:
            from std_msgs.msg import Bool

            from sim_server.ros.plugin_support import SubscriberCheck

            self._message = Bool()
            self._publisher = self.context.ros_node.create_publisher(Bool, self.context.topic(topic), 10)
            self._listened = SubscriberCheck(self._publisher)

    def _counts(self, contact) -> bool:
        fixtures = self.split_contact(contact)
        return fixtures is not None and fixtures[0].body is not fixtures[1].body

    def begin_contact(self, contact) -> None:
        if self._counts(contact):
            self.contacts += 1
            self.hit_something = True

    def end_contact(self, contact) -> None:
        if self._counts(contact):
            self.contacts -= 1

    def after_physics_step(self, time: TimeKeeper) -> None:
        if not self.timer.check(time):
            return
        value = self.hit_something or self.contacts > 0
        self.hit_something = False
        self.last_value = value
        if self._publisher is not None and self._listened():
            self._message.data = value
            self._publisher.publish(self._message)

    def on_shutdown(self) -> None:
        if self._publisher is not None:
            self.context.ros_node.destroy_publisher(self._publisher)
            self._publisher = None
