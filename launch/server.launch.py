"""Start the sim_server node on a world file, optionally with RViz.

    ros2 launch sim_server server.launch.py world_path:=/path/to/world.yaml use_rviz:=true
    ros2 launch sim_server server.launch.py --show-args      # every argument, with its default

Every parameter of the node is a launch argument of the same name (see the parameter table of
docs/ros.md; the list comes from ``sim_server.ros.parameter_spec``), plus:

    use_rviz: also start rviz2 (true/false).
    rviz_config: the .rviz file to open; empty (default) generates one for the chosen world
        (its layers, models, TF, a LaserScan display per laser, a view that fits the map).

Values are handed to the node as typed by the user (YAML-parsed), so the node's own checks
name any wrong value. The node stopping ends the launch: with exit code 0 after Ctrl-C, 1 after an
error (in the world file, say; the node prints it in one line). Closing RViz does not stop the
simulation.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

from ament_index_python.packages import PackageNotFoundError, get_package_prefix, get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler, Shutdown
from launch.event_handlers import OnProcessExit
from launch.events.process import ProcessExited
from launch.substitutions import LaunchConfiguration, TextSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from sim_server.ros.parameter_spec import PARAMETERS_BY_NAME, SERVER_PARAMETERS

PACKAGE = "sim_server"
NODE_NAME = "sim_server"
TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off", "")


class LaunchArgumentError(RuntimeError):
    """A launch argument that cannot be used (launch prints the message as one line)."""


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    defaults = {
        "world_path": os.path.join(share, "config", "worlds", "demo", "world.yaml"),
        "marker_line_width": "",  # the node's default, or one that suits the generated RViz view
    }
    descriptions = {
        "marker_line_width": PARAMETERS_BY_NAME["marker_line_width"].description
        + f" Empty: {PARAMETERS_BY_NAME['marker_line_width'].launch_default()}, or with use_rviz a width "
        "that the generated view draws two pixels wide.",
    }
    declared = [
        DeclareLaunchArgument(
            spec.name,
            default_value=defaults.get(spec.name, spec.launch_default()),
            description=descriptions.get(spec.name, spec.description),
        )
        for spec in SERVER_PARAMETERS
    ]
    declared += [
        DeclareLaunchArgument("use_rviz", default_value="false", description="Also start rviz2 (true/false)."),
        DeclareLaunchArgument(
            "rviz_config",
            default_value="",
            description="The .rviz file RViz opens; empty generates one for the world "
            "(layers, models, TF, its lasers, a view that fits its map).",
        ),
    ]
    return LaunchDescription(declared + [OpaqueFunction(function=_start_nodes)])


def _start_nodes(context: LaunchContext) -> list:
    """The server node, and RViz when asked (checked before anything starts)."""
    use_rviz = _flag(LaunchConfiguration("use_rviz").perform(context), "use_rviz")
    world_path = LaunchConfiguration("world_path").perform(context)
    rviz = None
    given = {spec.name: LaunchConfiguration(spec.name).perform(context) for spec in SERVER_PARAMETERS}
    if use_rviz:
        try:
            get_package_prefix("rviz2")
        except PackageNotFoundError:
            raise LaunchArgumentError(
                "use_rviz:=true, but rviz2 is not installed here (no package 'rviz2' on AMENT_PREFIX_PATH): "
                "nothing was started; install rviz2 or leave out use_rviz"
            ) from None
        rviz = Node(
            package="rviz2",
            executable="rviz2",
            name="rviz",
            arguments=["-d", _rviz_config(LaunchConfiguration("rviz_config").perform(context), world_path, given)],
            parameters=[{"use_sim_time": True}],
            output="screen",
        )
    parameters = {
        spec.name: ParameterValue(given[spec.name], value_type=str)
        if spec.kind is str
        # A substitution's value is YAML-parsed by launch_ros (a plain string would stay one):
        # the node checks the types and ranges.
        else TextSubstitution(text=given[spec.name])
        for spec in SERVER_PARAMETERS
        if given[spec.name] != ""  # left empty: the node's default
    }
    server = Node(
        package=PACKAGE,
        executable="sim_server",
        name=NODE_NAME,
        output="screen",
        emulate_tty=True,
        parameters=[parameters],
    )
    ended = RegisterEventHandler(OnProcessExit(target_action=server, on_exit=_server_ended))
    return [ended, server] + ([rviz] if rviz is not None else [])


def _server_ended(event: ProcessExited, context: LaunchContext) -> list:
    """End the launch with the server; with exit code 1 when the server failed (it said why)."""
    if event.returncode is not None and event.returncode > 0:
        raise LaunchArgumentError(f"sim_server failed (exit code {event.returncode}): see its error above")
    return [Shutdown(reason="sim_server stopped")]


def _flag(value: str, name: str) -> bool:
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise LaunchArgumentError(f"launch argument {name} must be true or false, got {value!r}")


def _rviz_config(given: str, world_path: str, arguments: dict[str, str]) -> str:
    """The .rviz file to open: the given one, else one generated for the world (cached by path).

    With no ``marker_line_width`` given, sets it in ``arguments`` to the width the generated
    view draws two pixels wide (a 300 m tunnel needs wider lines than an office).
    """
    if given:
        if not os.path.isfile(given):
            raise LaunchArgumentError(f"rviz_config: no such file {given!r}")
        return given
    from sim_server.core.errors import SimError
    from sim_server.ros.rviz_config import write_rviz_config

    world = os.path.abspath(world_path)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(cache, "sim_server", "rviz")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:  # no writable cache folder
        folder = tempfile.mkdtemp(prefix="sim_server_rviz_")
    name = hashlib.sha256(world.encode()).hexdigest()[:16]
    out = os.path.join(folder, f"{os.path.splitext(os.path.basename(world))[0]}-{name}.rviz")
    try:
        readable = write_rviz_config(world, out, node_name=NODE_NAME)
    except (SimError, OSError) as error:
        raise LaunchArgumentError(str(error)) from None
    if arguments["marker_line_width"] == "":
        arguments["marker_line_width"] = f"{readable:.4g}"
    return out
