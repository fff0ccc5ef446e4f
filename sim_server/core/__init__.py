"""The pure simulation core: no rclpy imports anywhere below this package."""

from sim_server.core.errors import ConfigError, EntityError, SimError
from sim_server.core.geometry import Pose2D
from sim_server.core.world import World

__all__ = ["ConfigError", "EntityError", "Pose2D", "SimError", "World"]
