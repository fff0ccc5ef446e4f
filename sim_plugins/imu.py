"""Imu: sensor_msgs/Imu of a body (a three-axis accelerometer and gyroscope, in the plane), with
the keys of the reference's Imu plugin, the body's true acceleration, and optional bias walks.

Parameters (the reference's): ``body`` (required), ``enable_imu_pub`` (true), ``imu_frame_id``
(``imu``, in the model's namespace), ``imu_pub`` (``imu/filtered``), ``ground_truth_pub``
(``imu/ground_truth``), ``orientation_noise``, ``angular_velocity_noise`` and
``linear_acceleration_noise`` (variances [x, y, z], [0, 0, 0]; in the plane only the yaw, the
yaw rate and the x and y accelerations are measured), ``orientation_covariance``,
``angular_velocity_covariance`` and ``linear_acceleration_covariance`` (9 numbers, row-major;
default: the noise variances on the diagonal), ``pub_rate`` (Hz, .inf: every step; the
reference's code reads ``pub_rate`` though its documentation says ``update_rate``),
``broadcast_tf`` (true: body -> IMU frame on /tf_static).

Ours: ``origin`` ([x, y, yaw] of the IMU on the body, [0, 0, 0]; the reference's is always the
body's origin) and ``angular_velocity_bias_walk`` and ``linear_acceleration_bias_walk`` ([x, y,
z], [0, 0, 0]: a random walk's standard deviation over a second, rad/s/sqrt(s) and
m/s^2/sqrt(s)): each measured bias moves by a normal draw of standard deviation
``walk * sqrt(dt)`` at each measurement ``dt`` seconds after the last, and is added to the noisy
reading (as MEMS gyroscopes and accelerometers drift).

What is measured (REP 103: x forward, y left, z up): the IMU frame's yaw in the world frame; its
yaw rate; the acceleration of the IMU's point, averaged over the last step (the change of its
velocity over the step), in the IMU frame: a robot going round a circle at speed v and turn rate
w feels v w towards the centre. The reference's acceleration was the world-frame velocity
difference times ``pub_rate`` (infinite by default), turned into the body frame with a sign
error in y; that is not kept. Gravity is not added (the reference's z is 0).

In-process: :attr:`Imu.last_truth` and :attr:`Imu.last_reading` (:class:`ImuReading`). A batch of
IMUs reads every body in one compiled call; without noise or bias, and with nobody subscribed,
a reading is built only when read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim_server.core import limits as bounds
from sim_server.core.geometry import Pose2D
from sim_server.core.physics.body_memory import BodyBatch, memory_access_works
from sim_server.core.plugins import ModelPlugin, PluginBatch, TimeKeeper, UpdateTimer, YamlReader
from sim_plugins.common import body_of, plugin_rng, read_rate

IMU_QUEUE_DEPTH = 10
#: Indices of the measured components in the [x, y, z] noise lists: yaw (z), yaw rate (z), and
#: the accelerations (x, y).
YAW, ACCELERATION = 2, (0, 1)


@dataclass(frozen=True)
class ImuReading:
    """One measurement: stamped ``stamp_ns`` (sim time), the IMU frame's ``yaw`` (rad) in the
    world frame, its ``yaw_rate`` (rad/s) and acceleration ``ax``, ``ay`` (m/s^2, IMU frame)."""

    stamp_ns: int
    yaw: float
    yaw_rate: float
    ax: float
    ay: float


def _noise(config: YamlReader, key: str) -> tuple[float, ...]:
    values = tuple(config.get_floats(key, 3, (0.0, 0.0, 0.0), within=bounds.NOISE))
    if any(value < 0.0 for value in values):
        raise config.error(f"must be >= 0 (variances or standard deviations), got {list(values)}", key)
    return values


def _covariance(config: YamlReader, key: str, variances: tuple[float, ...]) -> list[float]:
    default = [0.0] * 9
    default[0], default[4], default[8] = variances
    return list(config.get_floats(key, 9, tuple(default), within=bounds.COVARIANCE))


def point_states(poses: np.ndarray, velocities: np.ndarray, offsets: np.ndarray, yaws: np.ndarray) -> np.ndarray:
    """(N, 4): each IMU's world velocity x, y (m/s), yaw (rad) and yaw rate (rad/s), from its
    body's pose (N, 3: x, y, angle), velocity (N, 3: centre of mass vx, vy, w), the IMU's place
    relative to the body's centre of mass (N, 2, body frame, m) and its yaw on the body (N)."""
    cos, sin = np.cos(poses[:, 2]), np.sin(poses[:, 2])
    rx = cos * offsets[:, 0] - sin * offsets[:, 1]
    ry = sin * offsets[:, 0] + cos * offsets[:, 1]
    w = velocities[:, 2]
    return np.stack([velocities[:, 0] - w * ry, velocities[:, 1] + w * rx, poses[:, 2] + yaws, w], axis=1)


def accelerations(previous: np.ndarray, now: np.ndarray, dt: float) -> np.ndarray:
    """(N, 2): each IMU's acceleration (m/s^2) in its own frame, from its states (see
    :func:`point_states`) a step of ``dt`` seconds apart (zero where there was none before)."""
    if dt <= 0.0:
        return np.zeros((len(now), 2))
    ax, ay = (now[:, 0] - previous[:, 0]) / dt, (now[:, 1] - previous[:, 1]) / dt
    cos, sin = np.cos(now[:, 2]), np.sin(now[:, 2])
    return np.stack([cos * ax + sin * ay, -sin * ax + cos * ay], axis=1)


class Imu(ModelPlugin):
    """Measures a body's yaw, yaw rate and acceleration; publishes sensor_msgs/Imu at ``pub_rate``."""

    @classmethod
    def prepare(cls) -> None:
        """The compiled batch access to Box2D's bodies, ready before the first IMU."""
        memory_access_works()

    def on_initialize(self, config: YamlReader) -> None:
        self._publishers: tuple = ()
        self._tf = None
        body_name = config.get_str("body")
        self.body = body_of(self.model, config, body_name).physics_body
        self.enabled = config.get_bool("enable_imu_pub", True)
        self.frame_id = self.context.frame(config.get_str("imu_frame_id", "imu"))
        self.body_frame_id = self.context.frame(body_name)
        imu_topic = config.get_str("imu_pub", "imu/filtered")
        truth_topic = config.get_str("ground_truth_pub", "imu/ground_truth")
        self.imu_topic, self.truth_topic = self.context.topic(imu_topic), self.context.topic(truth_topic)
        noise = [_noise(config, key) for key in ("orientation_noise", "angular_velocity_noise", "linear_acceleration_noise")]
        self.covariances = [
            _covariance(config, key, variances) for key, variances in zip(
                ("orientation_covariance", "angular_velocity_covariance", "linear_acceleration_covariance"), noise)
        ]
        self.timer = UpdateTimer(read_rate(config, "pub_rate", math.inf))
        broadcast_tf = config.get_bool("broadcast_tf", True)
        self.origin = config.get_pose("origin", Pose2D())
        self.gyro_walk = _noise(config, "angular_velocity_bias_walk")[YAW]
        walk = _noise(config, "linear_acceleration_bias_walk")
        self.accel_walk = np.array([walk[i] for i in ACCELERATION])
        #: Standard deviations of the yaw, yaw rate and x, y acceleration noise.
        self.noise_std = np.sqrt(np.array([noise[0][YAW], noise[1][YAW], *(noise[2][i] for i in ACCELERATION)]))
        #: Whether anything random is added (without, nothing is drawn at all).
        self.noisy = bool(self.noise_std.any() or self.gyro_walk or self.accel_walk.any())
        self.rng = plugin_rng(self.context)
        #: The biases now: yaw rate (rad/s), x and y acceleration (m/s^2).
        self.bias = np.zeros(3)
        self._last_bias_ns: int | None = None
        local = self.body.localCenter
        self.offset = (self.origin.x - local.x, self.origin.y - local.y)
        #: The IMU's last state (see :func:`point_states`), kept by itself or by its batch.
        self._previous: np.ndarray | None = None
        self._previous_in: tuple[Any, int] | None = None
        self._last: tuple[ImuReading, ImuReading] | None = None
        self._deferred: tuple[Any, int] | None = None
        node = self.context.ros_node
        if node is not None and self.enabled:
            self._setup_ros(node, broadcast_tf)

    def _setup_ros(self, node: Any, broadcast_tf: bool) -> None:
        from sensor_msgs.msg import Imu as ImuMessage

        from sim_server.ros.conversions import set_stamp
        from sim_server.ros.subscriber_check import SubscriberCheck
        from sim_server.ros.tf_broadcast import broadcaster_for, transform

        self._set_stamp = set_stamp
        self._publishers = (
            node.create_publisher(ImuMessage, self.truth_topic, IMU_QUEUE_DEPTH),
            node.create_publisher(ImuMessage, self.imu_topic, IMU_QUEUE_DEPTH),
        )
        self._listened = SubscriberCheck(*self._publishers)
        self._messages = (ImuMessage(), ImuMessage())
        for message in self._messages:
            message.header.frame_id = self.frame_id
        noisy = self._messages[1]
        noisy.orientation_covariance, noisy.angular_velocity_covariance, noisy.linear_acceleration_covariance = (
            self.covariances)
        if broadcast_tf:
            self._tf = broadcaster_for(node)
            self._tf.send_static([transform(self.body_frame_id, self.frame_id, self.origin, self.context.world.time.time_ns)],
                                 owner=self.context.describe())

    # ------------------------------------------------------------------ measuring
    def after_physics_step(self, time: TimeKeeper) -> None:
        body = self.body
        position, velocity = body.position, body.linearVelocity
        pose = np.array([[position.x, position.y, body.angle]])
        speeds = np.array([[velocity.x, velocity.y, body.angularVelocity]])
        states = point_states(pose, speeds, np.array([self.offset]), np.array([self.origin.theta]))
        self._advance(states, 0, time)

    @classmethod
    def after_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every IMU's step: all bodies read in one compiled call, the accelerations computed
        as arrays; a reading is made (in Python) only where one is due and noisy or listened."""
        batch = plugins.cache.get("imus")
        if batch is None:
            batch = plugins.cache["imus"] = _ImuBatch(plugins)
        batch.step(time)

    def previous_state(self) -> np.ndarray | None:
        """(1, 4): the state of the last step (None before the first)."""
        if self._previous_in is not None:
            batch, index = self._previous_in
            if batch.previous is not None:
                return batch.previous[index:index + 1]
        return self._previous

    def _advance(self, states: np.ndarray, index: int, time: TimeKeeper) -> None:
        previous = self.previous_state()
        if previous is None:
            previous = states[index:index + 1]
        acceleration = accelerations(previous, states[index:index + 1], time.step_size)[0]
        self._previous, self._previous_in = states[index:index + 1].copy(), None
        if self.timer.check(time):
            yaw, yaw_rate = float(states[index, 2]), float(states[index, 3])
            self._measure(ImuReading(time.time_ns, yaw, yaw_rate, float(acceleration[0]), float(acceleration[1])))

    def _measure(self, truth: ImuReading) -> None:
        """The reading of ``truth`` with its noise and biases (drawn now, whoever reads), then
        published where somebody listens."""
        self._deferred = None
        reading = truth
        if self.noisy:
            if self._last_bias_ns is not None and (self.gyro_walk or self.accel_walk.any()):
                root_dt = math.sqrt(max(truth.stamp_ns - self._last_bias_ns, 0) * 1e-9)
                self.bias += self.rng.normal(0.0, 1.0, 3) * np.array([self.gyro_walk, *self.accel_walk]) * root_dt
            self._last_bias_ns = truth.stamp_ns
            n = self.rng.normal(0.0, 1.0, 4) * self.noise_std
            reading = ImuReading(truth.stamp_ns, truth.yaw + n[0], truth.yaw_rate + n[1] + self.bias[0],
                                 truth.ax + n[2] + self.bias[1], truth.ay + n[3] + self.bias[2])
        self._last = (truth, reading)
        if self._publishers and self._listened():
            for message, values in zip(self._messages, self._last):
                self._set_stamp(message.header, values.stamp_ns)
                half = 0.5 * values.yaw
                message.orientation.z, message.orientation.w = math.sin(half), math.cos(half)
                message.angular_velocity.z = values.yaw_rate
                message.linear_acceleration.x, message.linear_acceleration.y = values.ax, values.ay
            for publisher, message in zip(self._publishers, self._messages):
                publisher.publish(message)

    def _latest(self) -> tuple[ImuReading, ImuReading] | None:
        if self._deferred is not None:
            record, index = self._deferred
            self._deferred = None
            truth = record.reading(index)
            self._last = (truth, truth)
        return self._last

    @property
    def last_truth(self) -> ImuReading | None:
        """The last true measurement (None before the first)."""
        last = self._latest()
        return None if last is None else last[0]

    @property
    def last_reading(self) -> ImuReading | None:
        """The last measurement with its noise and biases (None before the first)."""
        last = self._latest()
        return None if last is None else last[1]

    def on_shutdown(self) -> None:
        node = self.context.ros_node
        if node is None:
            return
        for publisher in self._publishers:
            node.destroy_publisher(publisher)
        self._publishers = ()
        if self._tf is not None:
            self._tf.remove_static([self.frame_id], owner=self.context.describe())
            self._tf = None


class _ImuRecord:
    """The IMUs of a batch at one time: their states and accelerations, copied; a noise-free
    reading is built from it only when read."""

    __slots__ = ("stamp_ns", "states", "accelerations")

    def __init__(self, stamp_ns: int, states: np.ndarray, accelerations: np.ndarray) -> None:
        self.stamp_ns, self.states, self.accelerations = stamp_ns, states.copy(), accelerations.copy()

    def reading(self, index: int) -> ImuReading:
        _, _, yaw, yaw_rate = self.states[index].tolist()
        ax, ay = self.accelerations[index].tolist()
        return ImuReading(self.stamp_ns, yaw, yaw_rate, ax, ay)


class _ImuBatch:
    """The bodies of a batch of IMUs, read together each step."""

    def __init__(self, plugins: "list[Imu]") -> None:
        self.plugins = list(plugins)
        self.bodies = BodyBatch(plugin.body for plugin in self.plugins)
        self.offsets = np.array([plugin.offset for plugin in self.plugins], dtype=np.float64).reshape(-1, 2)
        self.yaws = np.array([plugin.origin.theta for plugin in self.plugins], dtype=np.float64)
        known = [plugin.previous_state() for plugin in self.plugins]
        #: The IMUs' states of the last step (N, 4), or None before the batch's first.
        self.previous: np.ndarray | None = None
        self._known = known
        for index, plugin in enumerate(self.plugins):
            plugin._previous_in = (self, index)
        groups: dict[int | None, list[tuple[int, Imu]]] = {}
        for index, plugin in enumerate(self.plugins):
            groups.setdefault(plugin.timer.period_ns, []).append((index, plugin))
        self.groups = list(groups.values())

    def step(self, time: TimeKeeper) -> None:
        states = point_states(self.bodies.poses(), self.bodies.velocities(), self.offsets, self.yaws)
        previous = self.previous
        if previous is None:  # a new batch: each IMU's own last state, where it has one
            previous = np.array([known[0] if known is not None else states[i] for i, known in enumerate(self._known)])
            self._known = []
        acceleration = accelerations(previous, states, time.step_size)
        self.previous = states
        due = [member for group in self.groups if group[0][1].timer.check(time) for member in group]
        if not due:
            return
        record = None
        for index, plugin in due:
            if plugin.noisy or (plugin._publishers and plugin._listened()):
                yaw, yaw_rate = float(states[index, 2]), float(states[index, 3])
                plugin._measure(ImuReading(time.time_ns, yaw, yaw_rate, float(acceleration[index, 0]),
                                           float(acceleration[index, 1])))
            else:
                if record is None:
                    record = _ImuRecord(time.time_ns, states, acceleration)
                plugin._deferred = (record, index)
