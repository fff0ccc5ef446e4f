"""Entry point: ``python -m sim_server --ros-args -p world_path:=world.yaml`` (or ``ros2 run sim_server sim_server``).

Exit codes: 0 after a normal shutdown (Ctrl-C, SIGTERM), 1 when the parameters or the world are
invalid (one line on stderr names the file, entry and key at fault).

As the world loads, the ray caster of the lasers is compiled, or loaded from numba's on-disk
cache (:func:`sim_server.core.sensing.raycast.warm_up`; logged when it takes over a second, as on the
first run after an install), before the first step: no step compiles it, not the first scan of
a world's laser, nor that of a laser spawned later.

Signals: SIGINT and SIGTERM are handled here, not by rclpy. While Python imports the server they
end the process at once (exit 0); while the ray caster compiles or the world loads they abort the
start; once the loop runs they ask it to stop at the end of its tick.
Then plugins, the world and the node's publishers are destroyed while the ROS context is still
valid, and only then is the context shut down, so nothing touches rclpy after it is gone.
From then on stop signals are ignored, until the process has ended (:func:`main` returns with
them ignored): more Ctrl-C during the teardown change nothing.
SIGUSR1 prints every thread's stack to stderr and the server goes on (to see where it is busy).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
from types import FrameType

EXIT_OK = 0
EXIT_CONFIG_ERROR = 1
#: The signals that end the server cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    """A stop signal while the process still imports rclpy, numba and the server (a second or
    two): nothing runs yet, so end now, without a KeyboardInterrupt traceback."""
    os._exit(EXIT_OK)


if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "sim_server":  # not when imported by tests
    for _signum in STOP_SIGNALS:
        signal.signal(_signum, _exit_at_once)
    faulthandler.register(signal.SIGUSR1, all_threads=True)

import rclpy  # noqa: E402 (after the handlers above)
from rclpy.executors import ExternalShutdownException  # noqa: E402
from rclpy.signals import SignalHandlerOptions  # noqa: E402

from sim_server.core.errors import SimError  # noqa: E402


class _Interrupted(BaseException):
    """A stop signal arrived before the loop ran (while the world was loading)."""


def main(argv: list[str] | None = None) -> int:
    """Run the simulation server until shutdown; returns the process exit code."""
    from sim_server.core.sensing.raycast import warm_up
    from sim_server.ros.server_node import SimServerNode

    args = sys.argv if argv is None else argv
    running: list[SimServerNode] = []  # the node, once its loop may be asked to stop
    stopping: list[bool] = []  # set once the server is on its way out: later signals change nothing
    requested: list[int] = []  # every stop signal that counted

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stopping:
            return
        requested.append(signum)
        if running:
            running[0].request_stop()
        else:
            stopping.append(True)
            raise _Interrupted()

    def on_unraisable(unraisable) -> None:
        if not isinstance(unraisable.exc_value, _Interrupted):  # ours is handled: see `requested`
            sys.__unraisablehook__(unraisable)

    previous_hook, sys.unraisablehook = sys.unraisablehook, on_unraisable
    for signum in STOP_SIGNALS:
        signal.signal(signum, on_signal)
    node = None
    try:
        try:
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        except Exception as exc:  # malformed --ros-args: say so in one line
            print(f"sim_server: error: invalid ROS arguments: {exc}", file=sys.stderr)
            return EXIT_CONFIG_ERROR
        node = SimServerNode()
        logger = node.get_logger()
        # Still loading (a stop signal aborts it): the world's lasers compiled the ray caster
        # already; without any, it compiles now, for lasers spawned later.
        warm_up(logger.info)
        running.append(node)  # from here a stop signal ends the loop, which returns at once if not yet running
        if requested:  # a signal while loading whose _Interrupted was lost: raised inside a C
            node.request_stop()  # callback (numba writing its cache), which Python drops
        logger.info(
            f'loaded world "{node.params.world_path}": {len(node.world.layers)} layer(s), '
            f"{len(node.world.models)} model(s); step {node.params.step_size} s, "
            f"update rate {node.params.update_rate or 'as fast as possible'}"
            + ("" if not node.params.update_rate else " Hz")
        )
        logger.info("services: " + ", ".join(node.service_names))
        node.run()
    except SimError as exc:
        stopping.append(True)
        print(f"sim_server: error: {exc}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    except (_Interrupted, ExternalShutdownException):
        pass
    finally:
        stopping.append(True)  # a signal while the handlers are put back must not raise (ros2 launch sends two)
        for signum in STOP_SIGNALS:  # shutting down already: a second Ctrl-C changes nothing
            signal.signal(signum, signal.SIG_IGN)
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        # The stop signals stay ignored: the process ends once this returns, and Python's
        # teardown resets a handler written in Python to the default action, so a late Ctrl-C
        # (ros2 launch sends a second) would kill the process with SIGINT's status while the
        # interpreter and the DDS libraries tear down. Ignored signals stay ignored.
        sys.unraisablehook = previous_hook
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
