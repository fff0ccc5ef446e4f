"""The server node's live view: made where the node's ``foxglove*`` parameters ask for one
(:func:`live_view_of`, which ``python -m sim_server`` gives the node), its clients' requests carried
out as the node's services carry them out (:class:`NodeSimulation`). This module composes the ROS
layer and the live view, neither of which imports the other.

What the live view's clients may ask of the ROS node is the same as its services:

Spawn, delete and move go through :class:`~sim_server.ros.services.WorldServices` (so nothing
is spawned while no world is loaded), pause and resume through its ``set_paused`` (the log line,
the loop re-timed, the standard interface's state), steps through the node's step queue (in
slices, between the serving of callbacks, as ``step_world``) and reset through
:class:`~sim_server.ros.world_control.WorldControl` (``/clock`` published again). Called on the
node's thread, between steps (:meth:`sim_server.live.view.LiveView.serve`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sim_server.core.control import Reply, answering, world_folders
from sim_server.core.errors import ConfigError
from sim_server.core.geometry import Pose2D
from sim_server.core.world import World
from sim_server.ros.parameters import ServerParameters
from sim_server.ros.services import WorldServices
from sim_server.ros.standard_interface.resources import sources
from sim_server.ros.world_control import WorldControl

if TYPE_CHECKING:
    from sim_server.live import LiveView
    from sim_server.ros.server_node import SimServerNode


class ServerParts(Protocol):
    """What of the server node the view's requests use."""

    world: World
    params: ServerParameters
    world_services: WorldServices
    world_control: WorldControl

    @property
    def paused(self) -> bool: ...


class NodeSimulation:
    """:class:`~sim_server.core.control.SimulationControl` of the server node."""

    def __init__(self, node: ServerParts) -> None:
        self._node = node

    @property
    def paused(self) -> bool:
        return self._node.paused

    def spawn_model(self, yaml_path: str, name: str, namespace: str, pose: Pose2D) -> str:
        return self._node.world_services.spawn_model(yaml_path, name, namespace, pose)

    def delete_model(self, name: str) -> str:
        return self._node.world_services.delete_model(name)

    def move_model(self, name: str, pose: Pose2D) -> str:
        return self._node.world_services.move_model(name, pose)

    def set_paused(self, paused: bool) -> str:
        self._node.world_services.set_paused(paused)
        return "paused" if paused else "resumed"

    def step(self, steps: int, reply: Reply) -> None:
        control = self._node.world_control
        control.check_steps(steps)
        control.queue(answering(steps, reply, lambda: self._node.world.time.sim_time))

    def spawn_folders(self) -> list[Path]:
        node = self._node
        extra = sources(node.world.spec.path.parent, node.params.resource_paths, [], "folders").folders
        return sorted(set(world_folders(node.world)) | {folder.resolve() for folder in extra})

    def model_path(self, yaml_path: str) -> Path:
        return self._node.world.model_path(yaml_path)

    def reset(self) -> str:
        self._node.world_control.reset()
        return "reset to the loaded state"


def live_view_of(node: "SimServerNode") -> LiveView | None:
    """The live view ``node``'s foxglove parameters ask for (None when they ask for none): a
    Foxglove server and/or an MCAP recording of its world, its control through the node.

    Raises:
        ConfigError: an address, port or file it cannot use (one line).
    """
    params = node.params
    if not params.foxglove and not params.foxglove_record:
        return None
    from sim_server.live import LiveView  # the Foxglove SDK (6 MiB resident) only when asked for

    try:
        view = LiveView(
            node.world, host=params.foxglove_address, port=params.foxglove_port if params.foxglove else None,
            rate=params.foxglove_rate, record=params.foxglove_record or None,
            record_max_bytes=params.foxglove_record_max_mib * 2**20, record_keep=params.foxglove_record_keep,
            control=NodeSimulation(node) if params.foxglove_control else False,
            record_encoding=params.foxglove_record_encoding,
        )
    except ValueError as error:
        raise ConfigError(f"live view (parameters foxglove_*): {error}") from None
    try:
        if view.url is not None:
            node.get_logger().info(f"live view: in Foxglove, open connection {view.url} (listening on {params.foxglove_address})")
        if params.foxglove_record:
            node.get_logger().info(f"live view: recording to {params.foxglove_record}")
    except BaseException:  # a stop signal meanwhile: the node never gets the view, so it is closed here
        view.close()
        raise
    return view
