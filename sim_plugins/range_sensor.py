"""Range: a sonar or infrared ranger publishing sensor_msgs/Range (as Stage's rangers).

Parameters: ``body`` (required), ``topic`` (``range``), ``frame`` (the plugin's name),
``origin`` ([x, y, yaw] on the body, [0, 0, 0]; the cone points along its x axis),
``field_of_view`` (rad, 0.5: the cone's full width, 0 to 2 pi; at least
:data:`~sim_server.core.limits.MIN_CONE_OF_RAYS` with several beams), ``beams`` (5, 1 to 1000:
rays spread evenly over the cone, the nearest hit counts; one ray points straight ahead),
``range_min`` (m, 0.02), ``range_max`` (m, 4), ``radiation_type`` (``ultrasound`` or
``infrared``), ``update_rate`` (Hz, 10), ``noise_std_dev`` (m, 0, added to a
hit), ``layers`` (["all"]), ``broadcast_tf`` (true: body -> frame on /tf_static),
``always_publish`` (false: no casting while nobody subscribes; in-process, always).

The reading follows REP 117: the nearest hit (m), ``+inf`` when nothing is within
``range_max``, ``-inf`` when the nearest hit is closer than ``range_min``. The rays are cast with
the lasers' compiled ray caster, every ranger due on a step in one call (several per robot cost
little). In-process: :attr:`RangeSensor.last_range` and :attr:`RangeSensor.last_range_ns`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from sim_server.core.plugins import (
    ModelPlugin, PluginBatch, Pose2D, TimeKeeper, UpdateTimer, YamlReader, limits as bounds,
)
from sim_server.core.plugins.capabilities import RANGE_DISPLAY, Advertised, configured_string
from sim_server.core.plugins.services import LaserScanner, prepare_rays, scan_all, scan_block, scene_of
from sim_plugins.common import BatchRecords, RecordSlot, body_of, plugin_rng, read_layer_bits, sensor_parent_frame

DEFAULT_RANGE_RATE = 10.0
RADIATION_TYPES = ("ultrasound", "infrared")
RANGE_QUEUE_DEPTH = 10

#: Where readings go unless ``topic`` says otherwise (in the model's namespace).
DEFAULT_TOPIC = "range"


class RangeSensor(ModelPlugin):
    """A cone of rays; the nearest hit is the range."""

    @classmethod
    def advertised(cls, config: Mapping[str, Any]) -> list[Advertised]:
        """Its readings' topic (``topic``)."""
        return [Advertised(RANGE_DISPLAY, configured_string(config, "topic", DEFAULT_TOPIC))]

    @classmethod
    def prepare(cls) -> None:
        """The compiled ray caster, ready before the first ranger."""
        prepare_rays()

    def on_initialize(self, config: YamlReader) -> None:
        body_name = config.get_name("body")
        topic = config.get_topic("topic", DEFAULT_TOPIC)
        frame = config.get_frame("frame", self.context.name)
        self.broadcast_tf = config.get_bool("broadcast_tf", True)
        self.always_publish = config.get_bool("always_publish", False)
        self.timer = UpdateTimer(config.get_rate("update_rate", DEFAULT_RANGE_RATE))
        self.origin = config.get_pose("origin", Pose2D())
        self.field_of_view = config.get_float("field_of_view", 0.5, within=bounds.FIELD_OF_VIEW)
        beams = config.get_int("beams", 5, within=bounds.RANGE_BEAMS)
        if beams > 1 and self.field_of_view < bounds.MIN_CONE_OF_RAYS:
            raise config.error(
                f"must be at least {bounds.MIN_CONE_OF_RAYS:g} rad for beams: {beams} (a narrower cone is a single ray: "
                f"beams: 1), got {self.field_of_view:g}",
                "field_of_view",
            )
        self.range_min = config.get_float("range_min", 0.02, within=bounds.DISTANCE)
        self.range_max = config.get_float("range_max", 4.0, within=bounds.LENGTH)
        if self.range_min >= self.range_max:
            raise config.error(f"must be below range_max ({self.range_max:g} m), got {self.range_min:g}", "range_min")
        radiation = config.get_choice("radiation_type", RADIATION_TYPES, "ultrasound")
        self.radiation_type = RADIATION_TYPES.index(radiation)  # sensor_msgs/Range: ULTRASOUND 0, INFRARED 1
        noise = config.get_float("noise_std_dev", 0.0, within=bounds.NOISE)
        body = body_of(self.model, config, body_name)
        world = self.context.world
        bits = read_layer_bits(config, self.context)
        half = 0.5 * self.field_of_view
        increment = self.field_of_view / (beams - 1) if beams > 1 else 1.0
        start = -half if beams > 1 else 0.0
        self.scanner = LaserScanner(body.physics_body, self.origin, start, start + increment * (beams - 1), increment,
                                    self.range_max, bits, False, noise, plugin_rng(self.context))
        self.scene = scene_of(world)
        self.frame_id = self.context.frame(frame)
        self.body_frame_id = sensor_parent_frame(self.context, config, body_name, self.frame_id, self.broadcast_tf)
        self.topic_name = self.context.topic(topic)
        self._last: tuple[float | None, int] = (None, -1)
        #: Where the batch casting this ranger keeps its readings (None alone).
        self._slot: RecordSlot | None = None
        self._publisher = None
        self._tf = None
        node = self.context.ros_node
        if node is not None:
            self._setup_ros(node)

    def _setup_ros(self, node) -> None:
        from sensor_msgs.msg import Range

        from sim_server.ros.plugin_support import SubscriberCheck, broadcaster_for, set_stamp, transform

        self._set_stamp = set_stamp
        self._publisher = node.create_publisher(Range, self.topic_name, RANGE_QUEUE_DEPTH)
        self._listened = SubscriberCheck(self._publisher)
        message = Range()
        message.header.frame_id = self.frame_id
        message.radiation_type = self.radiation_type
        message.field_of_view = self.field_of_view
        message.min_range, message.max_range = self.range_min, self.range_max
        self._message = message
        if self.broadcast_tf:
            self._tf = broadcaster_for(node)
            self._tf.send_static([transform(self.body_frame_id, self.frame_id, self.origin, self.context.world.time.time_ns)],
                                 owner=self.context.describe())

    def _wanted(self) -> bool:
        return self._publisher is None or self.always_publish or self._listened()

    @property
    def last_range(self) -> float | None:
        """The last range (m; +inf: nothing within range_max, -inf: closer than range_min;
        None before the first)."""
        return self._latest()[0]

    @property
    def last_range_ns(self) -> int:
        """The sim time (ns) of the last range (-1 before the first)."""
        return self._latest()[1]

    def _latest(self) -> tuple[float | None, int]:
        readings = self._slot.unread() if self._slot is not None else None
        if readings is not None and (readings.cast is None or readings.cast[self._slot.index]):
            self._last = (float(readings.ranges[self._slot.index]), readings.stamp_ns)
        return self._last

    def before_physics_step(self, time: TimeKeeper) -> None:
        """The ranger alone (not in a batch)."""
        self._slot = None  # (a batch it was in no longer casts it)
        if self.timer.check(time) and self._wanted():
            ranges = _nearest([self], time)
            self._last = (float(ranges[0]), time.time_ns)
            self._publish()

    @classmethod
    def before_physics_step_batch(cls, plugins: PluginBatch, time: TimeKeeper) -> None:
        """Every ranger due on this step casts in one compiled call; its reading is built
        when read, or published where somebody listens."""
        batch = plugins.cache.get("rangers")
        if batch is None:
            batch = plugins.cache["rangers"] = _RangerBatch(plugins)
        batch.step(time)

    def _publish(self) -> None:
        """Publish the last range where somebody listens."""
        if self._publisher is not None and self._listened():
            range_m, stamp_ns = self._last
            message = self._message
            self._set_stamp(message.header, stamp_ns)
            message.range = range_m
            self._publisher.publish(message)

    def on_shutdown(self) -> None:
        node = self.context.ros_node
        if node is None or self._publisher is None:
            return
        node.destroy_publisher(self._publisher)
        self._publisher = None
        if self._tf is not None:
            self._tf.remove_static([self.frame_id], owner=self.context.describe())
            self._tf = None


def _nearest(rangers: "list[RangeSensor]", time: TimeKeeper, minimum: np.ndarray | None = None) -> np.ndarray:
    """(N,) each ranger's reading cast now (REP 117: +inf when nothing is hit, -inf when the
    nearest hit is closer than its ``range_min``, m, or ``minimum[i]``); rangers of one beam
    count are cast as one block."""
    scene = rangers[0].scene
    if len({ranger.scanner.beam_count for ranger in rangers}) == 1:
        nearest = np.fmin.reduce(scan_block([r.scanner for r in rangers], scene, time.iterations), axis=1)
    else:  # (NaN-ignoring minima; all NaN: NaN)
        nearest = np.array([np.fmin.reduce(ranges) for ranges, _ in scan_all([r.scanner for r in rangers], scene, time.iterations)])
    if minimum is None:
        minimum = np.array([ranger.range_min for ranger in rangers])
    return np.where(np.isnan(nearest), math.inf, np.where(nearest < minimum, -math.inf, nearest))


class _Readings:
    """The readings (m) of a group's rangers cast at one time (``serial``: its number,
    :class:`BatchRecords`); ``cast``: which were (None: all)."""

    __slots__ = ("serial", "stamp_ns", "ranges", "cast")

    def __init__(self, stamp_ns: int, ranges: np.ndarray, cast: np.ndarray | None) -> None:
        self.serial, self.stamp_ns, self.ranges, self.cast = 0, stamp_ns, ranges, cast


class _RangerBatch:
    """A batch's rangers grouped by update rate (one timer asked per group); each group's
    newest readings, which its rangers read when asked."""

    def __init__(self, plugins: "list[RangeSensor]") -> None:
        groups: dict[int | None, list[RangeSensor]] = {}
        for plugin in plugins:
            groups.setdefault(plugin.timer.period_ns, []).append(plugin)
        self.groups = list(groups.values())
        self.records = BatchRecords(len(self.groups))
        for number, group in enumerate(self.groups):
            for index, plugin in enumerate(group):
                plugin._latest()  # (what an earlier batch cast, kept)
                plugin._slot = RecordSlot(self.records, number, index)
        #: Whether all of a group's rangers always cast (in-process, or always_publish).
        self.always = [all(plugin._publisher is None or plugin.always_publish for plugin in group) for group in self.groups]
        #: Whether any of a group's rangers publishes (runs on ROS).
        self.publishing = [any(plugin._publisher is not None for plugin in group) for group in self.groups]
        self.minimums = [np.array([plugin.range_min for plugin in group]) for group in self.groups]

    def step(self, time: TimeKeeper) -> None:
        for number, group in enumerate(self.groups):
            if not group[0].timer.check(time):
                continue
            rangers = group if self.always[number] else [plugin for plugin in group if plugin._wanted()]
            if not rangers:
                continue
            ranges = _nearest(rangers, time, self.minimums[number] if rangers is group else None)
            cast = None
            if rangers is not group:  # some not cast: they keep their last readings
                chosen = {id(ranger) for ranger in rangers}
                cast = np.array([id(plugin) in chosen for plugin in group])
                for plugin in group:
                    plugin._latest()  # (read before the group's readings are replaced)
                full = np.full(len(group), math.nan)
                full[cast] = ranges
                ranges = full
            self.records.keep(_Readings(time.time_ns, ranges, cast), (number,))
            if self.publishing[number]:
                for plugin in rangers:
                    plugin._latest()
                    plugin._publish()
