"""The sensors a live view feeds, each on its own channel: lasers, cameras and the drives'
odometry, found among a world's model plugins by what they offer (:mod:`sim_server.live.discovery`).

* a laser (``scanner``, ``last_ranges``, ``last_scan_ns``, ``topic_name``, ``frame_id``): every
  scan, as ``foxglove.LaserScan`` or, with ROS 2 encoding, sensor_msgs/LaserScan;
* a camera (``last_image``, ``last_time_ns``, ``topic_name``, ``frame_id``): every picture, as
  ``foxglove.RawImage`` (rgb8) or sensor_msgs/Image;
* a drive's odometry (``odometry``: its noisy odometry and ground truth): nav_msgs/Odometry on
  the drive's two topics, the newest at each update (Foxglove's 3D panel draws its pose).

Lasers and cameras scan and render for the view while it listens (their ``view_listening``).
Units: metres, radians; stamps are sim time in nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import foxglove
from foxglove.channels import LaserScanChannel, RawImageChannel
from foxglove.messages import RawImage

from sim_server.live.discovery import CAMERA, LASER, absolute_topic, sensor_kind
from sim_server.live.ros2_messages import (
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
    (if it has ``view_listening``)."""

    plugin: Any
    topic: str
    channel: Any
    made: Callable[[], int]
    message: Callable[[], Any]
    sent_ns: int = -1
    #: Whether new data is sent as it comes (scans, pictures), not only at updates.
    streamed: bool = True

    def send_new(self) -> None:
        """The newest data, if it is newer than the last sent."""
        made = self.made()
        if made > self.sent_ns:
            message = self.message()
            if message is not None:
                self.sent_ns = made
                self.channel.log(message, log_time=made)


def laser_source(plugin: Any, context: foxglove.Context, ros2: bool, rename: Rename = _same) -> Source:
    topic = absolute_topic(plugin.topic_name)
    frame = rename(plugin, plugin.frame_id)
    if ros2:
        cdr = LaserScanCdr(frame, plugin.angle_min, plugin.angle_max, plugin.angle_increment, 0.0, plugin.range)

        def message() -> Any:
            if plugin.last_ranges is None:
                return None
            intensities = plugin.last_intensities
            return cdr.serialize(stamp_cdr(plugin.last_scan_ns), plugin.last_ranges.astype("<f4").tobytes(),
                                 None if intensities is None else intensities.astype("<f4").tobytes())

        channel = ros2_channel(topic, "sensor_msgs/msg/LaserScan", context)
    else:
        def message() -> Any:
            if plugin.last_ranges is None:
                return None
            return laser_scan(plugin.last_ranges, plugin.scanner.local_angles, frame, plugin.last_scan_ns)

        channel = LaserScanChannel(topic, context=context)
    return Source(plugin, topic, channel, lambda: plugin.last_scan_ns, message)


def camera_source(plugin: Any, context: foxglove.Context, ros2: bool, rename: Rename = _same) -> Source:
    topic = absolute_topic(plugin.topic_name)
    frame = rename(plugin, plugin.frame_id)

    def made() -> int:
        return -1 if plugin.last_time_ns is None else plugin.last_time_ns

    def message() -> Any:
        image = plugin.last_image
        if image is None:
            return None
        height, width = image.shape[:2]
        if ros2:
            return image_cdr(plugin.last_time_ns, frame, image.tobytes(), width, height)
        return RawImage(timestamp=stamp(plugin.last_time_ns), frame_id=frame, width=width, height=height,
                        encoding="rgb8", step=width * RGB, data=image.tobytes())

    channel = ros2_channel(topic, "sensor_msgs/msg/Image", context) if ros2 else RawImageChannel(topic, context=context)
    return Source(plugin, topic, channel, made, message)


def odometry_sources(plugin: Any, context: foxglove.Context, rename: Rename = _same) -> list[Source]:
    """The noisy odometry and the ground truth of a drive (nav_msgs/Odometry either way: the
    Foxglove SDK has no well-known odometry, and Foxglove draws this one)."""
    odometry = plugin.odometry
    child = rename(plugin, odometry.child_frame_id)
    sources = []
    for topic, frame, state, covariances in (
        (odometry.odom_topic, rename(plugin, odometry.odom_frame_id), lambda: odometry.last_odometry,
         (odometry.pose_covariance, odometry.twist_covariance)),
        (odometry.truth_topic, rename(plugin, odometry.ground_truth_frame_id), lambda: odometry.last_truth,
         ((0.0,) * 36, (0.0,) * 36)),
    ):
        def made(state=state) -> int:
            last = state()
            return -1 if last is None else last.stamp_ns

        def message(state=state, frame=frame, covariances=covariances) -> Any:
            last = state()
            if last is None:
                return None
            pose = last.pose
            return odometry_cdr(last.stamp_ns, frame, child, pose.x, pose.y, pose.theta, last.vx, last.vy,
                                last.wz, *covariances)

        sources.append(Source(plugin, absolute_topic(topic), ros2_channel(absolute_topic(topic), "nav_msgs/msg/Odometry", context), made,
                              message, streamed=False))
    return sources


class Sensors:
    """Every sensor of a world with its channels (made on first sight, closed when it leaves)."""

    def __init__(self, context: foxglove.Context, ros2: bool, rename: Rename = _same) -> None:
        self._context = context
        self._ros2 = ros2
        self._rename = rename
        #: The sources of each plugin, by the plugin's id.
        self.by_plugin: dict[int, list[Source]] = {}

    @property
    def sources(self) -> list[Source]:
        return [source for sources in self.by_plugin.values() for source in sources]

    def find(self, plugins: list[Any]) -> None:
        """Follow the sensors among ``plugins`` (every model plugin of the world now)."""
        present = {id(plugin): plugin for plugin in plugins if sensor_kind(plugin) is not None}
        for key in list(self.by_plugin):
            if key not in present:
                for source in self.by_plugin.pop(key):
                    source.channel.close()
        for key, plugin in present.items():
            if key not in self.by_plugin:
                kind = sensor_kind(plugin)
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

    def transforms(self) -> list[PlanarTransform]:
        """The sensors' fixed frames: each laser's and camera's on its body, each drive's
        odometry frame on the world (identity: its odometry is the world pose plus noise)."""
        transforms: list[PlanarTransform] = []
        odometry_frames = set()
        for sources in self.by_plugin.values():
            plugin = sources[0].plugin
            kind = sensor_kind(plugin)
            name = self._rename
            if kind == LASER:
                o = plugin.origin
                transforms.append((name(plugin, plugin.body_frame_id), name(plugin, plugin.frame_id), o.x, o.y, o.theta,
                                   bool(plugin.upside_down)))
            elif kind == CAMERA:
                pose = plugin.frame_pose()
                transforms.append((name(plugin, plugin.body_frame_id), name(plugin, plugin.frame_id), pose.x, pose.y,
                                   pose.theta, True))
            else:
                odometry = plugin.odometry
                if odometry.odom_frame_id != odometry.ground_truth_frame_id:
                    odometry_frames.add((name(plugin, odometry.ground_truth_frame_id), name(plugin, odometry.odom_frame_id)))
        transforms.extend((parent, child, 0.0, 0.0, 0.0, False) for parent, child in sorted(odometry_frames))
        return transforms
