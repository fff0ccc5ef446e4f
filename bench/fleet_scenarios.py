"""Scale scenarios: a warehouse fleet, a swarm, the cost per robot and a large map's start-up.

* ``fleet``: a 200 m x 200 m warehouse map image at 0.05 m/pixel (4000 x 4000), 100 diff-drive
  robots each with a 720-beam 360-degree 30 m laser at 10 Hz (always published), physics 100 Hz.
* ``swarm``: 1,000 robots with 32-beam 3 m range sensors at 10 Hz, physics 50 Hz, in a walled
  100 m x 100 m field.
* ``scaling``: the swarm robot in the same field, 1 to 1,000 robots: milliseconds per step per
  robot.
* ``startup``: loading the 4000 x 4000 warehouse map (edge extraction, Box2D fixtures and the
  ray-casting index), measured in a fresh process for time and peak memory.

Worlds are generated into a temporary folder. Robots drive in straight lines with a slight turn,
as a fleet following paths would.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from bench.node_runner import run_node
from sim_server.core import World

FLEET_ROBOT = """
bodies:
  - name: base
    footprints: [{type: circle, radius: 0.35, density: 20}]
plugins:
  - {type: DiffDrive, name: drive, body: base, pub_rate: 20}
  - type: Laser
    name: laser
    body: base
    range: 30
    update_rate: 10
    always_publish: true
    angle: {min: -3.14159265, max: 3.14159265, increment: 0.00873878}
"""
SWARM_ROBOT = """
bodies:
  - name: base
    footprints: [{type: circle, radius: 0.15, density: 20}]
plugins:
  - {type: DiffDrive, name: drive, body: base, pub_rate: 10}
  - type: Laser
    name: ranger
    body: base
    range: 3
    update_rate: 10
    always_publish: true
    angle: {min: -3.14159265, max: 2.94524311, increment: 0.19634954}
"""


def warehouse_map(folder: Path, size_m: float = 200.0, resolution: float = 0.05) -> Path:
    """A warehouse: outer walls and rows of shelves with aisles, as a map-server image."""
    pixels = int(round(size_m / resolution))
    image = np.full((pixels, pixels), 255, dtype=np.uint8)
    wall = int(0.3 / resolution)
    image[:wall, :] = image[-wall:, :] = image[:, :wall] = image[:, -wall:] = 0
    shelf_w, aisle = int(1.2 / resolution), int(3.0 / resolution)
    shelf_len, gap = int(30.0 / resolution), int(4.0 / resolution)
    margin = int(10.0 / resolution)
    for x in range(margin, pixels - margin - shelf_w, shelf_w + aisle):
        for y in range(margin, pixels - margin - shelf_len, shelf_len + gap):
            image[y : y + shelf_len, x : x + shelf_w] = 0
    Image.fromarray(image).save(folder / "warehouse.png")
    (folder / "warehouse.yaml").write_text(
        f"image: warehouse.png\nresolution: {resolution}\norigin: [0, 0, 0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n"
    )
    return folder / "warehouse.yaml"


def fleet_world(folder: Path, robots: int = 100) -> Path:
    warehouse_map(folder)
    (folder / "fleet_robot.model.yaml").write_text(FLEET_ROBOT)
    lines = ["properties: {}", "layers:", "  - {name: warehouse, map: warehouse.yaml}", "models:"]
    aisle_pitch = 4.2
    for index in range(robots):
        x = 10.0 + 1.2 + 1.5 + aisle_pitch * (index % 40)  # the middle of an aisle
        y = 12.0 + 34.0 * (index // 40)
        lines.append(f"  - {{name: r{index}, model: fleet_robot.model.yaml, namespace: r{index}, pose: [{x:.2f}, {y:.2f}, 1.5708]}}")
    path = folder / "fleet_world.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def swarm_world(folder: Path, robots: int) -> Path:
    (folder / "field.dat").write_text("0 0 100 0\n100 0 100 100\n100 100 0 100\n0 100 0 0\n")
    (folder / "field.yaml").write_text("type: line_segments\ndata: field.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (folder / "swarm_robot.model.yaml").write_text(SWARM_ROBOT)
    side = max(1, int(math.ceil(math.sqrt(robots))))
    spacing = 96.0 / side
    lines = ["properties: {}", "layers:", "  - {name: field, map: field.yaml}", "models:"]
    for index in range(robots):
        x = 2.0 + spacing * (index % side + 0.5)
        y = 2.0 + spacing * (index // side + 0.5)
        lines.append(f"  - {{name: s{index}, model: swarm_robot.model.yaml, namespace: s{index}, pose: [{x:.2f}, {y:.2f}, {index % 7}]}}")
    path = folder / f"swarm_{robots}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def command_all(world: World, linear: float, angular: float) -> None:
    for model in world.models.values():
        world.plugins.find(model, "drive").command.linear = linear
        world.plugins.find(model, "drive").command.angular = angular


def run_scaling(folder: Path, counts: list[int], steps: int) -> dict[str, dict[str, float]]:
    """In-process cost per robot, swarm robots at physics 50 Hz."""
    result = {}
    for count in counts:
        world = World.from_file(swarm_world(folder, count), step_size=0.02)
        command_all(world, 0.3, 0.05)
        world.step(5)
        started = time.perf_counter()
        world.step(steps)
        per_step = (time.perf_counter() - started) / steps
        world.close()
        result[str(count)] = {"ms_per_step": 1e3 * per_step, "us_per_robot_step": 1e6 * per_step / count}
    return result


STARTUP_PROBE = """
import json, resource, sys, time
from bench.node_runner import run_node
from sim_server.core import World
from sim_server.core.sensing.laser_scanner import scene_of
started = time.perf_counter()
world = World.from_file(sys.argv[1])
scene_of(world).static
elapsed = time.perf_counter() - started
print(json.dumps({"startup_s": elapsed, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "edges": sum(len(layer.edges) for layer in world.layers)}))
"""


def run_startup(folder: Path) -> dict[str, float]:
    """Load the 4000 x 4000 warehouse map (with the ray-casting index) in a fresh process."""
    warehouse_map(folder)
    world = folder / "startup_world.yaml"
    world.write_text("properties: {}\nlayers:\n  - {name: warehouse, map: warehouse.yaml}\n")
    output = subprocess.run([sys.executable, "-c", STARTUP_PROBE, str(world)], capture_output=True, text=True, check=True)
    return json.loads(output.stdout.strip().splitlines()[-1])


def run(seconds: float, quick: bool) -> dict[str, dict]:
    """Every scale scenario; returns name -> figures."""
    with tempfile.TemporaryDirectory(prefix="sim_bench_fleet_") as tmp:
        folder = Path(tmp)
        results: dict[str, dict] = {
            "startup 4000x4000 map": run_startup(folder),
            "fleet: 100 robots, 720-beam 30 m lasers at 10 Hz, physics 100 Hz": run_node(
                fleet_world(folder), seconds, 0.01, prepare=lambda world: command_all(world, 0.8, 0.05)
            ),
            "swarm: 1000 robots, 32-beam 3 m sensors at 10 Hz, physics 50 Hz": run_node(
                swarm_world(folder, 1000), seconds, 0.02, prepare=lambda world: command_all(world, 0.3, 0.05)
            ),
        }
        counts = [1, 10, 100] if quick else [1, 10, 100, 1000]
        results["scaling"] = run_scaling(folder, counts, 100 if quick else 300)
        return results
