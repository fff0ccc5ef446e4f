"""The server node's parameters as data: name, type, default, unit and description.

One table serves the node (which declares and validates them, :mod:`sim_server.ros.parameters`),
the launch file (one launch argument per parameter) and the parameter table of docs/ros.md. It
imports no ROS, so the launch file can read it wherever the package is importable.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim_server.core import limits
from sim_server.core.limits import Range
from sim_server.core.world import DEFAULT_STEP_SIZE

DEFAULT_UPDATE_RATE = 200.0
DEFAULT_VIZ_PUB_RATE = 30.0
#: /clock messages per wall second at most (Hz): sim-time followers get 1 ms resolution, and a
#: world stepping 20,000 times a second does not spend half its time publishing clocks.
DEFAULT_CLOCK_PUB_RATE = 1000.0
#: Lines of debug markers (m): 1.5 pixels at the zoom of the bundled demo view (config/sim.rviz:
#: 14.6 pixels per metre, the 65.5 m office in a 1400 x 900 window), where 0.05 m was 0.7 pixels
#: and broke up. sim_server.ros.rviz_config.line_width_for(scale) gives the width for other views.
DEFAULT_MARKER_LINE_WIDTH = 0.1
#: The ``seed`` parameter's value for no seed (ROS parameters have no None): a nondeterministic run.
NO_SEED = -1


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of the server node.

    Attributes:
        name: the parameter's (and the launch argument's) name.
        kind: its Python type: ``str``, ``float``, ``int`` or ``bool``.
        default: its value when not given (``""`` for the required world path).
        description: what it does, with its unit.
        constraints: the accepted values in short (ParameterDescriptor.additional_constraints).
        within: the numeric range checked at start-up (numbers only).
    """

    name: str
    kind: type
    default: str | float | int | bool
    description: str
    constraints: str = ""
    within: Range | None = None

    def launch_default(self) -> str:
        """The default as a launch argument string (``true``, ``200.0``, ...)."""
        if isinstance(self.default, bool):
            return "true" if self.default else "false"
        return str(self.default)


SERVER_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("world_path", str, "", "Path of the Flatland-format world YAML file to load (required)."),
    ParameterSpec(
        "update_rate",
        float,
        DEFAULT_UPDATE_RATE,
        "Physics steps per second of wall time, in Hz. 0 runs as fast as possible.",
        "Hz, >= 0",
        limits.RATE,
    ),
    ParameterSpec(
        "step_size", float, DEFAULT_STEP_SIZE, "Sim time advanced by one physics step, in seconds.", "s, > 0",
        limits.STEP_SIZE,
    ),
    ParameterSpec(
        "clock_pub_rate",
        float,
        DEFAULT_CLOCK_PUB_RATE,
        "Most /clock messages per second of wall time, in Hz; 0 publishes every step (as Flatland). "
        "A world running no faster than this publishes every step anyway, and the latest time is "
        "always published before services are answered and when the world pauses.",
        "Hz, >= 0",
        limits.RATE,
    ),
    ParameterSpec("show_viz", bool, True, "Publish debug MarkerArrays of layers and models for RViz."),
    ParameterSpec(
        "viz_pub_rate",
        float,
        DEFAULT_VIZ_PUB_RATE,
        "Refresh rate of the model debug markers, in Hz of wall time.",
        "Hz, > 0",
        limits.POSITIVE_RATE,
    ),
    ParameterSpec(
        "marker_line_width",
        float,
        DEFAULT_MARKER_LINE_WIDTH,
        "Width of the lines of the debug markers (layer edges, footprint outlines, joints), in metres.",
        "m, > 0",
        limits.MARKER_LINE_WIDTH,
    ),
    ParameterSpec(
        "state_pub_rate",
        float,
        0.0,
        "Rate of the model, link and joint state datapacks (~/model_states, ~/link_states, ~/joint_states), "
        "in Hz of sim time. 0 publishes none.",
        "Hz, >= 0",
        limits.RATE,
    ),
    ParameterSpec(
        "seed",
        int,
        NO_SEED,
        "Seed of every noise source (odometry, laser, plugins) and of the crowds; -1 for a nondeterministic run.",
        ">= 0, or -1 for none",
        Range(NO_SEED, limits.SEED.high),
    ),
    ParameterSpec(
        "start_paused", bool, False, "Start with the world paused (then advance it with step_world or resume)."
    ),
    ParameterSpec(
        "resource_paths",
        str,
        "",
        "Folders, separated by ':', that the standard interface searches (with their subfolders) for "
        "model files (get_spawnables) and world files (get_available_worlds), besides the world file's "
        "folder; relative ones against that folder.",
        "folders separated by ':'",
    ),
    ParameterSpec(
        "enable_levels",
        bool,
        False,
        "Load and unload the world's levels (and streamed layer tiles) as performers move; "
        "without it every entity is loaded.",
    ),
    ParameterSpec(
        "foxglove",
        bool,
        False,
        "Serve a live view over the Foxglove WebSocket protocol (walls, models, people, scans, "
        "transforms, sim time) on foxglove_address:foxglove_port.",
    ),
    ParameterSpec(
        "foxglove_address",
        str,
        "127.0.0.1",
        "Address the live view listens on: 127.0.0.1 serves this machine only; 0.0.0.0 every "
        "network the machine is on (the protocol has no authentication).",
        "an IP address or host name",
    ),
    ParameterSpec(
        "foxglove_port", int, 8765, "TCP port of the live view (0: any free port, logged).", "0 to 65535", limits.PORT
    ),
    ParameterSpec(
        "foxglove_control",
        bool,
        True,
        "Let live view clients act as the services do (spawn, delete, move, pause, resume, "
        "step_world, reset_world) and drive robots on their cmd_vel topics; false: they only watch.",
    ),
    ParameterSpec(
        "foxglove_rate",
        float,
        20.0,
        "Live view updates (scene, transforms, scans) per second of sim time, in Hz.",
        "Hz, > 0",
        limits.RATE,
    ),
    ParameterSpec(
        "foxglove_record",
        str,
        "",
        "MCAP file to write the live view's channels to ('' records nothing); replaced if it exists.",
        "a path ending in .mcap, or ''",
    ),
    ParameterSpec(
        "foxglove_record_encoding",
        str,
        "foxglove",
        "How the recording encodes messages: foxglove (as the live view sends them) or ros2 (ROS 2 "
        "messages for /tf, /clock and the scans, which ROS tools read; the scene stays foxglove.SceneUpdate).",
        "foxglove or ros2",
    ),
    ParameterSpec(
        "foxglove_record_max_mib",
        int,
        1024,
        "MiB of one file of the recording; then the next begins (run.1.mcap, run.2.mcap, ...).",
        "1 to 1048576",
        limits.Range(1, 2**20, "MiB"),
    ),
    ParameterSpec(
        "foxglove_record_keep", int, 10, "Files of the recording kept: the newest (older ones are deleted).",
        "1 to 100000", limits.MCAP_FILES_KEPT,
    ),
)

PARAMETERS_BY_NAME: dict[str, ParameterSpec] = {spec.name: spec for spec in SERVER_PARAMETERS}
