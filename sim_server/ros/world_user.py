"""A part of the node that offers services on a world and can be handed another: the standard
interface's load_world replaces the server's world while its services stay, and unload_world
leaves an empty stand-in (no world is loaded: nothing may be spawned or stepped)."""

from __future__ import annotations

from typing import Any

from rclpy.node import Node

from sim_server.core.errors import RequestError
from sim_server.core.world import World

#: Why nothing can be spawned or stepped after unload_world.
NO_WORLD = "no world is loaded: load one with load_world"


class WorldUser:
    """A part of the node that acts on ``self._world`` through the services in
    ``self._services``, made on ``self._node``."""

    _node: Node
    _services: list[Any]
    _world: World
    #: Whether ``_world`` is a loaded world (else the empty stand-in of unload_world).
    _world_loaded = True

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Act on ``world`` from now on (it replaced the world before, which is closed);
        ``loaded`` is false for the empty stand-in of unload_world."""
        self._world = world
        self._world_loaded = loaded

    def check_world_loaded(self) -> None:
        """RequestError when no world is loaded."""
        if not self._world_loaded:
            raise RequestError(NO_WORLD)

    @property
    def names(self) -> list[str]:
        """Fully qualified names of the services offered."""
        return [self._node.resolve_service_name(service.srv_name) for service in self._services]
