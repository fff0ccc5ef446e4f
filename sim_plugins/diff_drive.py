"""DiffDrive: a differential-drive base driven by cmd_vel, with odometry, twist and TF.

Parameters (besides those of :mod:`sim_plugins.odometry` and :mod:`sim_plugins.velocity_command`):
``body`` (required), ``twist_pub`` (``twist``, geometry_msgs/TwistStamped of the measured forward
speed and yaw rate with the twist noise), ``enable_twist_pub`` (true), ``enable_odom_tf_pub``
(true: odom -> body on /tf from the noisy odometry), ``linear_dynamics`` and
``angular_dynamics`` ({acceleration_limit, deceleration_limit, velocity_limit}; 0 = none).
When the odom frame is not the ground-truth frame (``map``), an identity ``map`` -> odom
transform goes to /tf_static: odometry is the world pose plus noise, so both frames coincide.

Each step, before physics, the commanded speeds pass the dynamics limits and become the body's
velocity (forward speed along the body's x axis, yaw rate about its origin); odometry of the pose
before the step is published at ``pub_rate``.
"""

from __future__ import annotations

import math

from sim_server.core.plugins import ModelPlugin, PluginBatch, Pose2D, TimeKeeper, YamlReader
from sim_server.core.plugins.services import offset_point_velocity
from sim_plugins.common import DriveBatch, DriveRecord, body_of, read_dynamics
from sim_plugins.odometry import OdometryOffer, OdometryPublisher, odometry_transform, prepare_drive
from sim_plugins.velocity_command import VelocityCommand


class DiffDrive(OdometryOffer, ModelPlugin):
    """Drives a body like a differential-drive robot."""

    @classmethod
    def prepare(cls) -> None:
        """The compiled batch access to Box2D's bodies and the drives' arithmetic, ready before
        the first drive."""
        prepare_drive()

    def on_initialize(self, config: YamlReader) -> None:
        # What on_shutdown releases, so that it can after a failure anywhere below.
        self.command: VelocityCommand | None = None
        self.odometry: OdometryPublisher | None = None
        self._twist_publisher = None
        self._tf = None
        body_name = config.get_name("body")
        # Checked before any topic is made: a model without the body leaves nothing behind.
        self.body = body_of(self.model, config, body_name).physics_body
        self.command = VelocityCommand(self.context, config)
        self.odometry = OdometryPublisher(self.context, config, body_name)
        self.odometry.extra_draws = 2  # the twist's noise (forward speed, yaw rate)
        self.linear_limits = read_dynamics(config, "linear_dynamics")
        self.angular_limits = read_dynamics(config, "angular_dynamics")
        twist_topic = config.get_topic("twist_pub", "twist")
        enable_twist = config.get_bool("enable_twist_pub", True)
        #: The body's centre of mass in its own frame (m), fixed once its fixtures are made.
        self._local_center = tuple(self.body.localCenter)
        self._limited = not (self.linear_limits.unlimited and self.angular_limits.unlimited)
        self.linear = 0.0
        self.angular = 0.0
        self._last_twist = (0.0, 0.0)
        #: A batch's record and this drive's index in it, when the twist is built on reading.
        self._twist_deferred: tuple[DriveRecord, int] | None = None
        #: Whether anybody subscribes to the odometry or the twist (None without such topics).
        self._topics_listened = None
        node = self.context.ros_node
        if node is not None:
            from geometry_msgs.msg import TwistStamped

            from sim_server.ros.plugin_support import SubscriberCheck, set_stamp

            self._set_stamp = set_stamp
            if enable_twist:
                self._twist_publisher = node.create_publisher(TwistStamped, self.context.topic(twist_topic), 10)
                self._twist_listened = SubscriberCheck(self._twist_publisher)
                self._twist_message = TwistStamped()
                self._twist_message.header.frame_id = self.odometry.child_frame_id
            topics = (*self.odometry.publishers, *([self._twist_publisher] if self._twist_publisher else []))
            if topics:
                self._topics_listened = SubscriberCheck(*topics)
        self._tf = odometry_transform(self.context, self.odometry, config)

    def before_physics_step(self, time: TimeKeeper) -> None:
        self._update_speeds(time.step_size)
        body = self.body
        position = body.position
        x, y = position.x, position.y  # (unpacking a b2Vec2 iterates in Python: slower)
        theta = body.angle
        # The body turns about its origin: its centre of mass is offset from it.
        body.linearVelocity = offset_point_velocity(
            self.linear, 0.0, self.angular, math.cos(theta), math.sin(theta), *self._local_center
        )
        body.angularVelocity = self.angular  # (Box2D wakes the body for any velocity but zero)
        if self.odometry.timer.check(time):
            self._report(time, x, y, theta)

    @classmethod
    def before_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every drive's step: the bodies' poses read and velocities set in one compiled call
        (:class:`~sim_plugins.common.DriveBatch`), then odometry where due."""
        drives = plugins.cache.get("drives")
        if drives is None:
            drives = plugins.cache["drives"] = _Drives(plugins)
        drives.step(time)

    def _update_speeds(self, dt: float) -> None:
        """The commanded speeds, through the dynamics limits over ``dt`` seconds."""
        command = self.command
        if self._limited:
            self.linear = self.linear_limits.limit(self.linear, command.linear, dt)
            self.angular = self.angular_limits.limit(self.angular, command.angular, dt)
        else:
            self.linear, self.angular = command.linear, command.angular

    def _report(self, time: TimeKeeper, x: float, y: float, theta: float, tf_wanted: bool | None = None) -> None:
        """Measure and publish odometry, twist and TF of the pose (m, rad) before the step
        (``tf_wanted``: whether anybody listens to /tf, when the caller asked already)."""
        linear, angular = self.linear, self.angular
        odometry = self.odometry
        world_vx, world_vy = heading_velocity(linear, theta)
        topics_wanted = self._topics_listened is not None and self._topics_listened()
        if tf_wanted is None:
            tf_wanted = self._tf is not None and self._tf.listened
        if not (topics_wanted or tf_wanted):
            odometry.note(time.time_ns, x, y, theta, world_vx, world_vy, angular)
            self._measure_twist(linear, angular)
            return
        truth, noisy = odometry.measure(time.time_ns, Pose2D(x, y, theta), world_vx, world_vy, angular)
        odometry.publish(truth, noisy)
        self._measure_twist(linear, angular)
        if self._twist_publisher is not None and self._twist_listened():
            message = self._twist_message
            self._set_stamp(message.header, time.time_ns)
            message.twist.linear.x, message.twist.angular.z = self._last_twist
            self._twist_publisher.publish(message)
        if tf_wanted:
            self._tf.send(noisy.pose, time.time_ns)

    @property
    def last_twist(self) -> tuple[float, float]:
        """The last measured (noisy) forward speed (m/s) and yaw rate (rad/s), for in-process use."""
        if self._twist_deferred is not None:
            record, index = self._twist_deferred
            self._twist_deferred = None
            self._last_twist = (float(record.forward[index]), float(record.turn_rate[index]))
        return self._last_twist

    def _measure_twist(self, linear: float, angular: float) -> None:
        """:attr:`last_twist`: the speeds (m/s, rad/s) with the twist noise, which is drawn
        whether or not anybody listens, so seeded runs do not depend on who subscribes."""
        odometry = self.odometry
        self._twist_deferred = None
        if odometry.noisy:  # (the numbers drawn after the odometry's, by the same measurement)
            forward_noise, turn_noise = (odometry.extra_normals * odometry.noise.white_std[[3, 5]]).tolist()
            self._last_twist = (linear + forward_noise, angular + turn_noise)
        else:
            self._last_twist = (linear, angular)

    def on_shutdown(self) -> None:
        if self._tf is not None:
            self._tf.close()
        if self.command is not None:
            self.command.close()
        if self.odometry is not None:
            self.odometry.close()
        if self._twist_publisher is not None:
            self.context.ros_node.destroy_publisher(self._twist_publisher)
            self._twist_publisher = None


def heading_velocity(forward: float, theta: float) -> tuple[float, float]:
    """World-frame velocity (m/s) of moving ``forward`` (m/s) along the heading ``theta`` (rad):
    the odometry's velocity of a DiffDrive (a record of a batch gives the same,
    :class:`~sim_plugins.common.DriveRecord`)."""
    return forward * math.cos(theta), forward * math.sin(theta)


class _Drives(DriveBatch):
    """A batch of DiffDrives, whose speeds are read again only when a command changed."""

    def __init__(self, plugins: "list[DiffDrive]") -> None:
        super().__init__(plugins, [plugin._local_center for plugin in plugins])
        self.limited = [(i, plugin) for i, plugin in enumerate(self.plugins) if plugin._limited]
        #: The node's one TF broadcaster (None without ROS or when no drive sends TF).
        self.tf = next((plugin._tf for plugin in self.plugins if plugin._tf is not None), None)
        #: Whether anybody subscribes to any drive's odometry or twist (None without ROS).
        self.topics_listened = None
        topics = [topic for plugin in self.plugins if plugin._topics_listened for topic in plugin._topics_listened.publishers]
        if topics:
            from sim_server.ros.plugin_support import SubscriberCheck

            self.topics_listened = SubscriberCheck(*topics)
        #: :attr:`VelocityCommand.changes` when the commands were last read (-1: never).
        self.commands_read = -1

    def step(self, time: TimeKeeper) -> None:
        dt = time.step_size
        if self.commands_read != VelocityCommand.changes:
            self.commands_read = VelocityCommand.changes
            for i, plugin in enumerate(self.plugins):
                if not plugin._limited:
                    plugin._update_speeds(dt)
                    self.forward[i], self.turn_rate[i] = plugin.linear, plugin.angular
        for i, plugin in self.limited:  # their speeds change over time at a steady command
            plugin._update_speeds(dt)
            self.forward[i], self.turn_rate[i] = plugin.linear, plugin.angular
        self.drive()
        due = self.odometry_due(time)
        if not due:
            return
        tf_listened = self.tf is not None and self.tf.listened  # asked once for all
        if tf_listened or (self.topics_listened is not None and self.topics_listened()):
            poses = self.poses.tolist()
            for i, plugin in due:
                plugin._report(time, *poses[i], tf_listened and plugin._tf is not None)
            return
        # Nobody listens to any drive: noise-free odometry is built when read, from one record.
        record = self.record(time.time_ns)
        for i, plugin in due:
            if plugin.odometry.noisy:  # its noise is drawn now
                plugin._report(time, *record.poses[i].tolist(), False)
            else:
                plugin.odometry.defer(record, i)
                plugin._twist_deferred = (record, i)
