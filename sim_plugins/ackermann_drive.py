"""AckermannDrive: a car-like base (bicycle model) with steering and speed limits, odometry and TF.

Parameters (besides those of :mod:`sim_plugins.planar_drive`, :mod:`sim_plugins.odometry` and
:mod:`sim_plugins.velocity_command`):

* ``wheelbase`` (m, required, within :data:`~sim_server.core.limits.WHEELBASE`): from the rear
  axle to the front axle.
* ``rear_axle`` ([x, y] m on the body, [0, 0]): the rear axle's midpoint, the point that moves
  straight ahead (REP 105's ``base_link`` of a car usually sits there).
* ``max_steer_angle`` (rad, 0.6; at most 1.5): the steering angle's limit either way.
* ``linear_dynamics`` ({acceleration_limit, deceleration_limit, velocity_limit}: of the speed,
  m/s^2 and m/s) and ``angular_dynamics`` (the same of the steering angle: rad/s^2 and a
  steering rate limit, rad/s); 0 = none.
* ``command_angular`` (``steering_angle``): how cmd_vel's ``angular.z`` reads: the steering
  angle to reach (rad), as the reference's TricycleDrive reads it, or ``yaw_rate`` (rad/s), as
  navigation stacks send it, turned into the steering angle that gives it at the commanded
  speed (atan(wheelbase yaw_rate / speed)).
* ``ackermann_sub`` (``ackermann_cmd``): ackermann_msgs/AckermannDriveStamped commands, where
  that package is installed: ``speed`` and ``steering_angle``, with ``steering_angle_velocity``
  and ``acceleration`` as tighter limits for that command (0: the configured ones; negative
  values count by their size); ``jerk`` is not modelled.

cmd_vel's ``linear.x`` is the speed of the rear axle's midpoint (m/s). The car turns at
speed tan(steer) / wheelbase; its wheels do not slip. The newest command of either topic holds.
:attr:`AckermannDrive.state` is (speed m/s, steering angle rad, steering rate rad/s).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from sim_server.core.plugins import YamlReader, limits as bounds
from sim_server.core.plugins.services import drive_kernels
from sim_plugins.common import read_dynamics
from sim_plugins.planar_drive import PlanarDrive, PlanarDriveBatch

#: Values of ``command_angular``.
ANGULAR_MEANINGS = {"steering_angle": drive_kernels.STEERING_ANGLE, "yaw_rate": drive_kernels.YAW_RATE}
ACKERMANN_QUEUE_DEPTH = 1


class AckermannDrive(PlanarDrive):
    """Steers and drives a car."""

    def read_drive(self, config: YamlReader) -> None:
        self.wheelbase = config.get_float("wheelbase", within=bounds.WHEELBASE)
        self.moving_point = config.get_floats("rear_axle", 2, (0.0, 0.0), within=bounds.BODY_OFFSET)
        self.max_steer_angle = config.get_float("max_steer_angle", 0.6, within=bounds.STEER_ANGLE)
        self.speed_limits = read_dynamics(config, "linear_dynamics")
        self.steering_limits = read_dynamics(config, "angular_dynamics")
        self.angular_meaning = ANGULAR_MEANINGS[config.get_choice("command_angular", tuple(ANGULAR_MEANINGS), "steering_angle")]
        self.ackermann_topic = self.context.topic(config.get_topic("ackermann_sub", "ackermann_cmd"))
        #: The last ackermann_msgs command: (speed, steering angle) and its (steering rate,
        #: acceleration) limits; they hold while the velocity command is still that one.
        self._ackermann: tuple[tuple[float, float], tuple[float, float]] | None = None
        self._ackermann_subscription = None

    def on_initialize(self, config: YamlReader) -> None:
        super().on_initialize(config)
        node = self.context.ros_node
        if node is None:
            return
        try:
            from ackermann_msgs.msg import AckermannDriveStamped
        except ImportError:
            return  # cmd_vel only, as documented
        self._ackermann_subscription = node.create_subscription(
            AckermannDriveStamped, self.ackermann_topic, self._on_ackermann, ACKERMANN_QUEUE_DEPTH
        )

    def _on_ackermann(self, message) -> None:
        drive = message.drive
        speed, steer = float(drive.speed), float(drive.steering_angle)
        steer_rate, acceleration = abs(float(drive.steering_angle_velocity)), abs(float(drive.acceleration))
        if not (
            bounds.SPEED.contains(speed) and bounds.ANGULAR_SPEED.contains(steer)
            and bounds.DYNAMICS_LIMIT.contains(steer_rate) and bounds.DYNAMICS_LIMIT.contains(acceleration)
        ):
            self.command.drop(
                f"speed, steering_angle, steering_angle_velocity or acceleration not finite or beyond "
                f"+-{bounds.SPEED.high:g} (last: {speed!r}, {steer!r}, {steer_rate!r}, {acceleration!r})",
                self.ackermann_topic,
            )
            return
        self.set_ackermann(speed, steer, steer_rate, acceleration)

    def set_ackermann(self, speed: float, steering_angle: float, steering_rate: float = 0.0, acceleration: float = 0.0) -> None:
        """Command as an ackermann_msgs/AckermannDrive does (in-process too): the speed (m/s) and
        the steering angle (rad, whatever ``command_angular`` says), reached no faster than
        ``steering_rate`` (rad/s) and ``acceleration`` (m/s^2) when they are not 0."""
        for value, within, what in (
            (speed, bounds.SPEED, "speed"), (steering_angle, bounds.ANGULAR_SPEED, "steering angle"),
            (steering_rate, bounds.DYNAMICS_LIMIT, "steering rate"), (acceleration, bounds.DYNAMICS_LIMIT, "acceleration"),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not within.contains(value):
                raise ValueError(f"{what} must be {within.describe()}, got {value!r:.100}")
        self.command.linear, self.command.angular = speed, steering_angle
        self._ackermann = ((float(speed), float(steering_angle)), (float(steering_rate), float(acceleration)))

    def command_row(self) -> Sequence[float]:
        command = self.command
        values = (command.linear, command.angular)
        if self._ackermann is not None and self._ackermann[0] == values:
            steer_rate, acceleration = self._ackermann[1]
            return (*values, steer_rate, acceleration, float(drive_kernels.STEERING_ANGLE))
        self._ackermann = None
        return (*values, 0.0, 0.0, float(self.angular_meaning))

    @classmethod
    def constants(cls, plugins: Sequence["AckermannDrive"]) -> tuple[np.ndarray, ...]:
        count = len(plugins)
        return (
            np.array([plugin.wheelbase for plugin in plugins], dtype=np.float64),
            np.array([plugin.max_steer_angle for plugin in plugins], dtype=np.float64),
            np.array([plugin.speed_limits.as_row() for plugin in plugins], dtype=np.float64).reshape(count, 3),
            np.array([plugin.steering_limits.as_row() for plugin in plugins], dtype=np.float64).reshape(count, 3),
        )

    @classmethod
    def step_kernel(cls, batch: PlanarDriveBatch, dt: float) -> bool:
        wheelbases, max_steer, speed_limits, steer_limits = batch.constants
        return drive_kernels.step_ackermann(
            batch.commands, wheelbases, max_steer, speed_limits, steer_limits, batch.state, dt, batch.forward,
            batch.turn_rate,
        )

    @property
    def speed(self) -> float:
        """The rear axle midpoint's speed now (m/s)."""
        return float(self.state[0])

    @property
    def steering_angle(self) -> float:
        """The steering angle now (rad, positive to the left)."""
        return float(self.state[1])

    @property
    def turning_radius(self) -> float:
        """The radius (m) of the circle the rear axle's midpoint drives now (inf: straight)."""
        tangent = math.tan(self.steering_angle)
        return math.inf if tangent == 0.0 else self.wheelbase / abs(tangent)

    def on_shutdown(self) -> None:
        if getattr(self, "_ackermann_subscription", None) is not None:
            self.context.ros_node.destroy_subscription(self._ackermann_subscription)
            self._ackermann_subscription = None
        super().on_shutdown()
