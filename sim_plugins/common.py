"""Helpers shared by the plugins: body lookup, update rates and noise generators."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from sim_server.core.plugins import PluginContext, TimeKeeper, YamlReader, limits as bounds
from sim_server.core.plugins.services import (
    BodyBatch, DynamicsLimits, NormalStream, frame_problem, offset_point_velocity, stream_key,
)

if TYPE_CHECKING:
    from sim_server.core.plugins.services import Model, ModelBody


def body_of(model: "Model", config: YamlReader, name: str, key: str = "body") -> "ModelBody":
    """The body ``name`` of ``model``; a :class:`ConfigError` naming the key when it does not exist."""
    body = model.bodies.get(name)
    if body is None:
        raise config.error(f'names body "{name}", which does not exist in model "{model.name}"', key)
    return body


def body_frame(context: PluginContext, config: YamlReader, name: str, key: str = "body") -> str:
    """The TF frame id of the body ``name`` (``<ns>_<name>``), for a plugin that publishes it; a
    :class:`ConfigError` naming the key when the body's name cannot make one (a space, say)."""
    problem = frame_problem(name)
    if problem is not None:
        raise config.error(f"names body {name!r}, whose name cannot be a frame: {problem}", key)
    return context.frame(name)


def check_transform(config: YamlReader, key: str, parent: str, child: str) -> None:
    """A :class:`ConfigError` naming ``key`` when the transform ``parent`` -> ``child`` a plugin
    publishes joins a frame to itself (tf2 ignores such a transform, with an error)."""
    if parent == child:
        raise config.error(f"makes frame {child!r} the child of itself (tf2 ignores such a transform)", key)


def sensor_parent_frame(
    context: PluginContext, config: YamlReader, body_name: str, frame_id: str, broadcast: bool, key: str = "frame"
) -> str:
    """The frame id of the body ``body_name`` (checked as :func:`body_frame` does), the parent of
    a sensor's frame ``frame_id`` (read from ``key``); with ``broadcast`` (the sensor publishes
    that transform) the two must differ (:func:`check_transform`)."""
    parent = body_frame(context, config, body_name)
    if broadcast:
        check_transform(config, key, parent, frame_id)
    return parent


def read_dynamics(config: YamlReader, key: str) -> DynamicsLimits:
    """A ``{acceleration_limit, deceleration_limit, velocity_limit}`` map (all optional, 0 = none)."""
    limits = config.get_map(key, {})
    acceleration = limits.get_float("acceleration_limit", 0.0, within=bounds.DYNAMICS_LIMIT)
    result = DynamicsLimits(
        acceleration_limit=acceleration,
        deceleration_limit=limits.get_float("deceleration_limit", acceleration, within=bounds.DYNAMICS_LIMIT),
        velocity_limit=limits.get_float("velocity_limit", 0.0, within=bounds.DYNAMICS_LIMIT),
    )
    limits.ensure_all_keys_used()
    return result


def read_layer_bits(config: YamlReader, context: PluginContext, key: str = "layers") -> int:
    """The collision bits of the layers the list ``key`` names (``["all"]`` when absent: every
    layer); a :class:`ConfigError` naming the key when a layer does not exist in the world."""
    layers = config.get_name_list(key, ["all"])
    bits, unknown = context.world.collision_filter.category_bits(layers)
    if unknown:
        raise config.error(f"names layer(s) {{{','.join(unknown)}}}, which do not exist", key)
    return bits


def plugin_rng(context: PluginContext) -> np.random.Generator:
    """The plugin's random generator: reproducible when the world has a ``seed``.

    Each plugin draws from its own stream, derived from the world's seed, the model's and the
    plugin's names, so adding a plugin does not change the noise of the others.
    """
    seed = context.world.seed
    if seed is None:
        return np.random.default_rng()
    owner = context.model.name if context.model is not None else ""
    words = [seed] + [byte for byte in f"{owner}/{context.name}".encode()]
    return np.random.default_rng(words)


def plugin_stream(context: PluginContext) -> NormalStream:
    """The plugin's stream of normal numbers for batched noise (:mod:`sim_server.core.random_streams`):
    reproducible when the world has a ``seed``, its own (from the model's and the plugin's names)."""
    owner = context.model.name if context.model is not None else ""
    return NormalStream(stream_key(context.world.seed, f"{owner}/{context.name}"))



class DriveBatch:
    """The bodies of a batch of drive plugins, moved in one compiled call per step.

    Each plugin has a ``body`` and an ``odometry`` (:class:`~sim_plugins.odometry.OdometryPublisher`).
    Fill :attr:`forward` and :attr:`turn_rate` (and :attr:`lateral` for drives that slide
    sideways), call :meth:`drive`, then publish odometry for
    the plugins :meth:`odometry_due` lists (drives are grouped by odometry rate, and each
    group's timer is asked once).

    Args:
        plugins: the drive plugins.
        moving_points: per plugin, where its body's centre of mass is (m, body frame) from the
            point that moves ``forward`` along the body's x axis (the origin for DiffDrive and
            OmniDrive, the rear axle's midpoint for TricycleDrive and AckermannDrive).
        origins: per plugin, where its body's origin is (m, body frame) from that point (default
            there): the odometry's velocity is the origin's.
    """

    def __init__(
        self, plugins: Sequence[Any], moving_points: Sequence[tuple[float, float]],
        origins: Sequence[tuple[float, float]] | None = None,
    ) -> None:
        self.plugins = list(plugins)
        count = len(self.plugins)
        self.bodies = BodyBatch(plugin.body for plugin in self.plugins)
        self.moving_points = np.array(moving_points, dtype=np.float64).reshape(count, 2)
        self.origins = np.zeros((count, 2)) if origins is None else np.array(origins, dtype=np.float64).reshape(count, 2)
        #: Per plugin, the forward and sideways (to the left) speeds (m/s) and the turn rate
        #: (rad/s) :meth:`drive` sets.
        self.forward = np.zeros(count)
        self.lateral = np.zeros(count)
        self.turn_rate = np.zeros(count)
        #: After :meth:`drive`: the poses (x, y in m, angle in rad) before the step and the
        #: bodies' origins' velocities (m/s, m/s, rad/s) before :meth:`drive` set new ones.
        self.poses = np.zeros((count, 3))
        self.velocities = np.zeros((count, 3))
        groups: dict[int | None, list[tuple[int, Any]]] = {}
        for index, plugin in enumerate(self.plugins):
            groups.setdefault(plugin.odometry.timer.period_ns, []).append((index, plugin))
        #: The plugins grouped by odometry rate: (index, plugin) each.
        self._odometry_groups = list(groups.values())

    def drive(self) -> None:
        """Read every body's pose and velocity, then set its velocity from :attr:`forward`,
        :attr:`lateral` and :attr:`turn_rate`."""
        self.bodies.drive_planar(
            self.forward, self.lateral, self.turn_rate, self.moving_points, self.poses, self.velocities
        )

    def odometry_groups_due(self, time: TimeKeeper) -> list[int]:
        """The numbers of the odometry groups due now (each group's timer asked once)."""
        return [number for number, group in enumerate(self._odometry_groups) if group[0][1].odometry.timer.check(time)]

    def odometry_due(self, time: TimeKeeper) -> list[tuple[int, Any]]:
        """(index, plugin) of each plugin whose odometry is due now; :attr:`poses` and
        :attr:`velocities` hold their state at that index (see :meth:`drive`)."""
        due: list[tuple[int, Any]] = []
        for number in self.odometry_groups_due(time):
            due += self._odometry_groups[number]
        return due

    def record(self, stamp_ns: int) -> "DriveRecord":
        """The bodies' state now (after :meth:`drive`), copied, for odometry built when read."""
        return DriveRecord(stamp_ns, self.poses, self.forward, self.lateral, self.turn_rate, self.origins)


class DriveRecord:
    """The bodies of a batch of drives at one time (``stamp_ns``): poses (m, rad), the speeds
    set (forward and sideways m/s, turn rate rad/s) and the origins' offsets from the moving
    points (m, body frame), copied; a drive's odometry is built from it only when read
    (:meth:`~sim_plugins.odometry.OdometryPublisher.defer`), the same numbers as measuring at once."""

    __slots__ = ("stamp_ns", "poses", "forward", "lateral", "turn_rate", "origins", "noisy", "serial")

    def __init__(
        self, stamp_ns: int, poses: np.ndarray, forward: np.ndarray, lateral: np.ndarray, turn_rate: np.ndarray,
        origins: np.ndarray,
    ) -> None:
        self.stamp_ns = stamp_ns
        self.poses, self.forward, self.lateral = poses.copy(), forward.copy(), lateral.copy()
        self.turn_rate, self.origins = turn_rate.copy(), origins  # (origins never change)
        #: The noisy odometry (N, 6: x, y, yaw, vx, vy, wz) of the noisy drives, drawn by the
        #: batch (None when none is).
        self.noisy: np.ndarray | None = None
        #: The record's number in its batch (for odometry reading a batch's newest record).
        self.serial = 0

    def state(self, index: int) -> tuple[float, float, float, float, float, float]:
        """x, y, theta (m, rad), the world velocity of the origin (m/s) and the turn rate (rad/s)
        of drive ``index``."""
        x, y, theta = self.poses[index].tolist()
        turn_rate = float(self.turn_rate[index])
        origin_x, origin_y = self.origins[index].tolist()
        vx, vy = offset_point_velocity(
            float(self.forward[index]), float(self.lateral[index]), turn_rate, math.cos(theta), math.sin(theta),
            origin_x, origin_y,
        )
        return x, y, theta, vx, vy, turn_rate

    def world_velocities(self, rows: np.ndarray) -> np.ndarray:
        """(M, 2): the world velocity (m/s) of the origins of drives ``rows``, as :meth:`state`
        gives it, for many at once."""
        theta = self.poses[rows, 2]
        return np.column_stack(offset_point_velocity(
            self.forward[rows], self.lateral[rows], self.turn_rate[rows], np.cos(theta), np.sin(theta),
            self.origins[rows, 0], self.origins[rows, 1],
        ))


class BatchRecords:
    """The newest record of each group of a batch's plugins (plugins of one update rate share a
    group), which each plugin reads only when asked (:class:`RecordSlot`): while nobody listens,
    nothing is done per plugin and step. A record is any object with a ``serial`` attribute.

    Args:
        groups: how many groups the batch has.
    """

    def __init__(self, groups: int) -> None:
        self.newest: list[Any] = [None] * groups
        self.count = 0

    def keep(self, record: Any, groups: Sequence[int]) -> None:
        """Make ``record`` the newest of ``groups`` (numbering it: its ``serial``)."""
        self.count += 1
        record.serial = self.count
        for group in groups:
            self.newest[group] = record


class RecordSlot:
    """Where a plugin reads its measurements: row ``index`` of group ``group`` of a batch's
    :class:`BatchRecords`."""

    __slots__ = ("records", "group", "index", "seen")

    def __init__(self, records: BatchRecords, group: int, index: int) -> None:
        self.records, self.group, self.index = records, group, index
        #: The serial of the record last read (-1: none).
        self.seen = -1

    def unread(self) -> Any:
        """The group's newest record if the plugin has not read it yet (now it has), else None."""
        record = self.records.newest[self.group]
        if record is None or record.serial == self.seen:
            return None
        self.seen = record.serial
        return record
