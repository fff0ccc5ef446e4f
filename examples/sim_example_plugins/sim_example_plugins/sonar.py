"""Sonar: a fan of beams on a body, published as sensor_msgs/LaserScan.

Parameters: ``body`` (required), ``topic`` (``sonar``, in the model's namespace), ``frame`` (the
plugin's name), ``origin`` ([x, y, yaw] on the body, [0, 0, 0]), ``range`` (m, 4), ``spread``
(the fan's full width, rad, 0.5), ``beams`` (1 to 64, 5), ``update_rate`` (Hz, 10), ``layers``
(["all"]). A beam that hits nothing within range reads NaN.

It offers :class:`~sim_server.core.plugins.capabilities.ScanSource` (so the live view, MCAP logs,
laser rays on pictures and the RViz configuration show it as the bundled laser is shown, though
none of them knows this class), ``DemandDriven`` (it scans on ROS only while somebody listens,
or a live view wants it) and ``advertised`` (what the RViz configuration shows). In-process,
:attr:`Sonar.nearest` is the shortest range of the last scan (m; inf when nothing was hit).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from sim_server.core.plugins import (
    LASER_DISPLAY, Advertised, ModelPlugin, Pose2D, Scan, ScanLayout, SensorMount, TimeKeeper,
    UpdateTimer, YamlReader, configured_string, limits,
)
from sim_server.core.plugins.services import LaserScanner, prepare_rays, scan_all, scene_of

DEFAULT_TOPIC = "sonar"
#: Most beams a sonar fan may have.
MAX_BEAMS = 64
BEAMS = limits.Range(1, MAX_BEAMS)
#: The fan's full width (rad): up to a half turn.
SPREAD = limits.Range(0.0, math.pi)
SCAN_QUEUE_DEPTH = 10


class Sonar(ModelPlugin):
    """A fan of ``beams`` beams ``spread`` wide, cast every ``1 / update_rate`` s."""

    @classmethod
    def advertised(cls, config: Mapping[str, Any]) -> list[Advertised]:
        """Its scans' topic, for the RViz configuration of a world file."""
        return [Advertised(LASER_DISPLAY, configured_string(config, "topic", DEFAULT_TOPIC))]

    @classmethod
    def prepare(cls) -> None:
        """The compiled ray caster, ready before the first sonar."""
        prepare_rays()

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_name("body")
        if body_name not in self.model.bodies:
            raise config.error(f'names body "{body_name}", which does not exist', "body")
        body = self.model.bodies[body_name]
        topic = config.get_topic("topic", DEFAULT_TOPIC)
        frame = config.get_frame("frame", self.context.name)
        origin = config.get_pose("origin", Pose2D())
        reach = config.get_float("range", 4.0, within=limits.LENGTH)
        spread = config.get_float("spread", 0.5, within=SPREAD)
        beams = config.get_int("beams", 5, within=BEAMS)
        self.timer = UpdateTimer(config.get_rate("update_rate", 10.0))
        layers = config.get_name_list("layers", ["all"])
        bits, unknown = self.context.world.collision_filter.category_bits(layers)
        if unknown:
            raise config.error(f"names layer(s) {{{','.join(unknown)}}}, which do not exist", "layers")
        if beams > 1 and spread == 0.0:
            raise config.error(f"must be above 0 rad for {beams} beams", "spread")
        increment = spread / (beams - 1) if beams > 1 else 1.0
        first = -0.5 * spread if beams > 1 else 0.0
        last = first + increment * (beams - 1)
        self.scanner = LaserScanner(body.physics_body, origin, first, last, increment, reach, bits)
        self.scene = scene_of(self.context.world)
        self.scan_topic = self.context.topic(topic)
        self.scan_mount = SensorMount(self.context.frame(frame), self.context.frame(body_name), origin)
        self.scan_layout = ScanLayout(first, last, increment, reach, self.scanner.local_angles)
        #: The last scan, or None before the first.
        self.latest_scan: Scan | None = None
        #: The shortest range of the last scan (m; inf when nothing was hit or before the first).
        self.nearest = math.inf
        #: Set by a live view while it wants the scans (ROS subscribers count by themselves).
        self.demanded = False
        self._publisher = None
        node = self.context.ros_node
        if node is not None:
            self._setup_ros(node)

    def _setup_ros(self, node: Any) -> None:
        from sensor_msgs.msg import LaserScan

        from sim_server.ros.plugin_support import LaserScanCdr, SubscriberCheck, stamp_cdr

        self._publisher = node.create_publisher(LaserScan, self.scan_topic, SCAN_QUEUE_DEPTH)
        self._listened = SubscriberCheck(self._publisher)
        layout = self.scan_layout
        self._message = LaserScanCdr(self.scan_mount.frame_id, layout.angle_min, layout.angle_max,
                                     layout.angle_increment, 0.0, layout.range_max)
        self._stamp_cdr = stamp_cdr

    def sensor_pose(self) -> Pose2D:
        """Where the sonar is now (world frame)."""
        return self.scanner.pose()

    def _wanted(self) -> bool:
        return self._publisher is None or self.demanded or self._listened()

    def before_physics_step(self, time: TimeKeeper) -> None:
        if not (self.timer.check(time) and self._wanted()):
            return
        ranges, _ = scan_all([self.scanner], self.scene, time.iterations)[0]
        self.latest_scan = Scan(time.time_ns, ranges)
        hit = ranges[np.isfinite(ranges)]
        self.nearest = float(hit.min()) if len(hit) else math.inf
        if self._publisher is not None:
            self._publisher.handle.publish_raw(self._message.serialize(self._stamp_cdr(time.time_ns), ranges.tobytes()))

    def on_shutdown(self) -> None:
        if self._publisher is not None:
            self.context.ros_node.destroy_publisher(self._publisher)
            self._publisher = None
