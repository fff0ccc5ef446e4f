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
IMUs reads every body in one compiled call and draws every noisy IMU's noise in another (each
IMU's own stream, :mod:`sim_server.core.random_streams`: the same numbers alone or in a batch);
with nobody subscribed, readings are built only when read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim_server.core.plugins import (
    ModelPlugin, PluginBatch, Pose2D, TimeKeeper, UpdateTimer, YamlReader, limits as bounds,
)
from sim_server.core.plugins.services import BodyBatch, draw_normals, gather, jit, memory_access_works, random_streams
from sim_plugins.common import BatchRecords, RecordSlot, body_of, plugin_stream, sensor_parent_frame

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


@jit
def _measure_points(poses, velocities, offsets, yaws, previous, has_previous, dt, states, truth):
    for i in range(poses.shape[0]):
        theta = poses[i, 2]
        cos, sin = math.cos(theta), math.sin(theta)
        arm_x = cos * offsets[i, 0] - sin * offsets[i, 1]
        arm_y = sin * offsets[i, 0] + cos * offsets[i, 1]
        w = velocities[i, 2]
        vx, vy = velocities[i, 0] - w * arm_y, velocities[i, 1] + w * arm_x
        yaw = theta + yaws[i]
        states[i, 0], states[i, 1], states[i, 2], states[i, 3] = vx, vy, yaw, w
        truth[i, 0], truth[i, 1], truth[i, 2], truth[i, 3] = yaw, w, 0.0, 0.0
        if dt > 0.0 and has_previous[i]:
            ax, ay = (vx - previous[i, 0]) / dt, (vy - previous[i, 1]) / dt
            cos_yaw, sin_yaw = math.cos(yaw), math.sin(yaw)
            truth[i, 2] = cos_yaw * ax + sin_yaw * ay
            truth[i, 3] = -sin_yaw * ax + cos_yaw * ay


def measure_points(
    poses: np.ndarray, velocities: np.ndarray, offsets: np.ndarray, yaws: np.ndarray, previous: np.ndarray,
    has_previous: np.ndarray, dt: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The IMUs' states and true readings, in one compiled call.

    Args:
        poses: (N, 3) the bodies' x, y (m) and angle (rad).
        velocities: (N, 3) their centres of mass' vx, vy (m/s) and w (rad/s).
        offsets: (N, 2) each IMU's place from its body's centre of mass (m, body frame).
        yaws: (N,) each IMU's yaw on its body (rad).
        previous: (N, 4) each IMU's state a step (``dt`` s) before, where ``has_previous``.

    Returns:
        The states (N, 4: the IMU point's world velocity x, y in m/s, its yaw in rad and yaw rate
        in rad/s) and the true readings (N, 4: yaw, yaw rate, and the acceleration x, y in m/s^2
        in the IMU's frame, averaged over the step: 0 without a state before).
    """
    count = len(poses)
    states, truth = np.empty((count, 4)), np.empty((count, 4))
    _measure_points(poses, velocities, offsets, yaws, previous, has_previous, float(dt), states, truth)
    return states, truth


class Imu(ModelPlugin):
    """Measures a body's yaw, yaw rate and acceleration; publishes sensor_msgs/Imu at ``pub_rate``."""

    @classmethod
    def prepare(cls) -> None:
        """The compiled batch access to Box2D's bodies and the noise, ready before the first IMU."""
        memory_access_works()
        random_streams.warm_up()

    def on_initialize(self, config: YamlReader) -> None:
        self._publishers: tuple = ()
        self._tf = None
        body_name = config.get_name("body")
        self.body = body_of(self.model, config, body_name).physics_body
        self.enabled = config.get_bool("enable_imu_pub", True)
        self.frame_id = self.context.frame(config.get_frame("imu_frame_id", "imu"))
        imu_topic = config.get_topic("imu_pub", "imu/filtered")
        truth_topic = config.get_topic("ground_truth_pub", "imu/ground_truth")
        self.imu_topic, self.truth_topic = self.context.topic(imu_topic), self.context.topic(truth_topic)
        noise = [_noise(config, key) for key in ("orientation_noise", "angular_velocity_noise", "linear_acceleration_noise")]
        self.covariances = [
            _covariance(config, key, variances) for key, variances in zip(
                ("orientation_covariance", "angular_velocity_covariance", "linear_acceleration_covariance"), noise)
        ]
        self.timer = UpdateTimer(config.get_rate("pub_rate", math.inf))
        broadcast_tf = config.get_bool("broadcast_tf", True)
        self.body_frame_id = sensor_parent_frame(self.context, config, body_name, self.frame_id, broadcast_tf, "imu_frame_id")
        self.origin = config.get_pose("origin", Pose2D())
        gyro_walk = _noise(config, "angular_velocity_bias_walk")[YAW]
        accel_walk = _noise(config, "linear_acceleration_bias_walk")
        #: Bias walks' standard deviations over a second: yaw rate, x and y acceleration.
        self.walks = np.array([gyro_walk, *(accel_walk[i] for i in ACCELERATION)])
        #: Standard deviations of the yaw, yaw rate and x, y acceleration noise.
        self.noise_std = np.sqrt(np.array([noise[0][YAW], noise[1][YAW], *(noise[2][i] for i in ACCELERATION)]))
        #: Whether anything random is added (without, nothing is drawn at all).
        self.noisy = bool(self.noise_std.any() or self.walks.any())
        #: The noise's stream (:data:`NOISES` numbers a noisy measurement, :data:`WALKS` more with
        #: bias walks; a batch draws for all in one call).
        self.stream = plugin_stream(self.context)
        #: The biases now: yaw rate (rad/s), x and y acceleration (m/s^2); a row of a batch's
        #: array while in one, as is :attr:`bias_time`.
        self.bias = np.zeros(3)
        #: Sim time (ns) the biases last moved (-1: never).
        self.bias_time = np.full(1, -1, dtype=np.int64)
        local = self.body.localCenter
        self.offset = (self.origin.x - local.x, self.origin.y - local.y)
        #: The IMU's last state (see :func:`point_states`), kept by itself or by its batch.
        self._previous: np.ndarray | None = None
        self._previous_in: tuple[Any, int] | None = None
        self._last: tuple[ImuReading, ImuReading] | None = None
        #: Where the batch measuring the IMU keeps its readings (None alone).
        self._slot: RecordSlot | None = None
        node = self.context.ros_node
        if node is not None and self.enabled:
            self._setup_ros(node, broadcast_tf)

    def _setup_ros(self, node: Any, broadcast_tf: bool) -> None:
        from sensor_msgs.msg import Imu as ImuMessage

        from sim_server.ros.plugin_support import SubscriberCheck, broadcaster_for, set_stamp, transform

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
        """The IMU alone (not in a batch): its body read through SWIG."""
        self._slot = None  # (a batch it was in no longer measures it)
        body = self.body
        position, velocity = body.position, body.linearVelocity
        pose = np.array([[position.x, position.y, body.angle]])
        speeds = np.array([[velocity.x, velocity.y, body.angularVelocity]])
        previous = self.previous_state()
        has_previous = np.array([previous is not None])
        states, truth = measure_points(pose, speeds, np.array([self.offset]), np.array([self.origin.theta]),
                                       previous if previous is not None else np.zeros((1, 4)), has_previous,
                                       time.step_size)
        self._previous, self._previous_in = states, None
        if self.timer.check(time):
            readings = truth
            if self.noisy:
                readings = truth.copy()
                rows = (_NO_ROWS, _ONE_ROW) if self.walks.any() else (_ONE_ROW, _NO_ROWS)
                add_noise(truth, rows, self.stream.keys, self.stream.counters, self.bias.reshape(1, 3),
                          self.bias_time, self.walks.reshape(1, 3), self.noise_std.reshape(1, 4), time.time_ns, readings)
            self._publish(ImuReading(time.time_ns, *truth[0].tolist()), ImuReading(time.time_ns, *readings[0].tolist()))

    @classmethod
    def after_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every IMU's step: all bodies read in one compiled call, the readings computed in
        another, every noisy one's noise drawn in a third; readings are built per IMU only
        where somebody listens, or when read."""
        batch = plugins.cache.get("imus")
        if batch is None:
            batch = plugins.cache["imus"] = _ImuBatch(plugins)
        batch.step(time)

    def previous_state(self) -> np.ndarray | None:
        """(1, 4): the state of the last step (None before the first)."""
        if self._previous_in is not None:
            batch, index = self._previous_in
            if batch.has_previous[index]:
                return batch.previous[index:index + 1].copy()
        return self._previous

    def _publish(self, truth: ImuReading, reading: ImuReading) -> None:
        """Keep ``truth`` and ``reading`` as the last, and publish them where somebody listens."""
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
        """The last (truth, reading): the batch's newer record of this IMU's group, if any."""
        record = self._slot.unread() if self._slot is not None else None
        if record is not None:
            self._last = record.readings(self._slot.index)
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


#: Normal numbers a noisy measurement draws: the four noises, then the three bias steps of an
#: IMU whose biases walk.
NOISES, WALKS = 4, 3
_ONE_ROW = np.zeros(1, dtype=np.int64)
_NO_ROWS = np.zeros(0, dtype=np.int64)


@jit
def _apply_noise(truth, rows, draws, bias, bias_time, walks, noise_std, stamp_ns, out):
    walking = draws.shape[1] > 4
    for j in range(rows.shape[0]):
        i = rows[j]
        if walking:
            root_dt = 0.0
            if bias_time[i] >= 0:
                root_dt = math.sqrt(max(stamp_ns - bias_time[i], 0) * 1e-9)
            for k in range(3):
                bias[i, k] += draws[j, 4 + k] * walks[i, k] * root_dt
            bias_time[i] = stamp_ns
        out[i, 0] = truth[i, 0] + draws[j, 0] * noise_std[i, 0]
        for k in range(1, 4):
            out[i, k] = truth[i, k] + draws[j, k] * noise_std[i, k] + bias[i, k - 1]


def add_noise(
    truth: np.ndarray, rows: tuple[np.ndarray, np.ndarray], keys: np.ndarray, counters: np.ndarray, bias: np.ndarray,
    bias_time: np.ndarray, walks: np.ndarray, noise_std: np.ndarray, stamp_ns: int, out: np.ndarray,
) -> None:
    """Noisy readings of IMUs ``rows`` of a batch at ``stamp_ns`` (ns), into ``out``: each
    draws :data:`NOISES` numbers from its stream, and :data:`WALKS` more when its biases walk
    (two compiled calls for all); walking biases move by ``walks * sqrt(dt)`` (dt: s since they
    last moved; they move from the second measurement on); each value gets its noise and the yaw
    rate and accelerations their biases.

    Args:
        truth: (S, 4): the true yaw (rad), yaw rate (rad/s), x and y acceleration (m/s^2).
        rows: the IMUs measured (int64 arrays): those whose biases stay, those whose biases walk.
        keys, counters: the IMUs' streams (:func:`~sim_server.core.random_streams.draw_normals`).
        bias: (S, 3), updated: the biases of the yaw rate and the accelerations.
        bias_time: (S,) int64, updated: when each bias last moved (ns, -1: never).
        walks: (S, 3): the bias walks' standard deviations over a second.
        noise_std: (S, 4): the noises' standard deviations.
        out: (S, 4): the readings of ``rows`` are written.
    """
    for chosen, count in zip(rows, (NOISES, NOISES + WALKS)):
        if len(chosen):
            draws = np.empty((len(chosen), count))
            draw_normals(keys, counters, chosen, draws)
            _apply_noise(truth, chosen, draws, bias, bias_time, walks, noise_std, stamp_ns, out)


class _ImuRecord:
    """The IMUs of a batch at one time (``serial``: its number, :class:`BatchRecords`): their true
    and noisy readings (N, 4: yaw, yaw rate, x and y acceleration); an IMU's :class:`ImuReading`
    pair is built from it only when read."""

    __slots__ = ("serial", "stamp_ns", "truth", "noisy")

    def __init__(self, stamp_ns: int, truth: np.ndarray, noisy: np.ndarray) -> None:
        self.serial, self.stamp_ns, self.truth, self.noisy = 0, stamp_ns, truth, noisy

    def readings(self, index: int) -> tuple[ImuReading, ImuReading]:
        """(truth, reading) of IMU ``index``."""
        truth = ImuReading(self.stamp_ns, *self.truth[index].tolist())
        if self.noisy is self.truth:
            return truth, truth
        return truth, ImuReading(self.stamp_ns, *self.noisy[index].tolist())


class _ImuBatch:
    """The bodies of a batch of IMUs, read together each step."""

    def __init__(self, plugins: "list[Imu]") -> None:
        self.plugins = list(plugins)
        count = len(self.plugins)
        self.bodies = BodyBatch(plugin.body for plugin in self.plugins)
        self.offsets = np.array([plugin.offset for plugin in self.plugins], dtype=np.float64).reshape(-1, 2)
        self.yaws = np.array([plugin.origin.theta for plugin in self.plugins], dtype=np.float64)
        #: The IMUs' states of the last step (N, 4), where ``has_previous``.
        self.previous = np.zeros((count, 4))
        self.has_previous = np.zeros(count, dtype=bool)
        for index, plugin in enumerate(self.plugins):
            known = plugin.previous_state()
            if known is not None:
                self.previous[index], self.has_previous[index] = known[0], True
            plugin._previous_in = (self, index)
        groups: dict[int | None, list[tuple[int, Imu]]] = {}
        for index, plugin in enumerate(self.plugins):
            groups.setdefault(plugin.timer.period_ns, []).append((index, plugin))
        self.groups = list(groups.values())
        #: Per group, the rows of its noisy IMUs (those whose biases stay, those whose biases
        #: walk), and its newest record.
        self.noisy_rows = [
            tuple(np.array([i for i, plugin in group if plugin.noisy and bool(plugin.walks.any()) == walking], dtype=np.int64)
                  for walking in (False, True))
            for group in self.groups
        ]
        self.records = BatchRecords(len(self.groups))
        for number, group in enumerate(self.groups):
            for index, plugin in group:
                plugin._latest()  # (what an earlier batch measured, kept)
                plugin._slot = RecordSlot(self.records, number, index)
        # The noise's state, in arrays; each IMU's own are views of its row (drawing alone goes on).
        self.keys, self.counters = gather([plugin.stream for plugin in self.plugins])
        self.bias = np.array([plugin.bias for plugin in self.plugins], dtype=np.float64).reshape(-1, 3)
        self.bias_time = np.array([plugin.bias_time[0] for plugin in self.plugins], dtype=np.int64)
        for index, plugin in enumerate(self.plugins):
            plugin.bias, plugin.bias_time = self.bias[index], self.bias_time[index:index + 1]
        self.walks = np.array([plugin.walks for plugin in self.plugins], dtype=np.float64).reshape(-1, 3)
        self.noise_std = np.array([plugin.noise_std for plugin in self.plugins], dtype=np.float64).reshape(-1, 4)
        #: Whether anybody subscribes to any IMU (None without ROS).
        self.listened = None
        publishers = [publisher for plugin in self.plugins for publisher in plugin._publishers]
        if publishers:
            from sim_server.ros.plugin_support import SubscriberCheck

            self.listened = SubscriberCheck(*publishers)

    def step(self, time: TimeKeeper) -> None:
        states, truth = measure_points(self.bodies.poses(), self.bodies.velocities(), self.offsets, self.yaws,
                                       self.previous, self.has_previous, time.step_size)
        self.previous = states
        self.has_previous[:] = True
        due_groups = [number for number, group in enumerate(self.groups) if group[0][1].timer.check(time)]
        if not due_groups:
            return
        noisy = truth
        rows = [self.noisy_rows[number] for number in due_groups if len(self.noisy_rows[number][0]) + len(self.noisy_rows[number][1])]
        if rows:  # every noisy IMU due draws its noise now, whoever reads
            noisy = truth.copy()
            if len(rows) > 1:
                rows = [tuple(np.concatenate([group_rows[kind] for group_rows in rows]) for kind in (0, 1))]
            add_noise(truth, rows[0], self.keys, self.counters, self.bias, self.bias_time, self.walks, self.noise_std,
                      time.time_ns, noisy)
        record = _ImuRecord(time.time_ns, truth, noisy)
        self.records.keep(record, due_groups)
        if self.listened is not None and self.listened():
            for number in due_groups:
                for index, plugin in self.groups[number]:
                    if plugin._publishers and plugin._listened():
                        plugin._publish(*record.readings(index))
                        plugin._slot.seen = record.serial
