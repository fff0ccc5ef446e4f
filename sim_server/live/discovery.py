"""What a live view finds among a world's model plugins, by what each offers (no plugin class is
named, so plugins added later are found as long as they offer the same):

* a laser: ``scanner``, ``topic_name`` and ``last_scan_ns`` (its scans; a Range has a scanner but
  no scans, and is none);
* a camera: ``last_image``, ``topic_name`` and ``frame_pose``;
* a drive's odometry: ``odometry`` that is ``enabled`` and has an ``odom_topic``;
* a drive's velocity command: ``command`` with a string ``topic`` and ``linear`` and ``angular``
  (m/s, rad/s) to set, as :class:`sim_plugins.velocity_command.VelocityCommand` offers (a drive
  of any kind: differential, tricycle, Ackermann, omnidirectional ...).

The sensors a view feeds (:mod:`sim_server.live.sensors`), the drives the viewer drives
(:mod:`sim_server.live.teleop`) and the layout's topics (:mod:`sim_server.live.layout`) are found
here. Topics are absolute (one leading ``/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sim_server.core.format.entity_names import PRIVATE_MARK, SERVER_NODE_NAME

if TYPE_CHECKING:
    from sim_server.core.world import World

#: What :func:`sensor_kind` says a plugin is.
LASER, CAMERA, ODOMETRY = "laser", "camera", "odometry"


def absolute_topic(name: str) -> str:
    """``name`` with one leading ``/`` (the view's topics are absolute); a private ``~/x`` is the
    server node's, ``/sim_server/x``, as on ROS."""
    if name.startswith(PRIVATE_MARK):
        name = f"{SERVER_NODE_NAME}/{name[len(PRIVATE_MARK):]}"
    return "/" + name.lstrip("/")


def world_plugins(world: "World") -> list[Any]:
    """Every model plugin of ``world`` now, model by model."""
    return [plugin for model in world.models.values() for plugin in world.plugins.plugins_of(model)]


def sensor_kind(plugin: Any) -> str | None:
    """What sensor ``plugin`` is (:data:`LASER`, :data:`CAMERA` or :data:`ODOMETRY`, by what it
    offers), or None."""
    if hasattr(plugin, "scanner") and hasattr(plugin, "topic_name") and hasattr(plugin, "last_scan_ns"):
        return LASER
    if hasattr(plugin, "last_image") and hasattr(plugin, "topic_name") and hasattr(plugin, "frame_pose"):
        return CAMERA
    odometry = getattr(plugin, "odometry", None)
    if odometry is not None and getattr(odometry, "enabled", False) and hasattr(odometry, "odom_topic"):
        return ODOMETRY
    return None


def drive_command(plugin: Any) -> Any | None:
    """The velocity command of ``plugin`` when it is a drive (its ``command`` offers a string
    ``topic``, ``linear`` and ``angular``), else None."""
    command = getattr(plugin, "command", None)
    if command is None or not isinstance(getattr(command, "topic", None), str):
        return None
    return command if hasattr(command, "linear") and hasattr(command, "angular") else None


def drive_commands(world: "World") -> dict[str, list[Any]]:
    """The velocity commands of ``world``'s drives by absolute topic (drives may share one)."""
    found: dict[str, list[Any]] = {}
    for plugin in world_plugins(world):
        command = drive_command(plugin)
        if command is not None:
            found.setdefault(absolute_topic(command.topic), []).append(command)
    return found


def sensor_topics(world: "World", kind: str) -> list[str]:
    """The absolute topics of ``world``'s sensors of ``kind`` (sorted, each once): the scans'
    or pictures' topics, the odometry's noisy one."""
    topics = set()
    for plugin in world_plugins(world):
        if sensor_kind(plugin) == kind:
            topics.add(absolute_topic(plugin.odometry.odom_topic if kind == ODOMETRY else plugin.topic_name))
    return sorted(topics)
