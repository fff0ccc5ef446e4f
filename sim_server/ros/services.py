"""The server's services: spawn, delete and move models; pause, resume and toggle the world.

Every handler answers: a request that cannot be carried out returns ``success = false`` with a
message (for instance ``model with name "X" does not exist``) and the server runs on. An
unexpected exception is logged with its traceback and answered the same way.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from rclpy.node import Node
from std_srvs.srv import Empty

from sim_msgs.srv import DeleteModel, MoveModel, SpawnModel
from sim_server.core.errors import RequestError, SimError, one_line
from sim_server.core.geometry import Pose2D
from sim_server.core.world import World
from sim_server.core.control import WorldSimulation
from sim_server.ros.conversions import pose2d_from_msg
from sim_server.ros.world_user import WorldUser

LOGGER = logging.getLogger("sim_server")
#: Characters of a requested name shown in log lines.
SHOWN_NAME_CHARS = 60


def quoted(name: str) -> str:
    """A requested name for a log line: quoted, shortened when long."""
    return f'"{name}"' if len(name) <= SHOWN_NAME_CHARS else f'"{name[:SHOWN_NAME_CHARS - 3]}..." ({len(name)} characters)'


def answer(response: Any, action: Callable[[], str], what: str) -> Any:
    """Run ``action``; fill ``response.success``/``message`` from its result or its error
    (``what`` names the request in the log, cut to one short line)."""
    what = one_line(what, 200)
    try:
        response.message = action()
        response.success = True
    except SimError as exc:
        response.success = False
        response.message = str(exc)
        LOGGER.warning("%s failed: %s", what, exc)
    except Exception as exc:  # a bug must not take the server down
        response.success = False
        response.message = f"internal error: {type(exc).__name__}: {exc}"
        LOGGER.exception("%s failed with an internal error", what)
    return response


class WorldServices(WorldUser):
    """Creates the world services on ``node`` (names relative to the node's namespace).

    Args:
        node: the server node.
        world: the world the services act on.
        on_pause_changed: called after pause/resume so the step loop can re-time itself.
    """

    def __init__(self, node: Node, world: World, on_pause_changed: Callable[[bool], None]) -> None:
        self._node = node
        self._world = world
        self._on_pause_changed = on_pause_changed
        self._requests = WorldSimulation(world)
        #: How many times sim time was paused or resumed (each request counts, a repeated one too):
        #: the standard interface tells a STOPPED simulation from a PAUSED one by it.
        self.pause_requests = 0
        self._services = [
            node.create_service(SpawnModel, "spawn_model", self._spawn_model),
            node.create_service(DeleteModel, "delete_model", self._delete_model),
            node.create_service(MoveModel, "move_model", self._move_model),
            node.create_service(Empty, "pause", self._pause),
            node.create_service(Empty, "resume", self._resume),
            node.create_service(Empty, "toggle_pause", self._toggle_pause),
        ]

    def use_world(self, world: World, loaded: bool = True) -> None:
        super().use_world(world, loaded)
        self._requests.use_world(world)

    def spawn_model(self, yaml_path: str, name: str, namespace: str, pose: Pose2D) -> str:
        """Add the model of ``yaml_path`` as ``name`` (SimError when it cannot be); returns
        what was done."""
        self.check_world_loaded()
        return self._requests.spawn_model(yaml_path, name, namespace, pose)

    def delete_model(self, name: str) -> str:
        """Remove the model or pedestrian ``name``."""
        return self._requests.delete_model(name)

    def move_model(self, name: str, pose: Pose2D) -> str:
        """Put the model ``name`` at ``pose``."""
        return self._requests.move_model(name, pose)

    def _spawn_model(self, request: SpawnModel.Request, response: SpawnModel.Response) -> SpawnModel.Response:
        return answer(
            response, lambda: self.spawn_model(request.yaml_path, request.name, request.ns, pose2d_from_msg(request.pose)),
            f"spawn_model {quoted(request.name)}",
        )

    def _delete_model(self, request: DeleteModel.Request, response: DeleteModel.Response) -> DeleteModel.Response:
        return answer(response, lambda: self.delete_model(request.name), f"delete_model {quoted(request.name)}")

    def _move_model(self, request: MoveModel.Request, response: MoveModel.Response) -> MoveModel.Response:
        return answer(
            response, lambda: self.move_model(request.name, pose2d_from_msg(request.pose)), f"move_model {quoted(request.name)}"
        )

    def set_paused(self, paused: bool) -> None:
        """Pause or resume sim time (RequestError for resuming when no world is loaded)."""
        if not paused:
            self.check_world_loaded()
        self._world.time.paused = paused
        self.pause_requests += 1
        self._on_pause_changed(paused)

    def _set_paused_or_warn(self, paused: bool, what: str) -> None:
        """set_paused for a std_srvs/Empty service, which cannot answer a refusal: it is logged."""
        try:
            self.set_paused(paused)
        except RequestError as exc:
            LOGGER.warning("%s: %s", what, exc)

    def _pause(self, request: Empty.Request, response: Empty.Response) -> Empty.Response:
        self.set_paused(True)
        return response

    def _resume(self, request: Empty.Request, response: Empty.Response) -> Empty.Response:
        self._set_paused_or_warn(False, "resume")
        return response

    def _toggle_pause(self, request: Empty.Request, response: Empty.Response) -> Empty.Response:
        self._set_paused_or_warn(not self._world.time.paused, "toggle_pause")
        return response
