"""Laser: a planar laser scanner publishing sensor_msgs/LaserScan (the reference's ``Laser``).

Parameters (defaults as the reference's): ``body`` (required), ``range`` (m, required),
``angle`` {``min``, ``max``, ``increment``} (rad, required; a negative increment scans
clockwise), ``topic`` (``scan``), ``frame`` (the plugin's name), ``origin`` ([x, y, yaw] on the
body, [0, 0, 0]), ``update_rate`` (Hz, .inf), ``noise_std_dev`` (m, 0, added to hits),
``layers`` (["all"]), ``upside_down`` (false: beam angles negated), ``broadcast_tf`` (true:
body -> laser on /tf_static), ``always_publish`` (false: scan only while somebody subscribes).

Misses are NaN. When the world has a layer named ``reflectance``, intensities are 255 for beams
whose nearest hit is on it and 0 otherwise; without one they are empty.

Faults of real scanners (not the reference's; off unless given): ``dropout_rate`` (0 to 1, 0:
the probability that a beam returns nothing, NaN as a miss, whatever it would hit) and
``max_range_rate`` (0 to 1, 0: the probability that a beam reads ``range`` exactly, a spurious
maximum, hit or not); together at most 1. Their intensities are 0. When either rate is above 0,
every beam of a scan takes one uniform draw from the plugin's generator
(:func:`~sim_plugins.common.plugin_rng`), after the scan's Gaussian noise draws. The draws follow
the noise's rule: they are taken whenever a scan is made (in-process always; over ROS while a
scan is wanted, see ``always_publish``), for every beam whatever it hits, and a laser cast in a
batch with others draws the same numbers as alone.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from sim_server.core.plugins import (
    ModelPlugin, PluginBatch, Pose2D, TimeKeeper, UpdateTimer, YamlReader, limits as bounds,
)
from sim_server.core.plugins.capabilities import (
    LASER_DISPLAY, Advertised, Scan, ScanLayout, SensorMount, configured_string,
)
from sim_server.core.plugins.services import LaserScanner, prepare_rays, scan_all, scene_of
from sim_plugins.common import body_of, plugin_rng, read_layer_bits, sensor_parent_frame

#: Name of the layer whose walls reflect (intensity 255).
REFLECTANCE_LAYER = "reflectance"
REFLECTIVE_INTENSITY = 255.0
SCAN_QUEUE_DEPTH = 10
#: Where scans go unless ``topic`` says otherwise (in the model's namespace).
DEFAULT_TOPIC = "scan"


class Laser(ModelPlugin):
    """Casts all beams of a scan at once and publishes them. Offers
    :class:`~sim_server.core.plugins.capabilities.ScanSource`, ``RayCaster`` and
    ``DemandDriven``."""

    @classmethod
    def advertised(cls, config: Mapping[str, Any]) -> list[Advertised]:
        """Its scans' topic (``topic``)."""
        return [Advertised(LASER_DISPLAY, configured_string(config, "topic", DEFAULT_TOPIC))]

    @classmethod
    def prepare(cls) -> None:
        """The compiled ray caster, ready before the first laser (levels bring lasers in steps)."""
        prepare_rays()

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_name("body")
        topic = config.get_topic("topic", DEFAULT_TOPIC)
        frame = config.get_frame("frame", self.context.name)
        self.broadcast_tf = config.get_bool("broadcast_tf", True)
        self.always_publish = config.get_bool("always_publish", False)
        self.timer = UpdateTimer(config.get_rate("update_rate", math.inf))
        self.origin = config.get_pose("origin", Pose2D())
        self.range = config.get_float("range", within=bounds.LENGTH)
        noise = config.get_float("noise_std_dev", 0.0, within=bounds.NOISE)
        dropout_rate = config.get_float("dropout_rate", 0.0, within=bounds.PROBABILITY)
        max_range_rate = config.get_float("max_range_rate", 0.0, within=bounds.PROBABILITY)
        if dropout_rate + max_range_rate > 1.0:
            raise config.error(
                f"plus dropout_rate ({dropout_rate:g}) must be at most 1 (they are probabilities of one beam), "
                f"got {max_range_rate:g}",
                "max_range_rate",
            )
        self.upside_down = config.get_bool("upside_down", False)
        angle = config.get_map("angle")
        self.angle_min = angle.get_float("min", within=bounds.ANGLE)
        self.angle_max = angle.get_float("max", within=bounds.ANGLE)
        self.angle_increment = angle.get_float("increment", within=bounds.ANGLE)
        angle.ensure_all_keys_used()
        if self.angle_increment == 0.0:
            raise angle.error('must not be zero (invalid "angle" params)', "increment")
        if self.angle_increment > 0.0 and self.angle_max < self.angle_min:
            raise angle.error('Invalid "angle" params, must have max > min when increment > 0')
        if self.angle_increment < 0.0 and self.angle_min < self.angle_max:
            raise angle.error('Invalid "angle" params, must have min > max when increment < 0')
        beams = (self.angle_max - self.angle_min) / self.angle_increment + 1.0
        if beams > bounds.MAX_LASER_BEAMS:
            raise angle.error(
                f"must give at most {bounds.MAX_LASER_BEAMS} beams from min to max, got {self.angle_increment:g} rad: "
                f'{beams:.6g} beams are more than the limit (invalid "angle" params)',
                "increment",
            )
        body = body_of(self.model, config, body_name)
        world = self.context.world
        bits = read_layer_bits(config, self.context)
        self.reflectance_bits = (
            world.collision_filter.category_bits([REFLECTANCE_LAYER])[0]
            if world.collision_filter.is_registered(REFLECTANCE_LAYER)
            else 0
        )
        self.scanner = LaserScanner(
            body.physics_body, self.origin, self.angle_min, self.angle_max, self.angle_increment,
            self.range, bits, self.upside_down, noise, plugin_rng(self.context),
            dropout_rate=dropout_rate, max_range_rate=max_range_rate,
        )
        self.scene = scene_of(world)
        self.frame_id = self.context.frame(frame)
        #: The topic of the scans (in the model's namespace).
        self.topic_name = self.context.topic(topic)
        self.body_frame_id = sensor_parent_frame(self.context, config, body_name, self.frame_id, self.broadcast_tf)
        self.scan_topic = self.topic_name
        self.scan_mount = SensorMount(self.frame_id, self.body_frame_id, self.origin, self.upside_down)
        self.scan_layout = ScanLayout(self.angle_min, self.angle_max, self.angle_increment, self.range,
                                      self.scanner.local_angles)
        #: The last scan (float32 ranges, NaN for misses) and its intensities, for in-process use,
        #: and the sim time (ns) it was made at (before that step).
        self.last_ranges = None
        self.last_intensities = None
        self.last_scan_ns = -1
        #: Whether a consumer outside ROS (a live view) wants the scans, whoever else listens.
        self.demanded = False
        self._publisher = None
        self._message = None
        node = self.context.ros_node
        if node is not None:
            self._setup_ros(node)

    def _setup_ros(self, node) -> None:
        from sensor_msgs.msg import LaserScan

        from sim_server.ros.plugin_support import LaserScanCdr, SubscriberCheck, broadcaster_for, stamp_cdr, transform

        self._stamp_cdr = stamp_cdr
        self._publisher = node.create_publisher(LaserScan, self.topic_name, SCAN_QUEUE_DEPTH)
        self._listened = SubscriberCheck(self._publisher)
        # Scans go to the middleware as serialized bytes, straight to the publisher's handle:
        # rclpy's Publisher.publish checks the type and enters the handle's context on every
        # call, a third of what publishing a thousand lasers' scans costs. The server's one
        # thread does not destroy the publisher meanwhile (on_shutdown drops this first).
        self._publish_raw = self._publisher.handle.publish_raw
        self._message = LaserScanCdr(self.frame_id, self.angle_min, self.angle_max, self.angle_increment, 0.0, self.range)
        if self.broadcast_tf:
            tf = transform(self.body_frame_id, self.frame_id, self.origin, self.context.world.time.time_ns)
            if self.upside_down:  # rolled over: roll pi, then the yaw of the origin
                half = 0.5 * self.origin.theta
                tf.transform.rotation.x, tf.transform.rotation.y = math.cos(half), math.sin(half)
                tf.transform.rotation.z, tf.transform.rotation.w = 0.0, 0.0
            self._tf = broadcaster_for(node)
            self._tf.send_static([tf], owner=self.context.describe())

    @property
    def latest_scan(self) -> Scan | None:
        """The last scan, or None before the first."""
        return None if self.last_ranges is None else Scan(self.last_scan_ns, self.last_ranges, self.last_intensities)

    def sensor_pose(self) -> Pose2D:
        """The laser's pose now (world frame)."""
        return self.scanner.pose()

    def _wanted(self) -> bool:
        """Whether a scan is wanted (in-process, always published, a live view or a subscriber
        listens)."""
        return self._publisher is None or self.always_publish or self.demanded or self._listened()

    def before_physics_step(self, time: TimeKeeper) -> None:
        if self.timer.check(time) and self._wanted():
            self._scan_and_publish([self], time)

    @classmethod
    def before_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every laser due on this step casts in one compiled call; the lasers are grouped by
        rate once, so a step on which no rate fires costs one timer check per rate (and a group
        whose scans are all wanted whoever listens is not asked laser by laser)."""
        by_rate = plugins.cache.get("by_rate")
        if by_rate is None:
            groups: dict[int | None, list[Laser]] = {}
            for plugin in plugins:
                groups.setdefault(plugin.timer.period_ns, []).append(plugin)
            by_rate = plugins.cache["by_rate"] = [
                (group, any(p._publisher is not None and not p.always_publish for p in group)) for group in groups.values()
            ]
        due: list[Laser] = []
        for group, ask in by_rate:
            if group[0].timer.check(time):
                due.extend([plugin for plugin in group if plugin._wanted()] if ask else group)
        if due:
            cls._scan_and_publish(due, time)

    @staticmethod
    def _scan_and_publish(lasers: "list[Laser]", time: TimeKeeper) -> None:
        scans = scan_all([laser.scanner for laser in lasers], lasers[0].scene, time.iterations)
        stamp = None
        for laser, (ranges, hit_bits) in zip(lasers, scans):
            intensities = None
            if laser.reflectance_bits:
                intensities = ((hit_bits & laser.reflectance_bits) != 0).astype("float32") * REFLECTIVE_INTENSITY
            laser.last_ranges, laser.last_intensities, laser.last_scan_ns = ranges, intensities, time.time_ns
            if laser._publisher is not None:
                if stamp is None:
                    stamp = laser._stamp_cdr(time.time_ns)
                laser._publish_raw(
                    laser._message.serialize(stamp, ranges.tobytes(), None if intensities is None else intensities.tobytes())
                )

    def on_shutdown(self) -> None:
        node = self.context.ros_node
        if node is None:
            return
        if self._publisher is not None:
            self._publish_raw = None
            node.destroy_publisher(self._publisher)
            self._publisher = None
        if self.broadcast_tf:
            self._tf.remove_static([self.frame_id], owner=self.context.describe())
