"""The sensors a live view feeds, each on its own channel: lasers, cameras and the drives'
odometry, found among a world's model plugins by the capabilities they offer
(:mod:`sim_server.live.discovery`, :mod:`sim_server.core.plugins.capabilities`).

* a laser (a ``ScanSource``): every scan, as ``foxglove.LaserScan`` or, with ROS 2 encoding,
  sensor_msgs/LaserScan;
* a camera (an ``ImageSource``): every picture, as ``foxglove.RawImage`` (rgb8) or
  sensor_msgs/Image;
* a drive's odometry (an ``OdometrySource``: its noisy odometry and ground truth):
  nav_msgs/Odometry on the drive's topics, the newest at each update (Foxglove's 3D panel draws
  its pose).

Sensors that work only while someone listens (``DemandDriven``) are told while the view listens.
Units: metres, radians; stamps are sim time in nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import foxglove
from foxglove.channels import LaserScanChannel, RawImageChannel
from foxglove.messages import RawImage

from sim_server.core.plugins.capabilities import DemandDriven, ImageSource, OdometrySource, OdometryStream, ScanSource
from sim_server.live.discovery import CAMERA, LASER, absolute_topic, sensor_kind
from sim_server.core.format.ros2_cdr import (
    MESSAGE_ENCODING, SCHEMA_ENCODING, SCHEMAS, LaserScanCdr, image_cdr, odometry_cdr, stamp_cdr,
)
from sim_server.live.scene import PlanarTransform, laser_scan, stamp

#: Bytes per pixel of a camera's pictures (rgb8).
RGB = 3

#: The frame the view names a plugin's frame by (see :meth:`sim_server.live.feed.Feed.frame`).
Rename = Callable[[Any, str], str]


def _same(plugin: Any, frame: str) -> str:
    return frame


def ros2_channel(topic: str, type_name: str, context: foxglove.Context) -> foxglove.Channel:
    """A channel of the ROS 2 message ``type_name`` (CDR, its ``ros2msg`` schema)."""
    schema = foxglove.Schema(name=type_name, encoding=SCHEMA_ENCODING, data=SCHEMAS[type_name].encode())
    return foxglove.Channel(topic, schema=schema, message_encoding=MESSAGE_ENCODING, context=context)


@dataclass
class Source:
    """One sensor's channel: ``made()`` is the sim time (ns) of its newest data (-1: none yet),
    ``message(now)`` that data as the channel's message; ``plugin`` is told when the view listens
    (if it is ``DemandDriven``)."""

    plugin: Any
    topic: str
    channel: Any
    made: Callable[[], int]
    message: Callable[[], Any]
    sent_ns: int = -1
    #: Whether new data is sent as it comes (scans, pictures), not only at updates.
    streamed: bool = True
    #: The odometry stream it sends (None for scans and pictures).
    stream: OdometryStream | None = None

    def __post_init__(self) -> None:
        #: Whether the plugin works only while someone listens, and is told (asked once).
        self.demand_driven = isinstance(self.plugin, DemandDriven)

    def send_new(self) -> None:
        """The newest data, if it is newer than the last sent."""
        made = self.made()
        if made > self.sent_ns:
            message = self.message()
            if message is not None:
                self.sent_ns = made
                self.channel.log(message, log_time=made)


def laser_source(plugin: ScanSource, context: foxglove.Context, ros2: bool, rename: Rename = _same) -> Source:
    topic = absolute_topic(plugin.scan_topic)
    frame = rename(plugin, plugin.scan_mount.frame_id)
    layout = plugin.scan_layout
    if ros2:
        cdr = LaserScanCdr(frame, layout.angle_min, layout.angle_max, layout.angle_increment, 0.0, layout.range_max)

        def message() -> Any:
            scan = plugin.latest_scan
            if scan is None:
                return None
            intensities = scan.intensities
            return cdr.serialize(stamp_cdr(scan.stamp_ns), scan.ranges.astype("<f4").tobytes(),
                                 None if intensities is None else intensities.astype("<f4").tobytes())

        channel = ros2_channel(topic, "sensor_msgs/msg/LaserScan", context)
    else:
        def message() -> Any:
            scan = plugin.latest_scan
            if scan is None:
                return None
            return laser_scan(scan.ranges, layout.angles, frame, scan.stamp_ns)

        channel = LaserScanChannel(topic, context=context)

    def made() -> int:
        scan = plugin.latest_scan
        return -1 if scan is None else scan.stamp_ns

    return Source(plugin, topic, channel, made, message)


def camera_source(plugin: ImageSource, context: foxglove.Context, ros2: bool, rename: Rename = _same) -> Source:
    topic = absolute_topic(plugin.image_topic)
    frame = rename(plugin, plugin.image_mount.frame_id)

    def made() -> int:
        picture = plugin.latest_picture
        return -1 if picture is None else picture.stamp_ns

    def message() -> Any:
        picture = plugin.latest_picture
        if picture is None:
            return None
        image = picture.pixels
        height, width = image.shape[:2]
        if ros2:
            return image_cdr(picture.stamp_ns, frame, image.tobytes(), width, height)
        return RawImage(timestamp=stamp(picture.stamp_ns), frame_id=frame, width=width, height=height,
                        encoding="rgb8", step=width * RGB, data=image.tobytes())

    channel = ros2_channel(topic, "sensor_msgs/msg/Image", context) if ros2 else RawImageChannel(topic, context=context)
    return Source(plugin, topic, channel, made, message)


def odometry_sources(plugin: OdometrySource, context: foxglove.Context, rename: Rename = _same) -> list[Source]:
    """The odometry streams of a drive (its noisy odometry and its ground truth), as
    nav_msgs/Odometry either way: the Foxglove SDK has no well-known odometry, and Foxglove
    draws this one."""
    sources = []
    for stream in plugin.odometry_streams():
        frame, child = rename(plugin, stream.frame_id), rename(plugin, stream.child_frame_id)

        def made(stream=stream) -> int:
            last = stream.latest()
            return -1 if last is None else last.stamp_ns

        def message(stream=stream, frame=frame, child=child) -> Any:
            last = stream.latest()
            if last is None:
                return None
            pose = last.pose
            return odometry_cdr(last.stamp_ns, frame, child, pose.x, pose.y, pose.theta, last.vx, last.vy,
                                last.wz, stream.pose_covariance, stream.twist_covariance)

        topic = absolute_topic(stream.topic)
        sources.append(Source(plugin, topic, ros2_channel(topic, "nav_msgs/msg/Odometry", context), made, message,
                              streamed=False, stream=stream))
    return sources


class Sensors:
    """Every sensor of a world with its channels (made on first sight, closed when it leaves)."""

    def __init__(self, context: foxglove.Context, ros2: bool, rename: Rename = _same) -> None:
        self._context = context
        self._ros2 = ros2
        self._rename = rename
        #: The sources of each plugin, by the plugin's id.
        self.by_plugin: dict[int, list[Source]] = {}
        #: What sensor each plugin of :attr:`by_plugin` is (:func:`sensor_kind`, asked once).
        self._kinds: dict[int, str] = {}

    @property
    def sources(self) -> list[Source]:
        return [source for sources in self.by_plugin.values() for source in sources]

    def find(self, plugins: list[Any]) -> None:
        """Follow the sensors among ``plugins`` (every model plugin of the world now)."""
        present = {id(plugin): plugin for plugin in plugins}
        for key in list(self.by_plugin):
            if key not in present:
                for source in self.by_plugin.pop(key):
                    source.channel.close()
                del self._kinds[key]
        for key, plugin in present.items():
            if key in self.by_plugin:
                continue
            kind = sensor_kind(plugin)
            if kind is not None:
                self._kinds[key] = kind
                if kind == LASER:
                    self.by_plugin[key] = [laser_source(plugin, self._context, self._ros2, self._rename)]
                elif kind == CAMERA:
                    self.by_plugin[key] = [camera_source(plugin, self._context, self._ros2, self._rename)]
                else:
                    self.by_plugin[key] = odometry_sources(plugin, self._context, self._rename)

    def close(self) -> None:
        for source in self.sources:
            source.channel.close()
        self.by_plugin.clear()
        self._kinds.clear()

    def transforms(self) -> list[PlanarTransform]:
        """The sensors' fixed frames: each laser's and camera's on its body, each drive's
        odometry frames on the world (identity: its odometry is the world pose plus noise)."""
        transforms: list[PlanarTransform] = []
        odometry_frames = set()
        for key, sources in self.by_plugin.items():
            plugin = sources[0].plugin
            kind = self._kinds[key]
            name = self._rename
            if kind in (LASER, CAMERA):
                mount = plugin.scan_mount if kind == LASER else plugin.image_mount
                pose = mount.pose
                transforms.append((name(plugin, mount.parent_frame_id), name(plugin, mount.frame_id), pose.x, pose.y,
                                   pose.theta, bool(mount.flipped)))
            else:
                streams = [source.stream for source in sources if source.stream is not None]
                for truth in (stream for stream in streams if stream.ground_truth):
                    for stream in streams:
                        if not stream.ground_truth and stream.frame_id != truth.frame_id:
                            odometry_frames.add((name(plugin, truth.frame_id), name(plugin, stream.frame_id)))
        transforms.extend((parent, child, 0.0, 0.0, 0.0, False) for parent, child in sorted(odometry_frames))
        return transforms
