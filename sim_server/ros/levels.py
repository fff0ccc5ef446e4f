"""Levels over ROS: the ``set_performer`` service and the latched ``~/levels`` topic.

``set_performer`` (sim_msgs/SetPerformer {name, size}) makes an existing model a performer
(a 2 x 2 m box when the size is zero); ``~/levels`` (sim_msgs/Levels, transient local) lists the
loaded levels and is republished whenever the set changes.
"""

from __future__ import annotations

from rclpy.node import Node

from sim_msgs.msg import Levels
from sim_msgs.srv import SetPerformer
from sim_server.core.world import World
from sim_server.ros.services import answer, quoted
from sim_server.ros.visualization import LATCHED_QOS
from sim_server.ros.world_user import WorldUser


class LevelsInterface(WorldUser):
    """The ROS side of level streaming.

    Args:
        node: the server node.
        world: its world (with its level manager).
    """

    def __init__(self, node: Node, world: World) -> None:
        self._node = node
        self._world = world
        self._services = [node.create_service(SetPerformer, "set_performer", self._set_performer)]
        self._publisher = node.create_publisher(Levels, "~/levels", LATCHED_QOS)
        world.levels.add_listener(self._on_levels_changed)
        self.publish()

    def publish(self) -> None:
        """Publish the loaded levels."""
        self._publisher.publish(Levels(loaded=self._world.levels.loaded_levels))

    def _on_levels_changed(self, loaded: list[str], unloaded: list[str]) -> None:
        self.publish()

    def _set_performer(self, request: SetPerformer.Request, response: SetPerformer.Response) -> SetPerformer.Response:
        def set_performer() -> str:
            performer = self._world.levels.add_performer(request.name, float(request.size.x), float(request.size.y))
            return f'model "{performer.model}" is a performer of {performer.size_x:g} x {performer.size_y:g} m'

        return answer(response, set_performer, f"set_performer {quoted(request.name)}")

    def use_world(self, world: World, loaded: bool = True) -> None:
        """Follow the level manager of ``world`` from now on."""
        self.close()
        super().use_world(world, loaded)
        world.levels.add_listener(self._on_levels_changed)
        self.publish()

    def close(self) -> None:
        """Stop following the level manager."""
        self._world.levels.remove_listener(self._on_levels_changed)
