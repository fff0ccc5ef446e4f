"""Tween: moves a body from its start pose by ``delta`` and back, with an easing curve.

Parameters: ``body`` (required), ``delta`` ([dx, dy, dyaw] in world axes, [0, 0, 0]),
``duration`` (s, 1.0), ``mode`` (``yoyo`` | ``loop`` | ``once`` | ``trigger``; ``yoyo``),
``easing`` (``linear`` or any name of :data:`sim_server.core.motion.easing.EASINGS`), ``trigger_topic``
(std_msgs/Bool: in ``trigger`` mode true moves towards the end, false back to the start; ``""``,
the default, subscribes to nothing).
The body is placed directly at the end of each step, so that after every step it is exactly on
its path (contacts of the step cannot push it off, as they cannot in the reference, whose Box2D
finds a teleported body's contacts one step later); progress advances by the step size in whole
milliseconds, as in the reference.
"""

from __future__ import annotations

from sim_server.core.plugins import ModelPlugin, Pose2D, TimeKeeper, YamlReader, limits as bounds
from sim_server.core.plugins.services import EASINGS
from sim_plugins.common import body_of

MODES = ("yoyo", "loop", "once", "trigger")
#: Progress at which a yoyo turns forward again.
YOYO_TURN = 0.001


class Tween(ModelPlugin):
    """Animates a body along an eased path."""

    def on_initialize(self, config: YamlReader) -> None:
        body = body_of(self.model, config, config.get_name("body"))
        self.mode = config.get_choice("mode", MODES, "yoyo")
        duration = config.get_float("duration", 1.0, within=bounds.DURATION)
        self.duration_ms = int(duration * 1000)
        self.delta = config.get_pose("delta", Pose2D())
        trigger_topic = config.get_topic("trigger_topic", "", empty_means_none=True)
        self.easing = EASINGS[config.get_choice("easing", tuple(EASINGS), "linear")]
        self.body = body.physics_body
        self.start = body.pose
        self.progress = 0.0
        self.direction = 1
        self.triggered = False
        self._subscription = None
        if trigger_topic and self.context.ros_node is not None:
            from std_msgs.msg import Bool

            self._subscription = self.context.ros_node.create_subscription(
                Bool, self.context.topic(trigger_topic), self._on_trigger, 1
            )

    def _on_trigger(self, message) -> None:
        self.triggered = bool(message.data)

    def after_physics_step(self, time: TimeKeeper) -> None:
        step_ms = int(time.step_size * 1000)
        if self.duration_ms > 0:
            self.progress += self.direction * step_ms / self.duration_ms
        else:
            self.progress = 1.0 if self.direction > 0 else 0.0
        self.progress = min(max(self.progress, 0.0), 1.0)
        fraction = self.easing(self.progress)
        start, delta = self.start, self.delta
        self.body.transform = (
            (start.x + fraction * delta.x, start.y + fraction * delta.y),
            start.theta + fraction * delta.theta,
        )
        self.body.awake = True
        if self.mode == "yoyo":
            if self.progress >= 1.0:
                self.direction = -1
            elif self.progress <= YOYO_TURN:
                self.direction = 1
        elif self.mode == "loop":
            if self.progress >= 1.0:
                self.progress = 0.0
        elif self.mode == "trigger":
            self.direction = 1 if self.triggered else -1

    def on_shutdown(self) -> None:
        if self._subscription is not None:
            self.context.ros_node.destroy_subscription(self._subscription)
            self._subscription = None
