"""Level-streaming benchmark scenes, generated into a temporary folder.

* ``small``: one robot (DiffDrive, 360-beam 20 m laser at 10 Hz) in a 50 m x 50 m walled room.
* ``levels``: the same robot in a 500 m x 500 m world of 100 levels (50 m x 50 m, buffer 25 m)
  holding 10,000 static block models, run with levels enabled and disabled.
* ``streamed map``: the robot in a 1 km x 1 km map of city blocks (line segments), its layer
  streamed in 50 m tiles (buffer 25 m), and the same layer loaded whole.

The robot drives at 8 m/s: in the small room around a 5 m circle, in the large worlds straight
down a street for 160 m, crossing several level and tile boundaries (their loading is part of the
measured step time). Everything runs in-process (no ROS), so the figures are the core's step cost.
"""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

import numpy as np

from sim_server.core import Pose2D, World

STEP_SIZE = 0.01
ROBOT_MODEL = """
bodies:
  - name: base
    footprints: [{type: circle, radius: 0.3, density: 10}]
plugins:
  - {type: DiffDrive, name: drive, body: base}
  - type: Laser
    name: laser
    body: base
    range: 20
    update_rate: 10
    angle: {min: -3.14159, max: 3.14159, increment: 0.0174533}
"""
BLOCK_MODEL = """
bodies:
  - name: block
    type: static
    footprints: [{type: polygon, density: 1, points: [[-0.4, -0.4], [0.4, -0.4], [0.4, 0.4], [-0.4, 0.4]]}]
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _square(x0: float, y0: float, x1: float, y1: float) -> list[str]:
    return [f"{x0} {y0} {x1} {y0}", f"{x1} {y0} {x1} {y1}", f"{x1} {y1} {x0} {y1}", f"{x0} {y1} {x0} {y0}"]


def small_world(folder: Path) -> Path:
    """A 50 m room with a few pillars."""
    lines = _square(-25, -25, 25, 25)
    for x in range(-20, 21, 10):
        for y in range(-20, 21, 10):
            if (x, y) != (0, 0):
                lines += _square(x - 0.5, y - 0.5, x + 0.5, y + 0.5)
    _write(folder, "small.dat", "\n".join(lines) + "\n")
    _write(folder, "small.yaml", "type: line_segments\ndata: small.dat\nscale: 1\norigin: [0, 0, 0]\n")
    _write(folder, "robot.model.yaml", ROBOT_MODEL)
    return _write(
        folder, "small_world.yaml",
        "properties: {}\nlayers:\n  - {name: walls, map: small.yaml}\n"
        "models:\n  - {name: robot, model: robot.model.yaml, pose: [5, 5, 0]}\n"
        "performers:\n  - {name: p, ref: robot, size: [2, 2]}\n",
    )


def levels_world(folder: Path, grid: int = 10, level_size: float = 50.0, per_level: int = 100) -> Path:
    """``grid`` x ``grid`` levels, each holding ``per_level`` static blocks."""
    _write(folder, "robot.model.yaml", ROBOT_MODEL)
    _write(folder, "block.model.yaml", BLOCK_MODEL)
    models = ["  - {name: robot, model: robot.model.yaml, pose: [5, 10, 0]}"]
    levels = []
    side = int(math.sqrt(per_level))
    spacing = level_size / side
    for i in range(grid):
        for j in range(grid):
            names = []
            for a in range(side):
                for b in range(side):
                    x = i * level_size + (a + 0.5) * spacing
                    y = j * level_size + (b + 0.5) * spacing
                    if abs(x - 5) < 2 and abs(y - 10) < 2:
                        x += 1.5  # leave room for the robot's start
                    name = f"B_{i}_{j}_{a}_{b}"
                    names.append(name)
                    models.append(f"  - {{name: {name}, model: block.model.yaml, pose: [{x:.3f}, {y:.3f}, 0]}}")
            centre = ((i + 0.5) * level_size, (j + 0.5) * level_size)
            levels.append(
                f"  - {{name: L_{i}_{j}, pose: [{centre[0]}, {centre[1]}], size: [{level_size}, {level_size}], "
                f"buffer: 25, refs: [{', '.join(names)}]}}"
            )
    return _write(
        folder, "levels_world.yaml",
        "properties: {}\nmodels:\n" + "\n".join(models) + "\nlevels:\n" + "\n".join(levels)
        + "\nperformers:\n  - {name: p, ref: robot, size: [2, 2]}\n",
    )


def city_world(folder: Path, size: float = 1000.0, block: float = 20.0, street: float = 8.0) -> Path:
    """A ``size`` m square map of city blocks (line segments), its layer streamed in 50 m tiles."""
    rng = np.random.default_rng(5)
    lines = _square(0, 0, size, size)
    pitch = block + street
    for x in np.arange(street, size - block, pitch):
        for y in np.arange(street, size - block, pitch):
            if x < 30 and y < 30:
                continue  # the robot's start
            w, h = block * rng.uniform(0.6, 1.0), block * rng.uniform(0.6, 1.0)
            lines += _square(round(x, 2), round(y, 2), round(x + w, 2), round(y + h, 2))
    _write(folder, "city.dat", "\n".join(lines) + "\n")
    _write(folder, "city.yaml", "type: line_segments\ndata: city.dat\nscale: 1\norigin: [0, 0, 0]\n")
    _write(folder, "robot.model.yaml", ROBOT_MODEL)
    return _write(
        folder, "city_world.yaml",
        "properties: {}\nlayers:\n  - {name: city, map: city.yaml, streaming: {tile_size: 50, buffer: 25}}\n"
        "models:\n  - {name: robot, model: robot.model.yaml, pose: [4, 4, 0]}\n"
        "performers:\n  - {name: p, ref: robot, size: [2, 2]}\n",
    )


def drive(world_path: Path, enable_levels: bool, steps: int, start: Pose2D, linear: float, angular: float) -> dict:
    """Load the world, then drive the robot from ``start`` with a fixed command; time the steps."""
    started = time.perf_counter()
    world = World.from_file(world_path, step_size=STEP_SIZE, enable_levels=enable_levels)
    load_s = time.perf_counter() - started
    world.move_model("robot", start)
    drive_plugin = world.plugins.find(world.models["robot"], "drive")
    drive_plugin.command.linear, drive_plugin.command.angular = linear, angular
    world.step(10)  # reach the commanded speed, load the levels at the start
    started = time.perf_counter()
    world.step(steps)
    elapsed = time.perf_counter() - started
    end = world.models["robot"].pose
    result = {
        "load_s": load_s,
        "ms_per_step": 1e3 * elapsed / steps,
        "models": len(world.models),
        "distance_m": math.hypot(end.x - start.x, end.y - start.y),
        "levels_loaded_at_end": len(world.levels.loaded_levels),
    }
    world.close()
    return result


def run(steps: int = 2000) -> dict[str, dict]:
    """Every level scenario; returns name -> figures."""
    with tempfile.TemporaryDirectory(prefix="sim_bench_levels_") as tmp:
        folder = Path(tmp)
        small = small_world(folder)
        levels = levels_world(folder)
        city = city_world(folder)
        speed = 8.0
        circle = (Pose2D(5.0, 0.0, math.pi / 2), speed, speed / 5.0)
        block_street = (Pose2D(5.0, 10.0, 0.0), speed, 0.0)
        city_street = (Pose2D(4.0, 4.0, 0.0), speed, 0.0)
        return {
            "small world": drive(small, True, steps, *circle),
            "100 levels, 10k models, streamed": drive(levels, True, steps, *block_street),
            "100 levels, 10k models, all loaded": drive(levels, False, steps, *block_street),
            "1 km map, streamed tiles": drive(city, True, steps, *city_street),
            "1 km map, loaded whole": drive(city, False, steps, *city_street),
        }
