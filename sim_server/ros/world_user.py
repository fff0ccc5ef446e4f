"""What serves a world and can be handed another: the standard interface's load_world replaces
the server's world while its services stay."""

from __future__ import annotations

from sim_server.core.world import World


class WorldUser:
    """A part of the node that acts on ``self._world``."""

    _world: World

    def use_world(self, world: World) -> None:
        """Act on ``world`` from now on (it replaced the world before, which is closed)."""
        self._world = world
