"""ModelTfPublisher: TF between a model's bodies, and optionally from the world to the model.

Parameters: ``reference`` (the body every other body is published relative to; default, or
``""``, the model's first body), ``exclude`` (bodies not to publish, []), ``publish_tf_world``
(false: also publish ``world_frame_id`` -> reference), ``world_frame_id`` (``map``, not
namespaced; a leading ``/`` is dropped), ``update_rate`` (Hz, .inf). Frames follow the
reference's rule ``<namespace>_<body>``; every body published needs a name that can be a frame.
"""

from __future__ import annotations

import math

from sim_server.core.plugins.services import frame_problem
from sim_server.core.plugins import ModelPlugin, Pose2D, TimeKeeper, UpdateTimer, YamlReader
from sim_plugins.common import body_frame, body_of, check_transform


class ModelTfPublisher(ModelPlugin):
    """Publishes the transforms of a model's bodies on /tf."""

    def on_initialize(self, config: YamlReader) -> None:
        self.publish_tf_world = config.get_bool("publish_tf_world", False)
        self.world_frame_id = self.context.world_frame(config.get_frame("world_frame_id", "map"))
        self.timer = UpdateTimer(config.get_rate("update_rate", math.inf))
        reference = config.get_name("reference", "")  # "" (as in the reference): the first body
        exclude = config.get_name_list("exclude", [])
        self.reference = body_of(self.model, config, reference, "reference") if reference else self.model.first_body
        excluded = {body_of(self.model, config, name, "exclude").name for name in exclude}
        self.bodies = [
            body for body in self.model.bodies.values() if body.name not in excluded and body is not self.reference
        ]
        self.reference_frame = body_frame(self.context, config, self.reference.name, "reference")
        for body in self.bodies:
            problem = frame_problem(body.name)
            if problem is not None:
                raise config.error(f"must list body {body.name!r}, whose name cannot be a frame: {problem}", "exclude")
        self.child_frames = [self.context.frame(body.name) for body in self.bodies]
        if self.publish_tf_world:
            check_transform(config, "world_frame_id", self.world_frame_id, self.reference_frame)
        self._tf = None
        if self.context.ros_node is not None:
            from sim_server.ros.plugin_support import broadcaster_for, transform, update_transform

            self._tf = broadcaster_for(self.context.ros_node)
            self._update = update_transform
            self._messages = [transform(parent, child, pose, 0) for parent, child, pose in self.transforms()]
            # Claimed once here (not per send): a frame given another parent elsewhere (a drive's
            # odom -> body next to publish_tf_world) is reported.
            owner = self.context.describe()
            for message in self._messages:
                self._tf.claim(message.child_frame_id, message.header.frame_id, owner)

    def transforms(self) -> list[tuple[str, str, Pose2D]]:
        """(parent, child, pose) of every transform published now."""
        reference_pose = self.reference.pose
        inverse = reference_pose.inverse()
        result = [
            (self.reference_frame, frame, inverse.compose(body.pose)) for body, frame in zip(self.bodies, self.child_frames)
        ]
        if self.publish_tf_world:
            result.append((self.world_frame_id, self.reference_frame, reference_pose))
        return result

    def after_physics_step(self, time: TimeKeeper) -> None:
        if self._tf is None or not self._messages or not self.timer.check(time) or not self._tf.listened:
            return
        stamp = time.time_ns
        update = self._update
        self._tf.send(update(m, pose, stamp) for m, (_, _, pose) in zip(self._messages, self.transforms()))

    def on_shutdown(self) -> None:
        if self._tf is not None:
            self._tf.release(self.context.describe())
            self._tf = None
