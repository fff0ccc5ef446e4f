"""What a plugin offers the rest of the simulator: capabilities as runtime-checkable protocols.

The live view, pictures, the RViz configuration, recordings, state datapacks and the learning
environments find what a model plugin offers by these protocols alone (``isinstance(plugin,
ScanSource)``), never by a plugin's type name or by attributes they happen to have. A plugin
class that offers one of them, bundled or not, is found wherever it is used:

* :class:`ScanSource` -- planar range scans (``sensor_msgs/LaserScan``): the live view's and the
  MCAP log's scans, the rays drawn on pictures;
* :class:`ImageSource` -- pictures (``sensor_msgs/Image``): the live view's images, camera
  datapacks;
* :class:`OdometrySource` -- odometry and ground truth (``nav_msgs/Odometry``);
* :class:`VelocityDriven` -- a velocity command (``geometry_msgs/Twist``) that teleoperation, the
  live view's drive panel, ``record --drive`` and the learning environments set;
* :class:`RayCaster` -- the compiled ray service behind a scan, which the learning environments
  cast in batches;
* :class:`DemandDriven` -- a sensor that skips work nobody listens to, told when a consumer other
  than ROS (the live view) wants its data.

A plugin class also says, before any instance exists, what it publishes for a configuration
(:meth:`Advertiser.advertised`): the RViz configuration of a world file is written from that, so
the default topics live in the plugin that owns them.

Units: metres, radians, seconds; sim time in integer nanoseconds; poses as
:class:`~sim_server.core.geometry.Pose2D`. Topics are as the plugin resolved them
(:meth:`~sim_server.core.plugins.api.PluginContext.topic`: relative to the server's namespace
unless they start with ``/``; ``~/`` the server node's own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from sim_server.core.geometry import Pose2D

if TYPE_CHECKING:
    from sim_server.core.sensing.laser_scanner import LaserScanner

#: Display kinds a plugin advertises (:class:`Advertised`): what RViz and the live view show it as.
LASER_DISPLAY, CAMERA_DISPLAY, RANGE_DISPLAY, ODOMETRY_DISPLAY = "laser", "camera", "range", "odometry"
DISPLAY_KINDS = (LASER_DISPLAY, CAMERA_DISPLAY, RANGE_DISPLAY, ODOMETRY_DISPLAY)


@dataclass(frozen=True)
class SensorMount:
    """Where a sensor's frame is fixed.

    Attributes:
        frame_id: the sensor's TF frame.
        parent_frame_id: the frame it is fixed to (its body's).
        pose: the sensor frame in the parent frame (m, rad).
        flipped: turned over about its x axis (a laser mounted upside down, a camera looking
            down at the plane): its TF carries a roll of pi.
    """

    frame_id: str
    parent_frame_id: str
    pose: Pose2D
    flipped: bool = False


@dataclass(frozen=True)
class ScanLayout:
    """The beams of a scan, as ``sensor_msgs/LaserScan`` describes them.

    Attributes:
        angle_min: the first beam's angle (rad, sensor frame).
        angle_max: the last beam's angle (rad).
        angle_increment: between two beams (rad).
        range_max: the longest range measured (m); the shortest is 0.
        angles: (B,) every beam's direction (rad) in the plane from the sensor's heading
            (:meth:`ScanSource.sensor_pose`), in the order of the ranges: ``angle_min + i *
            angle_increment``, negated where the mount is flipped.
    """

    angle_min: float
    angle_max: float
    angle_increment: float
    range_max: float
    angles: np.ndarray


@dataclass(frozen=True)
class Scan:
    """One scan.

    Attributes:
        stamp_ns: sim time it was taken (ns).
        ranges: (B,) float32 ranges (m) in the order of :attr:`ScanLayout.angles`; NaN where a
            beam returned nothing (the reference's misses).
        intensities: (B,) float32 intensities, or None when the sensor measures none.
    """

    stamp_ns: int
    ranges: np.ndarray
    intensities: np.ndarray | None = None


@runtime_checkable
class ScanSource(Protocol):
    """A planar range sensor publishing ``sensor_msgs/LaserScan`` (:class:`sim_plugins.laser.Laser`)."""

    @property
    def scan_topic(self) -> str:
        """The topic its scans are published on."""

    @property
    def scan_mount(self) -> SensorMount:
        """Where its frame is."""

    @property
    def scan_layout(self) -> ScanLayout:
        """Its beams."""

    @property
    def latest_scan(self) -> Scan | None:
        """The newest scan taken, or None before the first."""

    def sensor_pose(self) -> Pose2D:
        """The sensor frame's pose now (m, rad, world frame)."""


@dataclass(frozen=True)
class Picture:
    """One picture.

    Attributes:
        stamp_ns: sim time it was taken (ns).
        pixels: (H, W, 3) uint8 RGB, row 0 at the top.
    """

    stamp_ns: int
    pixels: np.ndarray


@dataclass(frozen=True)
class ImageDatapack:
    """A camera's picture: the Neurorobotics Platform's camera datapack fields.

    Attributes:
        name: ``model::camera``.
        frame: the camera's frame (ROS), "" when it has none.
        time_ns: sim time of the picture (ns).
        width, height: pixels.
        depth: bytes per pixel (3: red, green, blue, 8 bits each).
        data: ``height`` rows, top to bottom, of ``width * depth`` bytes.
    """

    name: str
    frame: str
    time_ns: int
    width: int
    height: int
    depth: int
    data: bytes



@runtime_checkable
class ImageSource(Protocol):
    """A camera publishing ``sensor_msgs/Image`` (rgb8) (:class:`sim_plugins.camera.Camera`)."""

    @property
    def image_topic(self) -> str:
        """The topic its pictures are published on."""

    @property
    def image_mount(self) -> SensorMount:
        """Where its frame is."""

    @property
    def latest_picture(self) -> Picture | None:
        """The newest picture taken, or None before the first."""

    def datapack(self) -> ImageDatapack:
        """A picture taken now, as a state datapack."""


@dataclass(slots=True)
class OdometryReading:
    """A pose and twist at one instant (read it, do not change it: it may be kept).

    Attributes:
        stamp_ns: sim time (ns).
        pose: m, rad (the stream's frame).
        vx, vy: linear velocity (m/s; the child frame's axes or the world's, as the stream says).
        wz: turn rate (rad/s).
    """

    stamp_ns: int
    pose: Pose2D
    vx: float
    vy: float
    wz: float


@dataclass(frozen=True)
class OdometryStream:
    """One ``nav_msgs/Odometry`` topic of a plugin.

    Attributes:
        topic: where it is published.
        frame_id: the frame of the pose (``odom``, or the world's for ground truth).
        child_frame_id: the frame that moves (the body's).
        latest: the newest reading, or None before the first (a call: readings are made lazily).
        pose_covariance, twist_covariance: 36 row-major values each (m^2, rad^2 ...).
        ground_truth: whether it is the true pose (its frame is the world's); an odometry frame of
            another stream of the same plugin is placed at the ground truth's frame (the
            odometry starts where the body is).
    """

    topic: str
    frame_id: str
    child_frame_id: str
    latest: Callable[[], OdometryReading | None]
    pose_covariance: Sequence[float] = (0.0,) * 36
    twist_covariance: Sequence[float] = (0.0,) * 36
    ground_truth: bool = False


@runtime_checkable
class OdometrySource(Protocol):
    """A plugin publishing odometry (the drives: noisy odometry and the ground truth)."""

    def odometry_streams(self) -> Sequence[OdometryStream]:
        """Its odometry topics (none while publishing is off), the noisy one first."""


@runtime_checkable
class TwistCommand(Protocol):
    """A drive's velocity command, set by whoever drives it (units of ``geometry_msgs/Twist``)."""

    @property
    def topic(self) -> str:
        """The topic it is read from (``cmd_vel``, resolved)."""

    linear: float
    """Forward speed (m/s, body frame)."""
    angular: float
    """Turn rate (rad/s), or the steering angle (rad) of a drive steered by angle."""
    lateral: float
    """Sideways speed (m/s, body frame; only where :attr:`uses_lateral`)."""

    @property
    def uses_lateral(self) -> bool:
        """Whether the drive moves sideways (an omnidirectional base)."""


@runtime_checkable
class VelocityDriven(Protocol):
    """A drive taking a velocity command (differential, tricycle, Ackermann, omnidirectional)."""

    @property
    def command(self) -> TwistCommand:
        """Its command, to read and to set."""


@runtime_checkable
class RayCaster(Protocol):
    """A sensor whose beams the compiled ray service casts (the learning environments cast the
    beams of many of them at once)."""

    @property
    def scanner(self) -> "LaserScanner":
        """The ray service of its beams."""


@runtime_checkable
class DemandDriven(Protocol):
    """A sensor that does its work only while someone wants its data (a ROS subscriber, say)."""

    demanded: bool
    """Set by consumers outside ROS (the live view) while they want the data: work while True."""


@dataclass(frozen=True)
class Advertised:
    """What a plugin will publish for a display, known from its configuration before it runs (a
    drive advertises its noisy odometry, not its ground truth).

    Attributes:
        kind: one of :data:`DISPLAY_KINDS`.
        topic: the topic as configured (relative to the model's namespace unless it starts with
            ``/``; :meth:`~sim_server.core.plugins.api.PluginContext.topic` resolves it).
    """

    kind: str
    topic: str


@runtime_checkable
class Advertiser(Protocol):
    """A plugin class that says what it publishes (a classmethod: no instance is needed)."""

    @classmethod
    def advertised(cls, config: Mapping[str, Any]) -> list[Advertised]:
        """What a plugin of this class configured by ``config`` (its YAML entry, unchecked: a
        plain mapping) publishes; its defaults where keys are missing. Raises ValueError naming
        the key when a value it reads has the wrong type."""


def configured_string(config: Mapping[str, Any], key: str, default: str) -> str:
    """``config[key]`` as a string (``default`` where missing); ValueError naming the key when it
    is not a string. For :meth:`Advertiser.advertised`."""
    value = config.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string, got {value!r}')
    return value


def configured_flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    """``config[key]`` as a bool (``default`` where missing); ValueError naming the key when it is
    not true or false. For :meth:`Advertiser.advertised`."""
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f'"{key}" must be true or false, got {value!r}')
    return value
