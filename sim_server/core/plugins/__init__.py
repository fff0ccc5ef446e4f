"""Plugins: what a plugin author imports, in one place.

::

    from sim_server.core.plugins import ModelPlugin, UpdateTimer, YamlReader, TimeKeeper

    class Blinker(ModelPlugin):
        def on_initialize(self, config: YamlReader) -> None:
            self.timer = UpdateTimer(config.get_float("update_rate", 1.0))

        def after_physics_step(self, time: TimeKeeper) -> None:
            if self.timer.check(time):
                ...

* :mod:`.api` -- the base classes, their context and the contract a plugin has with the world
  (:class:`~.api.PluginWorld`);
* :mod:`.manager` -- loading plugins from entry points and running their hooks (the world's
  business, not the plugin author's).
"""

from sim_server.core.errors import ConfigError
from sim_server.core.format.yaml_reader import YamlReader
from sim_server.core.plugins.api import (
    MODEL_PLUGIN_GROUP,
    PLUGIN_API_VERSION,
    WORLD_PLUGIN_GROUP,
    ModelPlugin,
    Plugin,
    PluginBatch,
    PluginContext,
    PluginWorld,
    UpdateInfo,
    UpdateTimer,
    WorldPlugin,
)
from sim_server.core.timing.timekeeper import TimeKeeper

__all__ = [
    "MODEL_PLUGIN_GROUP",
    "PLUGIN_API_VERSION",
    "WORLD_PLUGIN_GROUP",
    "ConfigError",
    "ModelPlugin",
    "Plugin",
    "PluginBatch",
    "PluginContext",
    "PluginWorld",
    "TimeKeeper",
    "UpdateInfo",
    "UpdateTimer",
    "WorldPlugin",
    "YamlReader",
]
