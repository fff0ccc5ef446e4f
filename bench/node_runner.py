"""Timing the ROS server node: load a world, optionally wait for listeners, run as fast as possible."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from sim_server.core.world import World


def run_node(
    world_path: Path,
    seconds: float,
    step_size: float,
    listened: tuple[str, ...] = (),
    prepare: Callable[[World], None] | None = None,
) -> dict[str, float]:
    """Run the node at update_rate 0 for ``seconds`` of wall time and report its speed.

    Args:
        world_path: the world file.
        seconds: wall seconds to run after warming up.
        step_size: physics step (s).
        listened: ``topic, type, topic, type, ...`` a separate listener process subscribes to
            before timing starts (see :mod:`bench.listener`).
        prepare: called with the world before timing (to command robots, say).

    Returns:
        rtf, ms_per_step, steps_per_s, startup_s (node creation with world loading) and robots.
    """
    import rclpy
    from rclpy.context import Context
    from rclpy.parameter import Parameter

    from sim_server.ros.server_node import SimServerNode

    listener = subprocess.Popen([sys.executable, "-m", "bench.listener", *listened]) if listened else None
    context = Context()
    rclpy.init(context=context)
    try:
        started = time.perf_counter()
        node = SimServerNode(
            context=context,
            parameter_overrides=[
                Parameter("world_path", value=str(world_path)),
                Parameter("update_rate", value=0.0),
                Parameter("step_size", value=step_size),
                Parameter("show_viz", value=False),
            ],
        )
        startup = time.perf_counter() - started
        if listened:
            topics = set(listened[0::2])
            wait_until = time.monotonic() + 30.0
            node.run(stop=lambda: time.monotonic() > wait_until or all(node.count_subscribers(t) > 0 for t in topics))
        if prepare is not None:
            prepare(node.world)
        node.world.step(10)
        first, started = node.world.time.iterations, time.perf_counter()
        deadline = time.monotonic() + seconds
        node.run(stop=lambda: time.monotonic() > deadline)
        elapsed = time.perf_counter() - started
        steps = node.world.time.iterations - first
        robots = len(node.world.models)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        if listener is not None:
            listener.send_signal(signal.SIGINT)  # rclpy's own handler shuts it down cleanly
            try:
                listener.wait(timeout=10)
            except subprocess.TimeoutExpired:
                listener.kill()
    return {
        "rtf": steps * step_size / elapsed,
        "ms_per_step": 1e3 * elapsed / steps,
        "steps_per_s": steps / elapsed,
        "startup_s": startup,
        "robots": robots,
    }
