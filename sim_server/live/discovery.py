"""What a live view finds among a world's model plugins, by the capabilities they offer
(:mod:`sim_server.core.plugins.capabilities`; no plugin class or type name is named here, so a
plugin of any package is found as long as it offers one):

* a laser: a :class:`~sim_server.core.plugins.capabilities.ScanSource`;
* a camera: an :class:`~sim_server.core.plugins.capabilities.ImageSource`;
* a drive's odometry: an :class:`~sim_server.core.plugins.capabilities.OdometrySource` with a
  stream (its noisy odometry, then its ground truth);
* a drive's velocity command: a :class:`~sim_server.core.plugins.capabilities.VelocityDriven`'s
  ``command`` (a drive of any kind: differential, tricycle, Ackermann, omnidirectional ...).

The sensors a view feeds (:mod:`sim_server.live.sensors`), the drives the viewer drives
(:mod:`sim_server.live.teleop`) and the layout's topics (:mod:`sim_server.live.layout`) are found
here. Topics are absolute (one leading ``/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol

from sim_server.core.format.entity_names import PRIVATE_MARK, SERVER_NODE_NAME
from sim_server.core.plugins.api import ModelPlugins
from sim_server.core.plugins.capabilities import ImageSource, OdometrySource, ScanSource, TwistCommand, VelocityDriven

if TYPE_CHECKING:
    from sim_server.core.physics.model import Model

#: What :func:`sensor_kind` says a plugin is.
LASER, CAMERA, ODOMETRY = "laser", "camera", "odometry"


def absolute_topic(name: str) -> str:
    """``name`` with one leading ``/`` (the view's topics are absolute); a private ``~/x`` is the
    server node's, ``/sim_server/x``, as on ROS."""
    if name.startswith(PRIVATE_MARK):
        name = f"{SERVER_NODE_NAME}/{name[len(PRIVATE_MARK):]}"
    return "/" + name.lstrip("/")


class PluginsOfModels(Protocol):
    """What discovery reads of a world: its models and their plugins."""

    @property
    def models(self) -> Mapping[str, "Model"]: ...

    @property
    def plugins(self) -> ModelPlugins: ...


def world_plugins(world: PluginsOfModels) -> list[Any]:
    """Every model plugin of ``world`` now, model by model."""
    return [plugin for model in world.models.values() for plugin in world.plugins.plugins_of(model)]


def sensor_kind(plugin: Any) -> str | None:
    """What sensor ``plugin`` is (:data:`LASER`, :data:`CAMERA` or :data:`ODOMETRY`, by the
    capability it offers), or None."""
    if isinstance(plugin, ScanSource):
        return LASER
    if isinstance(plugin, ImageSource):
        return CAMERA
    if isinstance(plugin, OdometrySource) and plugin.odometry_streams():
        return ODOMETRY
    return None


def drive_command(plugin: Any) -> TwistCommand | None:
    """The velocity command of ``plugin`` when it is a drive (a :class:`VelocityDriven` whose
    command is a :class:`TwistCommand` with a string topic), else None."""
    if not isinstance(plugin, VelocityDriven):
        return None
    command = plugin.command
    return command if isinstance(command, TwistCommand) and isinstance(command.topic, str) else None


def drive_commands(world: PluginsOfModels) -> dict[str, list[Any]]:
    """The velocity commands of ``world``'s drives by absolute topic (drives may share one)."""
    found: dict[str, list[Any]] = {}
    for plugin in world_plugins(world):
        command = drive_command(plugin)
        if command is not None:
            found.setdefault(absolute_topic(command.topic), []).append(command)
    return found


def sensor_topics(world: PluginsOfModels, kind: str) -> list[str]:
    """The absolute topics of ``world``'s sensors of ``kind`` (sorted, each once): the scans'
    or pictures' topics, the odometry's noisy one."""
    topics = set()
    for plugin in world_plugins(world):
        if sensor_kind(plugin) == kind:
            if kind == LASER:
                topics.add(absolute_topic(plugin.scan_topic))
            elif kind == CAMERA:
                topics.add(absolute_topic(plugin.image_topic))
            else:
                topics.add(absolute_topic(plugin.odometry_streams()[0].topic))
    return sorted(topics)
