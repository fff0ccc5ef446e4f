"""Entry point: ``python -m sim_server --ros-args -p world_path:=world.yaml`` (or ``ros2 run sim_server sim_server``).

Exit codes: 0 after a normal shutdown (Ctrl-C, SIGTERM), 1 when the parameters or the world are
invalid (one line on stderr names the file, entry and key at fault) or when the server failed for
a reason no check foresaw (one line names the error; the traceback is logged at debug level:
``--ros-args --log-level debug``).

As the world loads, the ray caster of the lasers is compiled, or loaded from numba's on-disk
cache (:func:`sim_server.core.sensing.raycast.warm_up`; logged when it takes over a second, as on the
first run after an install), before the first step: no step compiles it, not the first scan of
a world's laser, nor that of a laser spawned later.

Signals (:mod:`sim_server.stop_signals`, shared with ``python -m sim_server.record`` and
``python -m sim_server.serve``): SIGINT and SIGTERM are handled here, not by rclpy. While Python
imports the server they end the process at once (exit 0); while the ray caster compiles or the
world loads they abort the start; once the loop runs they ask it to stop at the end of its tick.
Then plugins, the world and the node's publishers are destroyed while the ROS context is still
valid, and only then is the context shut down, so nothing touches rclpy after it is gone.
From then on stop signals change nothing (more Ctrl-C during the teardown, as ``ros2 launch``
sends, included); run from the command line, :func:`main` returns with them ignored until the
process has ended, and called with ``argv`` from a program, it puts that program's handlers
back.
SIGUSR1 prints every thread's stack to stderr and the server goes on (to see where it is busy).
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys

from sim_server.stop_signals import Interrupted, StopSignals, exit_at_once_while_starting

EXIT_OK = 0
EXIT_CONFIG_ERROR = 1
#: The exit code of a server that failed for a reason no check foresaw (a bug): one line says which.
EXIT_FAILED = 1

if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "sim_server":  # not when imported by tests
    exit_at_once_while_starting()  # while Python imports rclpy, numba and the server
    faulthandler.register(signal.SIGUSR1, all_threads=True)

import rclpy  # noqa: E402 (after the handlers above)
from rclpy.executors import ExternalShutdownException  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402

from sim_server.core.errors import SimError, one_line  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the simulation server until shutdown; returns the process exit code."""
    from sim_server.core.sensing.raycast import warm_up
    from sim_server.node_view import live_view_of
    from sim_server.ros.server_node import SimServerNode

    args = sys.argv if argv is None else argv
    node = None
    with StopSignals(command_line=argv is None) as signals:
        try:
            try:
                rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
            except Exception as exc:  # malformed --ros-args: say so in one line
                print(f"sim_server: error: invalid ROS arguments: {exc}", file=sys.stderr)
                return EXIT_CONFIG_ERROR
            with signals.interrupting():  # loading: a stop signal aborts the start
                node = SimServerNode(live_view=live_view_of)
                logger = node.get_logger()
                # The world's lasers compiled the ray caster already; without any, it compiles
                # now, for lasers spawned later.
                warm_up(logger.info)
            signals.on_stop = node.request_stop  # from here a stop signal ends the loop at its tick
            logger.info(
                f'loaded world "{node.params.world_path}": {len(node.world.layers)} layer(s), '
                f"{len(node.world.models)} model(s); step {node.params.step_size} s, "
                f"update rate {node.params.update_rate or 'as fast as possible'}"
                + ("" if not node.params.update_rate else " Hz")
            )
            logger.info("services: " + ", ".join(node.service_names))
            node.run()
        except SimError as exc:
            signals.end()
            print(f"sim_server: error: {exc}", file=sys.stderr)
            return EXIT_CONFIG_ERROR
        except (Interrupted, ExternalShutdownException):
            pass
        except Exception as exc:  # noqa: BLE001 - a bug the checks missed: one line, the traceback at debug level
            signals.end()
            logging.getLogger("sim_server").debug("the server failed", exc_info=True)
            print(f"sim_server: error: the server failed: {type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            signals.end()  # on the way out: a second Ctrl-C changes nothing (ros2 launch sends two)
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
