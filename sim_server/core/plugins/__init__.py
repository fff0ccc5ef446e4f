"""Plugins: the core face of the plugin API, what a plugin author imports.

::

    from sim_server.core.plugins import ModelPlugin, UpdateTimer, YamlReader, TimeKeeper

    class Blinker(ModelPlugin):
        def on_initialize(self, config: YamlReader) -> None:
            self.timer = UpdateTimer(config.get_float("update_rate", 1.0))

        def after_physics_step(self, time: TimeKeeper) -> None:
            if self.timer.check(time):
                ...

* here -- the base classes, their context, the update timer, the YAML reader, sim time, poses,
  the bounds on input (:mod:`~sim_server.core.limits`), the capabilities a plugin offers and the
  errors (``ConfigError`` for a bad configuration; ``EntityError`` and ``RequestError`` from the
  world's changes);
* :mod:`.services` -- the ray caster, pictures, body access, the drives' kernels, seeded noise;
* :mod:`.capabilities` -- the protocols of what plugins offer (all of them also here);
* :mod:`.api` -- the base classes and the contract a plugin has with the world
  (:class:`~.api.PluginWorld`);
* :mod:`.manager` -- loading plugins from entry points and running their hooks (the world's
  business, not the plugin author's).

Plugins that publish on ROS import the ROS face besides, :mod:`sim_server.ros.plugin_support`.
The bundled plugins (``sim_plugins``) import nothing else of the simulator.
"""

from sim_server.core import limits
from sim_server.core.errors import ConfigError, EntityError, RequestError, SimError
from sim_server.core.format.yaml_reader import YamlReader
from sim_server.core.geometry import Pose2D
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
from sim_server.core.plugins.capabilities import (
    CAMERA_DISPLAY,
    LASER_DISPLAY,
    ODOMETRY_DISPLAY,
    RANGE_DISPLAY,
    Advertised,
    Advertiser,
    DemandDriven,
    ImageDatapack,
    ImageSource,
    OdometryReading,
    OdometrySource,
    OdometryStream,
    Picture,
    RayCaster,
    Scan,
    ScanLayout,
    ScanSource,
    SensorMount,
    TwistCommand,
    VelocityDriven,
    configured_flag,
    configured_string,
)
from sim_server.core.timing.timekeeper import TimeKeeper

__all__ = [
    "CAMERA_DISPLAY",
    "LASER_DISPLAY",
    "MODEL_PLUGIN_GROUP",
    "ODOMETRY_DISPLAY",
    "PLUGIN_API_VERSION",
    "RANGE_DISPLAY",
    "WORLD_PLUGIN_GROUP",
    "Advertised",
    "Advertiser",
    "ConfigError",
    "EntityError",
    "DemandDriven",
    "ImageDatapack",
    "ImageSource",
    "ModelPlugin",
    "OdometryReading",
    "OdometrySource",
    "OdometryStream",
    "Picture",
    "Plugin",
    "PluginBatch",
    "PluginContext",
    "PluginWorld",
    "Pose2D",
    "RayCaster",
    "RequestError",
    "Scan",
    "ScanLayout",
    "ScanSource",
    "SensorMount",
    "SimError",
    "TimeKeeper",
    "TwistCommand",
    "UpdateInfo",
    "UpdateTimer",
    "VelocityDriven",
    "WorldPlugin",
    "YamlReader",
    "configured_flag",
    "configured_string",
    "limits",
]
