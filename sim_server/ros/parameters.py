"""The server node's ROS parameters: declared with descriptions and units, read and validated.

Every parameter is declared with dynamic typing, so a value of the wrong type on the command
line (``-p seed:=abc``) reaches the checks below and gets a one-line error naming the parameter,
instead of rclpy's exception at declaration. Numbers are checked against
:mod:`sim_server.core.limits`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.ros.parameter_spec import NO_SEED, PARAMETERS_BY_NAME, SERVER_PARAMETERS, ParameterSpec

_PARAMETER_TYPES = {
    str: ParameterType.PARAMETER_STRING,
    float: ParameterType.PARAMETER_DOUBLE,
    int: ParameterType.PARAMETER_INTEGER,
    bool: ParameterType.PARAMETER_BOOL,
}


@dataclass(frozen=True)
class ServerParameters:
    """Validated server parameters (see :data:`sim_server.ros.parameter_spec.SERVER_PARAMETERS`).

    Attributes:
        world_path: world file to load.
        update_rate: steps per second of wall time (Hz); 0 = as fast as possible.
        step_size: sim time per physics step (s).
        clock_pub_rate: most /clock messages per wall second (Hz); 0 = every step.
        show_viz: publish debug markers for RViz.
        viz_pub_rate: how often model markers are refreshed (Hz, wall time).
        marker_line_width: width of the debug markers' lines (m).
        state_pub_rate: how often model, link and joint states are published (Hz, sim time; 0 = off).
        seed: seed of every noise source (None: nondeterministic).
        start_paused: whether the world starts paused.
        enable_levels: stream levels as performers move (else every entity is loaded).
        resource_paths: folders (separated by ':') searched for model and world files.
        foxglove: serve the live view (:class:`sim_server.live.LiveView`).
        foxglove_address, foxglove_port: where it listens.
        foxglove_control: whether its clients may act (services, cmd_vel) or only watch.
        foxglove_rate: its updates per second of sim time (Hz).
        foxglove_record: an MCAP file to write its channels to ("" for none).
        foxglove_record_encoding: "foxglove" or "ros2" (ROS 2 messages where ROS has a type).
        foxglove_record_max_mib, foxglove_record_keep: the size of one file of the recording
            (MiB) and the newest files kept.
    """

    world_path: str
    update_rate: float
    step_size: float
    clock_pub_rate: float
    show_viz: bool
    viz_pub_rate: float
    marker_line_width: float
    state_pub_rate: float
    seed: int | None
    start_paused: bool
    enable_levels: bool
    resource_paths: str
    foxglove: bool = False
    foxglove_address: str = "127.0.0.1"
    foxglove_port: int = 8765
    foxglove_control: bool = True
    foxglove_rate: float = 20.0
    foxglove_record: str = ""
    foxglove_record_encoding: str = "foxglove"
    foxglove_record_max_mib: int = 1024
    foxglove_record_keep: int = 10


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    return ParameterDescriptor(
        type=_PARAMETER_TYPES[spec.kind],
        description=spec.description,
        additional_constraints=spec.constraints,
        read_only=True,
        # Accept 200 as well as 200.0 (or a wrong type) from the command line; checked below.
        dynamic_typing=True,
    )


def declare_server_parameters(node: Node) -> ServerParameters:
    """Declare the server's parameters on ``node`` and return their validated values.

    Raises:
        ConfigError: a value is missing, of the wrong type or out of range (one-line message).
    """
    for spec in SERVER_PARAMETERS:
        node.declare_parameter(spec.name, spec.default, _descriptor(spec))
    world_path = node.get_parameter("world_path").value
    if not isinstance(world_path, str):
        raise ConfigError(f'parameter "world_path" must be the path of a world file, got {world_path!r}')
    if not world_path:
        raise ConfigError(
            'parameter "world_path" is required: pass --ros-args -p world_path:=/path/to/world.yaml'
        )
    params = ServerParameters(
        world_path=world_path,
        update_rate=_number(node, "update_rate"),
        step_size=_number(node, "step_size"),
        clock_pub_rate=_number(node, "clock_pub_rate"),
        show_viz=_boolean(node, "show_viz"),
        viz_pub_rate=_number(node, "viz_pub_rate"),
        marker_line_width=_number(node, "marker_line_width"),
        state_pub_rate=_number(node, "state_pub_rate"),
        seed=_seed(node),
        start_paused=_boolean(node, "start_paused"),
        enable_levels=_boolean(node, "enable_levels"),
        resource_paths=_text(node, "resource_paths"),
        foxglove=_boolean(node, "foxglove"),
        foxglove_address=_text(node, "foxglove_address"),
        foxglove_port=_integer(node, "foxglove_port", " (0: any free port)"),
        foxglove_control=_boolean(node, "foxglove_control"),
        foxglove_rate=_number(node, "foxglove_rate"),
        foxglove_record=_text(node, "foxglove_record"),
        foxglove_record_encoding=_text(node, "foxglove_record_encoding"),
        foxglove_record_max_mib=_integer(node, "foxglove_record_max_mib"),
        foxglove_record_keep=_integer(node, "foxglove_record_keep"),
    )
    if params.foxglove_rate <= 0.0:
        raise ConfigError(f'parameter "foxglove_rate" must be above 0 Hz, got {params.foxglove_rate!r}')
    return params


def _number(node: Node, name: str) -> float:
    within = PARAMETERS_BY_NAME[name].within
    assert within is not None, f"parameter {name} has no range"
    return within.check(node.get_parameter(name).value, f'parameter "{name}"')


def _text(node: Node, name: str) -> str:
    value = node.get_parameter(name).value
    if not isinstance(value, str):
        raise ConfigError(f'parameter "{name}" must be a string, got {value!r}')
    if "\0" in value:
        raise ConfigError(f'parameter "{name}" must not contain a NUL character')
    return value


def _boolean(node: Node, name: str) -> bool:
    value = node.get_parameter(name).value
    if not isinstance(value, bool):
        raise ConfigError(f'parameter "{name}" must be true or false, got {value!r}')
    return value


def _integer(node: Node, name: str, hint: str = "") -> int:
    """A whole-number parameter within its range (``hint`` said after the range)."""
    value = node.get_parameter(name).value
    within = PARAMETERS_BY_NAME[name].within
    assert within is not None, f"parameter {name} has no range"
    if isinstance(value, bool) or not isinstance(value, int) or not within.contains(value):
        unit = f" {within.unit}" if within.unit else ""
        raise ConfigError(
            f'parameter "{name}" must be a whole number from {int(within.low)} to {int(within.high)}{unit}{hint}, '
            f"got {value!r}"
        )
    return value


def _seed(node: Node) -> int | None:
    value = node.get_parameter("seed").value
    if isinstance(value, int) and not isinstance(value, bool) and value == NO_SEED:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not limits.SEED.contains(value):
        raise ConfigError(
            f'parameter "seed" must be a whole number from 0 to {int(limits.SEED.high)}, or {NO_SEED} for none, got {value!r}'
        )
    return value
