"""Entry point: ``python -m sim_server --ros-args -p world_path:=world.yaml`` (or ``ros2 run sim_server sim_server``).

Exit codes: 0 after a normal shutdown (Ctrl-C), 1 when the parameters or the world are invalid
(one line on stderr names the file, entry and key at fault).
"""

from __future__ import annotations

import sys

import rclpy
from rclpy.executors import ExternalShutdownException

from sim_server.core.errors import SimError

EXIT_OK = 0
EXIT_CONFIG_ERROR = 1


def main(argv: list[str] | None = None) -> int:
    """Run the simulation server until shutdown; returns the process exit code."""
    from sim_server.ros.server_node import SimServerNode

    args = sys.argv if argv is None else argv
    try:
        rclpy.init(args=args)
    except Exception as exc:  # malformed --ros-args: say so in one line
        print(f"sim_server: error: invalid ROS arguments: {exc}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    node = None
    try:
        node = SimServerNode()
        logger = node.get_logger()
        logger.info(
            f'loaded world "{node.params.world_path}": {len(node.world.layers)} layer(s), '
            f"{len(node.world.models)} model(s); step {node.params.step_size} s, "
            f"update rate {node.params.update_rate or 'as fast as possible'}"
            + ("" if not node.params.update_rate else " Hz")
        )
        logger.info("services: " + ", ".join(node.service_names))
        node.run()
    except SimError as exc:
        print(f"sim_server: error: {exc}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
