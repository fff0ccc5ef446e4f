"""TricycleDrive: a steered front wheel driving a body, as the reference's cleaner robot.

Parameters (besides those of :mod:`sim_plugins.odometry` and :mod:`sim_plugins.velocity_command`):
``body`` (required; its origin is the front wheel's pivot), ``front_wheel_joint`` (a revolute
joint), ``rear_left_wheel_joint`` and ``rear_right_wheel_joint`` (weld joints), all required;
``max_steer_angle`` (rad, 0 = unlimited), ``linear_dynamics`` (limits of the front wheel speed)
and ``angular_dynamics`` (limits of the steering rate), ``max_angular_velocity`` and
``max_steer_acceleration`` (legacy steering-rate limits, used when the dynamics give none).

cmd_vel's ``linear.x`` is the speed of the front wheel (m/s) and ``angular.z`` the steering angle
to reach (rad). The joints are checked as the reference checks them: every joint anchors on the
body, wheels are anchored at their own origins, the front wheel at the body's origin and the rear
axle's midpoint is the foot of the perpendicular from the front wheel.
"""

from __future__ import annotations

import math

from sim_server.core.plugins import ModelPlugin, PluginBatch, TimeKeeper, YamlReader, limits as bounds
from sim_server.core.plugins.services import DynamicsLimits, offset_point_velocity, steer_towards
from sim_plugins.common import DriveBatch, body_of, read_dynamics
from sim_plugins.odometry import OdometryOffer, OdometryPublisher, prepare_drive
from sim_plugins.velocity_command import VelocityCommand

#: Tolerance (m) of the anchor checks.
ANCHOR_TOLERANCE = 1e-5


class TricycleDrive(OdometryOffer, ModelPlugin):
    """Steers and drives a tricycle base."""

    @classmethod
    def prepare(cls) -> None:
        """The compiled batch access to Box2D's bodies and the drives' arithmetic, ready before
        the first drive."""
        prepare_drive()

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_name("body")
        joint_names = {
            key: config.get_name(key) for key in ("front_wheel_joint", "rear_left_wheel_joint", "rear_right_wheel_joint")
        }
        self.command = VelocityCommand(self.context, config)
        self.odometry = OdometryPublisher(self.context, config, body_name)
        self.max_steer_angle = config.get_float("max_steer_angle", 0.0, within=bounds.DYNAMICS_LIMIT)
        self.linear_limits = read_dynamics(config, "linear_dynamics")
        steering = read_dynamics(config, "angular_dynamics")
        velocity_limit = steering.velocity_limit or config.get_float("max_angular_velocity", 0.0, within=bounds.DYNAMICS_LIMIT)
        acceleration = steering.acceleration_limit
        deceleration = steering.deceleration_limit
        if acceleration == 0.0:
            acceleration = deceleration = config.get_float("max_steer_acceleration", 0.0, within=bounds.DYNAMICS_LIMIT)
        self.steering_limits = DynamicsLimits(acceleration, deceleration, velocity_limit)
        body = body_of(self.model, config, body_name)
        self.body = body.physics_body
        joints = {}
        for key, name in joint_names.items():
            joint = self.model.joints.get(name)
            if joint is None:
                raise config.error(f'names joint "{name}", which does not exist in model "{self.model.name}"', key)
            joints[key] = joint
        self._check_geometry(config, joints, body)
        self.steer = 0.0
        self.steer_rate = 0.0
        self.speed = 0.0
        #: The steering angle the front joint's limits hold (rad; None before the first step).
        self._shown: float | None = None
        #: The centre of mass relative to the rear axle's midpoint, in the body frame (m).
        center = self.body.localCenter
        self._center_from_rear = (center[0] - self.rear_center[0], center[1] - self.rear_center[1])

    def _check_geometry(self, config: YamlReader, joints: dict, body) -> None:
        expected = {"front_wheel_joint": "revolute", "rear_left_wheel_joint": "weld", "rear_right_wheel_joint": "weld"}
        anchors = {}
        for key, joint in joints.items():
            if joint.spec.joint_type != expected[key]:
                raise config.error(f'must name a {expected[key]} joint, "{joint.name}" is a {joint.spec.joint_type} joint', key)
            spec = joint.spec
            if spec.body_a == body.name:
                body_anchor, wheel_anchor = spec.anchor_a, spec.anchor_b
            elif spec.body_b == body.name:
                body_anchor, wheel_anchor = spec.anchor_b, spec.anchor_a
            else:
                raise config.error(f'joint "{joint.name}" does not anchor on body "{body.name}"', key)
            if max(abs(wheel_anchor[0]), abs(wheel_anchor[1])) > ANCHOR_TOLERANCE:
                raise config.error(f'joint "{joint.name}" must be anchored at (0, 0) on the wheel', key)
            anchors[key] = body_anchor
            if key == "front_wheel_joint":
                self.invert_steering = spec.body_b == body.name
                self.front_joint = joint.physics_joint
                self.front_joint.limitEnabled = True  # the wheel shows the steering angle
        front = anchors["front_wheel_joint"]
        if max(abs(front[0]), abs(front[1])) > ANCHOR_TOLERANCE:
            raise config.error("front wheel joint must have its body anchored at (0, 0)", "front_wheel_joint")
        left, right = anchors["rear_left_wheel_joint"], anchors["rear_right_wheel_joint"]
        axle_x, axle_y = right[0] - left[0], right[1] - left[1]
        length_squared = axle_x * axle_x + axle_y * axle_y
        if length_squared <= ANCHOR_TOLERANCE**2:
            raise config.error("the rear wheel joints must be anchored at two different points", "rear_right_wheel_joint")
        k = (axle_y * (front[0] - left[0]) - axle_x * (front[1] - left[1])) / length_squared
        foot = (front[0] - k * axle_y, front[1] + k * axle_x)
        self.rear_center = (0.5 * (left[0] + right[0]), 0.5 * (left[1] + right[1]))
        if max(abs(foot[0] - self.rear_center[0]), abs(foot[1] - self.rear_center[1])) > ANCHOR_TOLERANCE:
            raise config.error(
                "the midpoint between the rear wheel anchors must be the foot of the perpendicular from the front "
                "wheel anchor to the rear axle",
                "rear_left_wheel_joint",
            )
        self.wheelbase = math.hypot(foot[0] - front[0], foot[1] - front[1])
        if self.wheelbase <= ANCHOR_TOLERANCE:
            raise config.error("the front wheel must not sit on the rear axle (zero wheelbase)", "front_wheel_joint")

    def before_physics_step(self, time: TimeKeeper) -> None:
        body = self.body
        position = body.position
        x, y = position.x, position.y  # (unpacking a b2Vec2 iterates in Python: slower)
        theta = body.angle
        if self.odometry.timer.check(time):
            velocity = body.GetLinearVelocityFromLocalPoint((0.0, 0.0))
            self.odometry.report(time.time_ns, x, y, theta, velocity.x, velocity.y, body.angularVelocity)
        forward, wz = self._steer(time.step_size)
        # The rear axle's midpoint moves straight ahead at ``forward``; the centre of mass is
        # offset from it.
        body.linearVelocity = offset_point_velocity(forward, 0.0, wz, math.cos(theta), math.sin(theta), *self._center_from_rear)
        body.angularVelocity = wz  # (Box2D wakes the body for any velocity but zero)

    @classmethod
    def before_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every drive's step: the steering in Python, the bodies' poses and velocities read
        and set in one compiled call (:class:`~sim_plugins.common.DriveBatch`), then odometry
        where due (of the state before the step, as one by one)."""
        drives = plugins.cache.get("drives")
        if drives is None:
            drives = plugins.cache["drives"] = DriveBatch(plugins, [plugin._center_from_rear for plugin in plugins])
        dt = time.step_size
        forward, turn_rate = drives.forward, drives.turn_rate
        for i, plugin in enumerate(drives.plugins):
            forward[i], turn_rate[i] = plugin._steer(dt)
        drives.drive()
        due = drives.odometry_due(time)
        if due:
            poses, velocities = drives.poses.tolist(), drives.velocities.tolist()
            for i, plugin in due:
                plugin.odometry.report(time.time_ns, *poses[i], *velocities[i])

    def _steer(self, dt: float) -> tuple[float, float]:
        """Steer and speed the front wheel up over ``dt`` seconds towards the command, within
        the limits (the front joint shows the steering angle). Returns the rear axle
        midpoint's forward speed (m/s) and the body's yaw rate (rad/s)."""
        limits = self.steering_limits
        self.steer, self.steer_rate = steer_towards(
            self.steer, self.steer_rate, self.command.angular, dt, self.max_steer_angle, limits.acceleration_limit,
            limits.deceleration_limit, limits.velocity_limit,
        )
        shown = -self.steer if self.invert_steering else self.steer
        if shown != self._shown:  # the joint keeps its limits: set them when the angle changes
            self.front_joint.limits = (shown, shown)
            self._shown = shown
        self.speed = self.linear_limits.limit(self.speed, self.command.linear, dt)
        return self.speed * math.cos(self.steer), self.speed * math.sin(self.steer) / self.wheelbase

    def on_shutdown(self) -> None:
        self.command.close()
        self.odometry.close()
