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
from sim_server.core.limits import Range
from sim_server.core.world import DEFAULT_STEP_SIZE

DEFAULT_UPDATE_RATE = 200.0
DEFAULT_VIZ_PUB_RATE = 30.0


@dataclass(frozen=True)
class ServerParameters:
    """Validated server parameters.

    Attributes:
        world_path: world file to load.
        update_rate: steps per second of wall time (Hz); 0 = as fast as possible.
        step_size: sim time per physics step (s).
        show_viz: publish debug markers for RViz.
        viz_pub_rate: how often model markers are refreshed (Hz, wall time).
        state_pub_rate: how often model, link and joint states are published (Hz, sim time; 0 = off).
        seed: seed of every noise source (None: nondeterministic).
        start_paused: whether the world starts paused.
        enable_levels: stream levels as performers move (else every entity is loaded).
    """

    world_path: str
    update_rate: float
    step_size: float
    show_viz: bool
    viz_pub_rate: float
    state_pub_rate: float
    seed: int | None
    start_paused: bool
    enable_levels: bool


def _number_descriptor(description: str, constraints: str) -> ParameterDescriptor:
    return ParameterDescriptor(
        type=ParameterType.PARAMETER_DOUBLE,
        description=description,
        additional_constraints=constraints,
        read_only=True,
        # Accept 200 as well as 200.0 (or a wrong type) from the command line; checked below.
        dynamic_typing=True,
    )


def declare_server_parameters(node: Node) -> ServerParameters:
    """Declare the server's parameters on ``node`` and return their validated values.

    Raises:
        ConfigError: a value is missing, of the wrong type or out of range (one-line message).
    """
    node.declare_parameter(
        "world_path",
        "",
        ParameterDescriptor(
            type=ParameterType.PARAMETER_STRING,
            description="Path of the Flatland-format world YAML file to load (required).",
            read_only=True,
            dynamic_typing=True,
        ),
    )
    node.declare_parameter(
        "update_rate",
        DEFAULT_UPDATE_RATE,
        _number_descriptor(
            "Physics steps per second of wall time, in Hz. 0 runs as fast as possible.",
            "Hz, >= 0",
        ),
    )
    node.declare_parameter(
        "step_size",
        DEFAULT_STEP_SIZE,
        _number_descriptor("Sim time advanced by one physics step, in seconds.", "s, > 0"),
    )
    node.declare_parameter(
        "show_viz",
        True,
        ParameterDescriptor(
            type=ParameterType.PARAMETER_BOOL,
            description="Publish debug MarkerArrays of layers and models for RViz.",
            read_only=True,
            dynamic_typing=True,
        ),
    )
    node.declare_parameter(
        "viz_pub_rate",
        DEFAULT_VIZ_PUB_RATE,
        _number_descriptor("Refresh rate of the model debug markers, in Hz of wall time.", "Hz, > 0"),
    )
    node.declare_parameter(
        "state_pub_rate",
        0.0,
        _number_descriptor(
            "Rate of the model, link and joint state datapacks (~/model_states, ~/link_states, "
            "~/joint_states), in Hz of sim time. 0 publishes none.",
            "Hz, >= 0",
        ),
    )
    node.declare_parameter(
        "seed",
        -1,
        ParameterDescriptor(
            type=ParameterType.PARAMETER_INTEGER,
            description="Seed of every noise source (odometry, laser, plugins); -1 for a nondeterministic run.",
            additional_constraints=">= -1",
            read_only=True,
            dynamic_typing=True,
        ),
    )
    node.declare_parameter(
        "start_paused",
        False,
        ParameterDescriptor(
            type=ParameterType.PARAMETER_BOOL,
            description="Start with the world paused (then advance it with step_world or resume).",
            read_only=True,
            dynamic_typing=True,
        ),
    )
    node.declare_parameter(
        "enable_levels",
        False,
        ParameterDescriptor(
            type=ParameterType.PARAMETER_BOOL,
            description="Load and unload the world's levels (and streamed layer tiles) as performers move; "
            "without it every entity is loaded.",
            read_only=True,
            dynamic_typing=True,
        ),
    )
    world_path = node.get_parameter("world_path").value
    if not isinstance(world_path, str):
        raise ConfigError(f'parameter "world_path" must be the path of a world file, got {world_path!r}')
    if not world_path:
        raise ConfigError(
            'parameter "world_path" is required: pass --ros-args -p world_path:=/path/to/world.yaml'
        )
    params = ServerParameters(
        world_path=world_path,
        update_rate=_number(node, "update_rate", limits.RATE),
        step_size=_number(node, "step_size", limits.STEP_SIZE),
        show_viz=_boolean(node, "show_viz"),
        viz_pub_rate=_number(node, "viz_pub_rate", limits.POSITIVE_RATE),
        state_pub_rate=_number(node, "state_pub_rate", limits.RATE),
        seed=_seed(node),
        start_paused=_boolean(node, "start_paused"),
        enable_levels=_boolean(node, "enable_levels"),
    )
    return params


def _number(node: Node, name: str, within: Range) -> float:
    return within.check(node.get_parameter(name).value, f'parameter "{name}"')


def _boolean(node: Node, name: str) -> bool:
    value = node.get_parameter(name).value
    if not isinstance(value, bool):
        raise ConfigError(f'parameter "{name}" must be true or false, got {value!r}')
    return value


def _seed(node: Node) -> int | None:
    value = node.get_parameter("seed").value
    if isinstance(value, bool) or not isinstance(value, int) or not limits.SEED.contains(value):
        raise ConfigError(f'parameter "seed" must be an integer >= 0, or -1 for none, got {value!r}')
    return None if value == -1 else value
