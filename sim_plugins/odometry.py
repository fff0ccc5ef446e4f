"""Odometry of the drive plugins: ground truth and noisy nav_msgs/Odometry, as the reference's.

Shared parameters: ``odom_pub`` (``odometry/filtered``), ``ground_truth_pub``
(``odometry/ground_truth``), ``odom_frame_id`` (``odom``, in the model's namespace),
``ground_truth_frame_id`` (``map``, not namespaced; a leading ``/`` is dropped),
``pub_rate`` (Hz, .inf), ``enable_odom_pub`` (true), the errors of
:mod:`sim_plugins.odometry_noise` (``odom_pose_noise``, ``odom_twist_noise``: white noise as the
reference's; ``odom_drift``: drift), ``odom_pose_covariance`` and ``odom_twist_covariance`` (36
numbers, row-major; default the white noise variances on the diagonal), ``twist_in_local_frame``
(true: twists in the body frame).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from sim_server.core.plugins import PluginContext, Pose2D, UpdateTimer, YamlReader, limits as bounds
from sim_server.core.plugins.services import drive_kernels, memory_access_works, random_streams, to_body_frame
from sim_server.core.plugins.capabilities import (
    ODOMETRY_DISPLAY, Advertised, OdometryReading, OdometryStream, configured_flag, configured_string,
)
from sim_plugins.common import RecordSlot, body_frame, check_transform
from sim_plugins import odometry_noise
from sim_plugins.odometry_noise import OdometryNoise

COVARIANCE_SIZE = 36
ODOMETRY_QUEUE_DEPTH = 10
#: Positions of x, y and yaw (or vx, vy, wz) on the diagonal of a 6 x 6 covariance.
DIAGONAL = (0, 7, 35)
#: The noisy odometry's and the ground truth's topics unless ``odom_pub`` and
#: ``ground_truth_pub`` say otherwise (in the model's namespace).
DEFAULT_ODOM_TOPIC, DEFAULT_TRUTH_TOPIC = "odometry/filtered", "odometry/ground_truth"
#: Zero covariance (the ground truth's).
NO_COVARIANCE = (0.0,) * 36


def _covariance(config: YamlReader, key: str, variances: tuple[float, ...]) -> list[float]:
    """The 6 x 6 row-major covariance ``key``: :data:`COVARIANCE_SIZE` numbers within
    :data:`~sim_server.core.limits.COVARIANCE`, by default ``variances`` on the diagonal."""
    default = [0.0] * COVARIANCE_SIZE
    for index, variance in zip(DIAGONAL, variances):
        default[index] = variance
    return list(config.get_floats(key, COVARIANCE_SIZE, tuple(default), within=bounds.COVARIANCE))


def prepare_drive() -> None:
    """Compile (or load) what every drive's step runs (a drive class's ``prepare``): the batch
    access to Box2D's bodies, the drives' arithmetic, and noisy odometry's streams and errors."""
    memory_access_works()
    drive_kernels.warm_up()
    random_streams.warm_up()
    odometry_noise.warm_up()


def _state(stamp_ns: int, values: np.ndarray) -> OdometryReading:
    """An :class:`OdometryReading` of (6,) x, y, yaw, vx, vy, wz."""
    x, y, theta, vx, vy, wz = values.tolist()
    return OdometryReading(stamp_ns, Pose2D(x, y, theta), vx, vy, wz)


class OdometryPublisher:
    """Reads the odometry parameters and publishes ground truth and noisy odometry."""

    def __init__(self, context: PluginContext, config: YamlReader, body_name: str) -> None:
        self.context = context
        odom_topic = config.get_topic("odom_pub", DEFAULT_ODOM_TOPIC)
        truth_topic = config.get_topic("ground_truth_pub", DEFAULT_TRUTH_TOPIC)
        #: The topics of the noisy odometry and of the ground truth (in the model's namespace).
        self.odom_topic, self.truth_topic = context.topic(odom_topic), context.topic(truth_topic)
        self.odom_frame_id = context.frame(config.get_frame("odom_frame_id", "odom"))
        self.ground_truth_frame_id = context.world_frame(config.get_frame("ground_truth_frame_id", "map"))
        self.child_frame_id = body_frame(context, config, body_name)
        self.timer = UpdateTimer(config.get_rate("pub_rate", math.inf))
        self.enabled = config.get_bool("enable_odom_pub", True)
        self.twist_in_local_frame = config.get_bool("twist_in_local_frame", True)
        #: The odometry's errors (white noise, drift) and their stream.
        self.noise = OdometryNoise(context, config)
        self.pose_covariance = _covariance(config, "odom_pose_covariance", self.noise.pose_variances)
        self.twist_covariance = _covariance(config, "odom_twist_covariance", self.noise.twist_variances)
        #: Whether any error is added (without, no random numbers are drawn at all).
        self.noisy = self.noise.noisy
        #: Numbers the drive draws after each noisy measurement's (DiffDrive's twist noise), and
        #: the last measurement's.
        self.extra_draws = 0
        self.extra_normals = np.zeros(0)
        self._model = context.model
        self._last: tuple[OdometryReading, OdometryReading] | None = None
        #: A noise-free measurement noted but not built yet (see :meth:`note`).
        self._noted: tuple[int, float, float, float, float, float, float] | None = None
        #: Or a body of a batch's record, not built yet (see :meth:`defer`).
        self._deferred: tuple[Any, int] | None = None
        #: Or where the batch measuring this odometry keeps its records (:meth:`attach`).
        self._slot: RecordSlot | None = None
        self._publishers = None
        #: Whether anybody subscribes to either topic (None without ROS).
        self._anyone = None
        node = context.ros_node
        if node is not None and self.enabled:
            from nav_msgs.msg import Odometry

            from sim_server.ros.plugin_support import SubscriberCheck, set_pose_msg, set_stamp

            self._set_pose = set_pose_msg
            self._set_stamp = set_stamp
            self._publishers = (
                node.create_publisher(Odometry, self.truth_topic, ODOMETRY_QUEUE_DEPTH),
                node.create_publisher(Odometry, self.odom_topic, ODOMETRY_QUEUE_DEPTH),
            )
            truth_message, odometry_message = Odometry(), Odometry()
            for message, frame in ((truth_message, self.ground_truth_frame_id), (odometry_message, self.odom_frame_id)):
                message.header.frame_id = frame
                message.child_frame_id = self.child_frame_id
            self._listened = tuple(SubscriberCheck(publisher) for publisher in self._publishers)
            self._anyone = SubscriberCheck(*self._publishers)
            odometry_message.pose.covariance = self.pose_covariance
            odometry_message.twist.covariance = self.twist_covariance
            self._messages = (truth_message, odometry_message)

    @property
    def last_truth(self) -> OdometryReading | None:
        """The last ground truth measured (None before the first), for in-process use."""
        last = self._latest()
        return None if last is None else last[0]

    @property
    def last_odometry(self) -> OdometryReading | None:
        """The last noisy odometry measured (None before the first), for in-process use."""
        last = self._latest()
        return None if last is None else last[1]

    def streams(self) -> list[OdometryStream]:
        """The noisy odometry's and the ground truth's topics (none while ``enable_odom_pub`` is off)."""
        if not self.enabled:
            return []
        return [
            OdometryStream(self.odom_topic, self.odom_frame_id, self.child_frame_id, lambda: self.last_odometry,
                           tuple(self.pose_covariance), tuple(self.twist_covariance)),
            OdometryStream(self.truth_topic, self.ground_truth_frame_id, self.child_frame_id, lambda: self.last_truth,
                           NO_COVARIANCE, NO_COVARIANCE, ground_truth=True),
        ]

    def _latest(self) -> tuple[OdometryReading, OdometryReading] | None:
        record = self._slot.unread() if self._slot is not None else None
        if record is not None:
            self._last = self.from_record(record, self._slot.index)
        if self._deferred is not None:
            record, index = self._deferred
            self._deferred = None
            self._last = self.from_record(record, index)
        elif self._noted is not None:
            stamp_ns, x, y, theta, world_vx, world_vy, wz = self._noted
            self.measure(stamp_ns, Pose2D(x, y, theta), world_vx, world_vy, wz)
        return self._last

    def note(self, stamp_ns: int, x: float, y: float, theta: float, world_vx: float, world_vy: float, wz: float) -> None:
        """What :meth:`measure` of that pose (m, rad) and world-frame velocity (m/s, rad/s) does
        when nothing is published: without noise the measurement is a function of these numbers
        alone, so they are kept and the states built when :attr:`last_truth` or
        :attr:`last_odometry` is read (a thousand robots' odometry nobody reads costs nothing)."""
        if self.noisy:  # the noise is drawn now: seeded runs must not depend on who reads
            self.measure(stamp_ns, Pose2D(x, y, theta), world_vx, world_vy, wz)
        else:
            self._noted, self._deferred = (stamp_ns, x, y, theta, world_vx, world_vy, wz), None

    def defer(self, record: Any, index: int) -> None:
        """:meth:`note` of body ``index`` of a batch's ``record`` (with ``stamp_ns`` and
        ``state(index)``: x, y, theta, world vx, vy, wz), without noise: nothing is done per
        body until :attr:`last_truth` or :attr:`last_odometry` is read."""
        if self.noisy:
            raise ValueError("noisy odometry draws its noise when measured: note() it instead")
        self._deferred, self._noted = (record, index), None

    def from_record(self, record: Any, index: int) -> tuple[OdometryReading, OdometryReading]:
        """(truth, odometry) of body ``index`` of a batch's ``record`` (see :meth:`defer`),
        without drawing."""
        x, y, theta, world_vx, world_vy, wz = record.state(index)
        truth = self._truth(record.stamp_ns, Pose2D(x, y, theta), world_vx, world_vy, wz)
        if not self.noisy:
            return truth, truth
        return truth, _state(record.stamp_ns, record.noisy[index])

    def reported_twist(self, theta: float, world_vx: float, world_vy: float) -> tuple[float, float]:
        """The twist (m/s) as this odometry reports it: in the body frame (heading ``theta``,
        rad) with ``twist_in_local_frame``, else in the world frame."""
        if not self.twist_in_local_frame:
            return world_vx, world_vy
        return to_body_frame(world_vx, world_vy, math.cos(theta), math.sin(theta))

    def _truth(self, stamp_ns: int, pose: Pose2D, world_vx: float, world_vy: float, wz: float) -> OdometryReading:
        return OdometryReading(stamp_ns, pose, *self.reported_twist(pose.theta, world_vx, world_vy), wz)

    def report(self, stamp_ns: int, x: float, y: float, theta: float, world_vx: float, world_vy: float, wz: float) -> None:
        """Measure the pose (m, rad) and world-frame velocity (m/s, rad/s) and publish to
        whoever subscribes; only :meth:`note` them when nobody does."""
        if self._anyone is not None and self._anyone():
            self.publish(*self.measure(stamp_ns, Pose2D(x, y, theta), world_vx, world_vy, wz))
        else:
            self.note(stamp_ns, x, y, theta, world_vx, world_vy, wz)

    def measure(self, stamp_ns: int, pose: Pose2D, world_vx: float, world_vy: float, wz: float) -> tuple[OdometryReading, OdometryReading]:
        """Ground truth and noisy odometry of a body with the given pose and world-frame velocity."""
        self._noted = self._deferred = None
        truth = self._truth(stamp_ns, pose, world_vx, world_vy, wz)
        if self.noisy:
            values, self.extra_normals = self.noise.apply(
                np.array([pose.x, pose.y, pose.theta, truth.vx, truth.vy, wz]), self._placements(), self.extra_draws
            )
            noisy = _state(stamp_ns, values)
        else:
            noisy = truth
        self._last = (truth, noisy)
        return truth, noisy

    def keep(self, truth: OdometryReading, noisy: OdometryReading, serial: int = -1) -> None:
        """Keep a measurement made elsewhere (:meth:`from_record`; of the batch record
        ``serial``, read now) as the last."""
        self._noted = self._deferred = None
        self._last = (truth, noisy)
        if self._slot is not None:
            self._slot.seen = serial

    def attach(self, slot: RecordSlot) -> None:
        """Be measured by a batch, reading its records at ``slot``; what an earlier batch
        measured is kept."""
        self._latest()
        self._slot = slot

    def _placements(self) -> int:
        """The model's placements by hand (see :class:`~sim_plugins.odometry_noise.OdometryNoise`)."""
        return self._model.placements if self._model is not None else 0

    def _fill(self, message, state: OdometryReading):
        self._set_stamp(message.header, state.stamp_ns)
        self._set_pose(message.pose.pose, state.pose.x, state.pose.y, state.pose.theta)
        twist = message.twist.twist
        twist.linear.x, twist.linear.y, twist.angular.z = state.vx, state.vy, state.wz
        return message

    @property
    def publishers(self) -> tuple:
        """The ground truth and odometry publishers (none without ROS or when disabled)."""
        return self._publishers or ()

    def publish(self, truth: OdometryReading, noisy: OdometryReading) -> None:
        """Publish ground truth, then the noisy odometry, to whoever subscribes."""
        if self._publishers is None:
            return
        for publisher, listened, message, state in zip(self._publishers, self._listened, self._messages, (truth, noisy)):
            if listened():
                publisher.publish(self._fill(message, state))

    def close(self) -> None:
        """Destroy the publishers."""
        if self._publishers is not None:
            for publisher in self._publishers:
                self.context.ros_node.destroy_publisher(publisher)
            self._publishers = None


class OdometryTransform:
    """A drive's odom -> body transform on /tf, from its noisy odometry, with an identity
    ``map`` -> odom on /tf_static when the odom frame is not the ground-truth frame: odometry
    poses are world poses plus noise, so both frames coincide and RViz with the fixed frame
    ``map`` shows the robot without extra nodes. Nothing without ROS.

    Args:
        context: the drive's context (its node, its owner name for TF claims).
        odometry: the drive's odometry (its frames).
    """

    def __init__(self, context: PluginContext, odometry: OdometryPublisher) -> None:
        from sim_server.ros.plugin_support import broadcaster_for, transform, update_transform

        self._context = context
        self._odom_frame_id = odometry.odom_frame_id
        self._update_transform = update_transform
        #: The node's one TF broadcaster.
        self.broadcaster = broadcaster_for(context.ros_node)
        self._message = transform(odometry.odom_frame_id, odometry.child_frame_id, Pose2D(), 0)
        owner = context.describe()
        world_frame = odometry.ground_truth_frame_id
        # Claimed once here (not per send): a second parent of the body is reported.
        self.broadcaster.claim(odometry.child_frame_id, odometry.odom_frame_id, owner)
        if odometry.odom_frame_id != world_frame:
            self.broadcaster.send_static(
                [transform(world_frame, odometry.odom_frame_id, Pose2D(), context.world.time.time_ns)], owner=owner
            )

    @property
    def listened(self) -> bool:
        """Whether anybody subscribes to /tf."""
        return self.broadcaster.listened

    def send(self, pose: Pose2D, stamp_ns: int) -> None:
        """Send odom -> body at ``pose`` (m, rad), stamped ``stamp_ns`` (ns of sim time)."""
        self.broadcaster.send([self._update_transform(self._message, pose, stamp_ns)])

    def close(self) -> None:
        """Take the static transform and the claims back (the drive's model left)."""
        owner = self._context.describe()
        self.broadcaster.remove_static([self._odom_frame_id], owner=owner)
        self.broadcaster.release(owner)


def odometry_transform(context: PluginContext, odometry: OdometryPublisher, config: YamlReader) -> OdometryTransform | None:
    """The drive's :class:`OdometryTransform` when it runs on ROS and ``enable_odom_tf_pub``
    (true) asks for one, else None; with it asked for, the odom frame must not be the body's
    (checked with ROS or without, so a file loads the same either way)."""
    enabled = config.get_bool("enable_odom_tf_pub", True)
    if enabled:
        check_transform(config, "odom_frame_id", odometry.odom_frame_id, odometry.child_frame_id)
    return OdometryTransform(context, odometry) if enabled and context.ros_node is not None else None


class OdometryOffer:
    """What the drives offer of their odometry (:class:`~sim_server.core.plugins.capabilities.OdometrySource`
    and the RViz display of the noisy odometry); a drive keeps its :class:`OdometryPublisher` as
    ``odometry``."""

    odometry: OdometryPublisher | None

    @classmethod
    def advertised(cls, config: Mapping[str, Any]) -> list[Advertised]:
        """The noisy odometry's topic (``odom_pub``), unless ``enable_odom_pub`` is false."""
        if not configured_flag(config, "enable_odom_pub", True):
            return []
        return [Advertised(ODOMETRY_DISPLAY, configured_string(config, "odom_pub", DEFAULT_ODOM_TOPIC))]

    def odometry_streams(self) -> list[OdometryStream]:
        """The noisy odometry and the ground truth (none while publishing is off)."""
        return [] if self.odometry is None else self.odometry.streams()
