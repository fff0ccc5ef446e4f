"""Where a step's time goes in the office world, against the floor it cannot go below.

The office world with its laser idle (Flatland's conestogo office: the cleaner, the walker and
the contact sensor), run by the ROS node at update_rate 0 with /clock subscribed by another
process, as ``make bench-reference``'s ``office`` scenario runs it. In the same run:

* **the floor**: a bare pybox2d ``World.Step`` of the same bodies (the world loaded, nothing but
  Box2D's step called) and one ``/clock`` publish per step (pre-serialised, as the node
  publishes it) to a subscribed listener: what any Python simulator built on pybox2d and
  rclpy pays per step;
* **the parts** of the node's step: each before- and after-step hook and each plugin hook (a
  batch of plugins counts as one), timed in a second node run (the timers add about a
  microsecond to each part); what the hooks leave is Box2D's step and the step loop.

Units: microseconds per step (us) and x real time for 5 ms steps.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from bench.node_runner import run_node
from bench.part_timer import PartTimer, hook_name
from sim_server.core.world import World

STEP_SIZE = 0.005
OFFICE_WORLD = Path(__file__).resolve().parent.parent / "config" / "worlds" / "demo" / "world.yaml"
LISTENED = ("/clock", "rosgraph_msgs/msg/Clock")
#: Steps of the floor between clock readings.
FLOOR_BATCH = 1000
#: Longest wait for the listener to subscribe (s).
LISTENER_WAIT = 30.0
#: The parts of a step that are not hooks.
BOX2D = "Box2D's step"
LOOP = "the step loop (the rest)"


def floor(world_path: Path, seconds: float) -> dict[str, float]:
    """The floor of ``world_path``'s step: Box2D's step of its bodies alone, then with a /clock
    publish per step to a subscribed listener (us per step each)."""
    import rclpy
    from rclpy.context import Context
    from rosgraph_msgs.msg import Clock

    from sim_server.ros.plugin_support import clock_cdr

    world = World.from_file(world_path, step_size=STEP_SIZE)
    world.step(10)
    physics = world.physics
    iterations = (world.spec.velocity_iterations, world.spec.position_iterations)

    def box2d_only() -> float:
        step = physics.Step
        started = time.perf_counter()
        for _ in range(FLOOR_BATCH):
            step(STEP_SIZE, *iterations)
        return time.perf_counter() - started

    listener = subprocess.Popen([sys.executable, "-m", "bench.listener", *LISTENED])
    context = Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("bench_floor", context=context)
        publisher = node.create_publisher(Clock, "/clock", 10)
        deadline = time.monotonic() + LISTENER_WAIT
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        publish = publisher.publish

        def box2d_and_clock() -> float:
            step = physics.Step
            sim_ns = 0
            started = time.perf_counter()
            for _ in range(FLOOR_BATCH):
                step(STEP_SIZE, *iterations)
                sim_ns += 5_000_000
                publish(clock_cdr(sim_ns))
            return time.perf_counter() - started

        box2d = _per_step(box2d_only, seconds)
        with_clock = _per_step(box2d_and_clock, seconds)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        listener.send_signal(signal.SIGINT)
        try:
            listener.wait(timeout=10)
        except subprocess.TimeoutExpired:
            listener.kill()
        world.close()
    return {"box2d_us": box2d, "clock_us": with_clock - box2d, "floor_us": with_clock,
            "floor_rtf": STEP_SIZE / (with_clock * 1e-6)}


def _per_step(batch: Callable[[], float], seconds: float) -> float:
    """Microseconds per step of ``batch`` (:data:`FLOOR_BATCH` steps a call), the fastest of
    the batches run in ``seconds`` of wall time (the host's other work only adds)."""
    best = float("inf")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        best = min(best, batch())
    return 1e6 * best / FLOOR_BATCH


def node_parts(world_path: Path, seconds: float) -> dict[str, Any]:
    """The node's step on ``world_path`` and its parts (us per step), each hook timed."""
    timer = PartTimer()

    def instrument(world: World) -> None:
        timer.time_hooks(world, lambda phase, hook: f"{phase}: {hook_name(hook)}")
        timer.time_plugins(world, lambda phase, owner: f"  plugins, {phase}: {owner}")
        timer.patch(type(world.physics), "Step", BOX2D)  # every world of the process, until restored

    try:
        figures = run_node(world_path, seconds, STEP_SIZE, LISTENED, prepare=instrument)
    finally:
        timer.restore()
    measured = timer.per_step(figures["steps_per_s"] * seconds)
    parts = dict(sorted(measured.items(), key=lambda item: -item[1]))
    accounted = sum(value for name, value in parts.items() if not name.startswith("  "))
    parts[LOOP] = 1e3 * figures["ms_per_step"] - accounted
    return {"us_per_step": 1e3 * figures["ms_per_step"], "parts": parts}


def run(seconds: float) -> dict[str, Any]:
    """The node's office step (plain, then timed by parts) beside its floor, in one run."""
    plain = run_node(OFFICE_WORLD, seconds, STEP_SIZE, LISTENED)
    floor_figures = floor(OFFICE_WORLD, seconds)
    timed = node_parts(OFFICE_WORLD, seconds)
    us = 1e3 * plain["ms_per_step"]
    # The floor of the node's own bodies: Box2D's step as they move in the node, and the clock.
    floor_us = timed["parts"][BOX2D] + floor_figures["clock_us"]
    return {"us_per_step": us, "rtf": plain["rtf"], **floor_figures, "box2d_in_node_us": timed["parts"][BOX2D],
            "floor_us": floor_us, "floor_rtf": STEP_SIZE / (floor_us * 1e-6), "above_floor": us / floor_us,
            "parts": timed["parts"], "timed_us_per_step": timed["us_per_step"]}


def lines(figures: dict[str, Any]) -> list[str]:
    """The run as text: the step, its floor and its parts."""
    out = [
        f"office, laser idle, node: {figures['us_per_step']:.1f} us/step ({figures['rtf']:.0f}x real time); "
        f"floor {figures['floor_us']:.1f} us/step ({figures['floor_rtf']:.0f}x): Box2D's step of its bodies as "
        f"they move in the node {figures['box2d_in_node_us']:.1f} us (at rest, bare: {figures['box2d_us']:.1f} us) "
        f"+ a /clock publish {figures['clock_us']:.1f} us; the node takes {figures['above_floor']:.1f}x the floor",
        f"  its parts, timed (a microsecond or so added to each; {figures['timed_us_per_step']:.1f} us/step in all):",
    ]
    out += [f"    {value:7.1f} us  {name}" for name, value in figures["parts"].items()]
    return out


if __name__ == "__main__":
    print("\n".join(lines(run(3.0 if "--quick" in sys.argv else 5.0))))
