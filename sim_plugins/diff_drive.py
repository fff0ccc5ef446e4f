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

from sim_server.core.geometry import Pose2D
from sim_server.core.plugin_api import ModelPlugin
from sim_server.core.timekeeper import TimeKeeper
from sim_server.core.yaml_reader import YamlReader
from sim_plugins.common import body_of, offset_point_velocity, read_dynamics
from sim_plugins.odometry import OdometryPublisher
from sim_plugins.velocity_command import VelocityCommand


class DiffDrive(ModelPlugin):
    """Drives a body like a differential-drive robot."""

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_str("body")
        self.command = VelocityCommand(self.context, config)
        self.odometry = OdometryPublisher(self.context, config, body_name)
        self.linear_limits = read_dynamics(config, "linear_dynamics")
        self.angular_limits = read_dynamics(config, "angular_dynamics")
        twist_topic = config.get_str("twist_pub", "twist")
        enable_twist = config.get_bool("enable_twist_pub", True)
        self.enable_tf = config.get_bool("enable_odom_tf_pub", True)
        self.body = body_of(self.model, config, body_name).physics_body
        #: The body's centre of mass in its own frame (m), fixed once its fixtures are made.
        self._local_center = tuple(self.body.localCenter)
        self._limited = not (self.linear_limits.unlimited and self.angular_limits.unlimited)
        self.linear = 0.0
        self.angular = 0.0
        #: The last measured (noisy) forward speed and yaw rate, for in-process use.
        self.last_twist = (0.0, 0.0)
        self._twist_publisher = None
        self._tf = None
        node = self.context.ros_node
        if node is not None:
            from geometry_msgs.msg import TwistStamped

            from sim_server.ros.tf_broadcast import broadcaster_for, transform
            from sim_server.ros.tf_broadcast import update_transform
            from sim_server.ros.conversions import set_stamp
            from sim_server.ros.subscriber_check import SubscriberCheck

            self._set_stamp = set_stamp
            self._update_transform = update_transform
            if enable_twist:
                self._twist_publisher = node.create_publisher(TwistStamped, self.context.topic(twist_topic), 10)
                self._twist_listened = SubscriberCheck(self._twist_publisher)
                self._twist_message = TwistStamped()
                self._twist_message.header.frame_id = self.odometry.child_frame_id
            if self.enable_tf:
                self._tf = broadcaster_for(node)
                self._tf_message = transform(self.odometry.odom_frame_id, self.odometry.child_frame_id, Pose2D(), 0)
                odom, world_frame = self.odometry.odom_frame_id, self.odometry.ground_truth_frame_id
                owner = self.context.describe()
                # Claimed once here (not per send): a second parent of the body is reported.
                self._tf.claim(self.odometry.child_frame_id, odom, owner)
                if odom != world_frame:
                    # Odometry poses are world poses plus noise: the odom frame sits on the world
                    # frame, so RViz with fixed frame "map" shows the robot without extra nodes.
                    self._tf.send_static(
                        [transform(world_frame, odom, Pose2D(), self.context.world.time.time_ns)], owner=owner
                    )

    def before_physics_step(self, time: TimeKeeper) -> None:
        self._drive(time, self.odometry.timer.check(time))

    @classmethod
    def before_physics_step_batch(cls, plugins: "list[DiffDrive]", time: TimeKeeper) -> None:
        """Every drive's step in one loop, with each odometry rate's timer asked once."""
        odometry_due: dict[int | None, bool] = {}
        for plugin in plugins:
            timer = plugin.odometry.timer
            due = odometry_due.get(timer.period_ns)
            if due is None:
                due = odometry_due[timer.period_ns] = timer.check(time)
            plugin._drive(time, due)

    def _drive(self, time: TimeKeeper, odometry_due: bool) -> None:
        """Set the body's velocity from the command; measure and publish odometry when due."""
        command = self.command
        if self._limited:
            dt = time.step_size
            self.linear = linear = self.linear_limits.limit(self.linear, command.linear, dt)
            self.angular = angular = self.angular_limits.limit(self.angular, command.angular, dt)
        else:
            self.linear = linear = command.linear
            self.angular = angular = command.angular
        body = self.body
        position = body.position
        x, y = position.x, position.y  # (unpacking a b2Vec2 iterates in Python: slower)
        theta = body.angle
        cos_t, sin_t = math.cos(theta), math.sin(theta)
        vx, vy = linear * cos_t, linear * sin_t
        # The body turns about its origin: its centre of mass is offset from it.
        body.linearVelocity = offset_point_velocity(linear, angular, cos_t, sin_t, *self._local_center)
        body.angularVelocity = angular  # (Box2D wakes the body for any velocity but zero)
        if not odometry_due:
            return
        truth, noisy = self.odometry.measure(time.time_ns, Pose2D(x, y, theta), vx, vy, self.angular)
        self.odometry.publish(truth, noisy)
        # The twist noise is drawn whether or not anybody listens, so seeded runs do not depend
        # on who subscribes.
        if self.odometry.noisy:
            noise = self.odometry.rng.normal(0.0, 1.0, 2) * self.odometry.noise_std[[3, 5]]
            self.last_twist = (self.linear + noise[0], self.angular + noise[1])
        else:
            self.last_twist = (self.linear, self.angular)
        if self._twist_publisher is not None and self._twist_listened():
            message = self._twist_message
            self._set_stamp(message.header, time.time_ns)
            message.twist.linear.x, message.twist.angular.z = self.last_twist
            self._twist_publisher.publish(message)
        if self._tf is not None and self._tf.listened:
            self._tf.send([self._update_transform(self._tf_message, noisy.pose, time.time_ns)])

    def on_shutdown(self) -> None:
        if self._tf is not None:
            owner = self.context.describe()
            self._tf.remove_static([self.odometry.odom_frame_id], owner=owner)
            self._tf.release(owner)
        self.command.close()
        self.odometry.close()
        if self._twist_publisher is not None:
            self.context.ros_node.destroy_publisher(self._twist_publisher)
            self._twist_publisher = None
