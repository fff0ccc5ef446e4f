"""The server's resident memory at rest on the benchmark world, and what each part costs.

* **at rest**: ``python -m sim_server`` on the benchmark world (the cleaner and its 1081-beam
  laser, nobody subscribed), its resident set (VmRSS) read from /proc once it has stepped for
  :data:`SETTLE` seconds;
* **by part**: a fresh process that takes the server's parts in turn (Python, NumPy, Box2D,
  YAML, numba and its LLVM, rclpy and the messages, the simulator's modules, the ROS context and
  a node, the ray caster's first compiled call, the world loaded, its first second of steps),
  its resident set read after each: what each adds on top of those before it. The compiled
  functions come from numba's on-disk cache, as on every start but the first.

Units: MiB (2^20 bytes).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCHMARK_WORLD = REPO_ROOT / "bench" / "worlds" / "benchmark_world" / "world.yaml"
#: Seconds the server runs before its memory is read (start-up, then stepping at real time).
SETTLE = 15.0
#: Longest wait for a process of this module (s).
TIMEOUT = 300.0

#: The parts, in the order the server takes them: a name and the code that brings it in.
PARTS: tuple[tuple[str, str], ...] = (
    ("Python", "pass"),
    ("NumPy", "import numpy"),
    ("Box2D", "import Box2D"),
    ("YAML", "import yaml"),
    ("numba (and LLVM's library, llvmlite)", "import numba"),
    ("rclpy", "import rclpy"),
    ("the messages", "import rosgraph_msgs.msg, sensor_msgs.msg, nav_msgs.msg, geometry_msgs.msg, tf2_msgs.msg, "
                     "visualization_msgs.msg"),
    ("the simulator's modules (core, ROS layer, plugins)",
     "import sim_server.ros.server_node, sim_server.node_view, sim_plugins.laser, sim_plugins.tricycle_drive"),
    ("the ROS context and a node", "rclpy.init(); node = rclpy.create_node('memory'); "
                                   "node.create_publisher(rosgraph_msgs.msg.Clock, '/clock', 10)"),
    ("numba's compiled code, first call (LLVM set up, the cache read)",
     "from sim_server.core.sensing.laser_scanner import prepare; prepare()"),
    ("the benchmark world loaded", f"from sim_server.core import World; world = World.from_file({str(BENCHMARK_WORLD)!r})"),
    ("a second of its steps", "world.step(200)"),
)
#: Runs :data:`PARTS` in one process and prints each part's resident set (MiB) as JSON.
PART_BY_PART = """
import json, sys
def resident():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
parts = json.loads(sys.argv[1])
sizes = []
for name, code in parts:
    exec(code)
    sizes.append(resident())
print(json.dumps(sizes))
"""


def resident_mib(pid: int) -> float:
    """The resident set of process ``pid`` (MiB)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for process {pid}")


def at_rest(world: Path = BENCHMARK_WORLD, settle: float = SETTLE) -> float:
    """The server's resident set (MiB) after ``settle`` seconds on ``world``."""
    server = subprocess.Popen(
        [sys.executable, "-m", "sim_server", "--ros-args", "-p", f"world_path:={world}", "-p", "show_viz:=false"],
        cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"the server ended early (exit {server.returncode})")
            time.sleep(0.2)
        return resident_mib(server.pid)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def by_part() -> dict[str, float]:
    """What each of :data:`PARTS` adds to a process's resident set (MiB), in order."""
    result = subprocess.run(
        [sys.executable, "-c", PART_BY_PART, json.dumps(PARTS)], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=TIMEOUT,
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed")
    sizes = json.loads(result.stdout.splitlines()[-1])
    added = [sizes[0]] + [after - before for before, after in zip(sizes, sizes[1:])]
    return {name: size for (name, _), size in zip(PARTS, added)}


def run() -> dict[str, object]:
    """The server at rest and the parts' costs, in one run."""
    parts = by_part()
    return {"at_rest_mib": at_rest(), "parts": parts, "parts_total_mib": sum(parts.values())}


def lines(figures: dict) -> list[str]:
    """The run as text."""
    out = [f"server at rest, benchmark world: {figures['at_rest_mib']:.0f} MiB resident; by part, in one process "
           f"({figures['parts_total_mib']:.0f} MiB in all):"]
    out += [f"  {size:6.1f} MiB  {name}" for name, size in figures["parts"].items()]
    return out


if __name__ == "__main__":
    print("\n".join(lines(run())))
