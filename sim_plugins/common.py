"""Helpers shared by the plugins: body lookup, update rates and noise generators."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from sim_server.core import limits as bounds
from sim_server.core.motion.dynamics_limits import DynamicsLimits
from sim_server.core.physics.body_memory import BodyBatch
from sim_server.core.plugins import PluginContext, TimeKeeper, YamlReader

if TYPE_CHECKING:
    from sim_server.core.physics.model import Model, ModelBody


def body_of(model: "Model", config: YamlReader, name: str, key: str = "body") -> "ModelBody":
    """The body ``name`` of ``model``; a :class:`ConfigError` naming the key when it does not exist."""
    body = model.bodies.get(name)
    if body is None:
        raise config.error(f'names body "{name}", which does not exist in model "{model.name}"', key)
    return body


def read_rate(config: YamlReader, key: str, default: float) -> float:
    """An update rate in Hz: a number >= 0 (at most bounds.RATE's maximum) or ``.inf`` (every step)."""
    value = config.get_any(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value == math.inf or bounds.RATE.contains(value)):
        raise config.error(
            f"must be a rate in Hz (a number >= 0 and <= {bounds.RATE.high:g}, or .inf), got {value!r}", key
        )
    return float(value)


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
    layers = config.get_str_list(key, ["all"])
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



class DriveBatch:
    """The bodies of a batch of drive plugins, moved in one compiled call per step.

    Each plugin has a ``body`` and an ``odometry`` (:class:`~sim_plugins.odometry.OdometryPublisher`).
    Fill :attr:`forward` and :attr:`turn_rate`, call :meth:`drive`, then publish odometry for
    the plugins :meth:`odometry_due` lists (drives are grouped by odometry rate, and each
    group's timer is asked once).

    Args:
        plugins: the drive plugins.
        moving_points: per plugin, where its body's centre of mass is (m, body frame) from the
            point that moves ``forward`` along the body's x axis (the origin for DiffDrive, the
            rear axle's midpoint for TricycleDrive).
    """

    def __init__(self, plugins: Sequence[Any], moving_points: Sequence[tuple[float, float]]) -> None:
        self.plugins = list(plugins)
        count = len(self.plugins)
        self.bodies = BodyBatch(plugin.body for plugin in self.plugins)
        self.moving_points = np.array(moving_points, dtype=np.float64).reshape(count, 2)
        #: Per plugin, the forward speed (m/s) and the turn rate (rad/s) :meth:`drive` sets.
        self.forward = np.zeros(count)
        self.turn_rate = np.zeros(count)
        #: After :meth:`drive`: the poses (x, y in m, angle in rad) before the step and the
        #: bodies' origins' velocities (m/s, m/s, rad/s) before :meth:`drive` set new ones.
        self.poses = np.zeros((count, 3))
        self.velocities = np.zeros((count, 3))
        groups: dict[int | None, list[tuple[int, Any]]] = {}
        for index, plugin in enumerate(self.plugins):
            groups.setdefault(plugin.odometry.timer.period_ns, []).append((index, plugin))
        self._odometry_groups = list(groups.values())

    def drive(self) -> None:
        """Read every body's pose and velocity, then set its velocity from :attr:`forward` and
        :attr:`turn_rate`."""
        self.bodies.drive_unicycles(self.forward, self.turn_rate, self.moving_points, self.poses, self.velocities)

    def odometry_due(self, time: TimeKeeper) -> list[tuple[int, Any]]:
        """(index, plugin) of each plugin whose odometry is due now; :attr:`poses` and
        :attr:`velocities` hold their state at that index (see :meth:`drive`)."""
        due: list[tuple[int, Any]] = []
        for group in self._odometry_groups:
            if group[0][1].odometry.timer.check(time):
                due += group
        return due
