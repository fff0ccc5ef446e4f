"""Helpers shared by the plugins: body lookup, update rates and noise generators."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from sim_server.core import limits as bounds
from sim_server.core.dynamics_limits import DynamicsLimits
from sim_server.core.plugin_api import PluginContext
from sim_server.core.yaml_reader import YamlReader

if TYPE_CHECKING:
    from sim_server.core.model import Model, ModelBody


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

