"""Level-streaming benchmark scenes, generated into a temporary folder.

* ``levels``: a robot (DiffDrive, 360-beam 20 m laser at 10 Hz) in a 500 m x 500 m world of 100
  levels (50 m x 50 m, buffer 25 m) holding 10,000 static block models, run with levels enabled
  and disabled.
* ``streamed map``: the robot in a 1 km x 1 km map of city blocks (line segments), its layer
  streamed in 50 m tiles (buffer 25 m), and the same layer loaded whole.
* the small world of each: a 100 m x 100 m corner of it (a performer with a 25 m buffer keeps
  about that much loaded), all loaded, without levels: the 400 blocks of 2 x 2 levels, and 100 m
  of the city. Streaming works when a huge world costs per step about what the part of it near
  the robot would cost on its own.

The robot drives at 8 m/s straight down a street for 320 m, crossing several level and tile
boundaries in the large worlds (their loading is part of the measured step time); in a small
world it is put back to the start of its street whenever it reaches the far end. Everything runs
in-process (no ROS), so the figures are the core's step cost, measured as the process's CPU
time (this is a shared host: other tenants' load shows in wall time, not in CPU time).
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


def small_levels_world(folder: Path) -> Path:
    """A 100 m x 100 m piece of the levels world: the 400 blocks of 2 x 2 levels, no levels."""
    world = levels_world(folder, grid=2, name="small_levels_world.yaml")
    text = world.read_text()
    return _write(folder, "small_levels_world.yaml", text[: text.index("levels:")])


def levels_world(
    folder: Path, grid: int = 10, level_size: float = 50.0, per_level: int = 100, name: str = "levels_world.yaml"
) -> Path:
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
        folder, name,
        "properties: {}\nmodels:\n" + "\n".join(models) + "\nlevels:\n" + "\n".join(levels)
        + "\nperformers:\n  - {name: p, ref: robot, size: [2, 2]}\n",
    )


def city_world(
    folder: Path, size: float = 1000.0, block: float = 20.0, street: float = 8.0, streamed: bool = True
) -> Path:
    """A ``size`` m square map of city blocks (line segments), its layer streamed in 50 m tiles
    (or not: a small world)."""
    rng = np.random.default_rng(5)
    lines = _square(0, 0, size, size)
    pitch = block + street
    for x in np.arange(street, size - block, pitch):
        for y in np.arange(street, size - block, pitch):
            if x < 30 and y < 30:
                continue  # the robot's start
            w, h = block * rng.uniform(0.6, 1.0), block * rng.uniform(0.6, 1.0)
            lines += _square(round(x, 2), round(y, 2), round(x + w, 2), round(y + h, 2))
    stem = f"city_{int(size)}"
    _write(folder, f"{stem}.dat", "\n".join(lines) + "\n")
    _write(folder, f"{stem}.yaml", f"type: line_segments\ndata: {stem}.dat\nscale: 1\norigin: [0, 0, 0]\n")
    _write(folder, "robot.model.yaml", ROBOT_MODEL)
    streaming = ", streaming: {tile_size: 50, buffer: 25}" if streamed else ""
    return _write(
        folder, f"{stem}_world.yaml",
        f"properties: {{}}\nlayers:\n  - {{name: city, map: {stem}.yaml{streaming}}}\n"
        "models:\n  - {name: robot, model: robot.model.yaml, pose: [4, 4, 0]}\n"
        + ("performers:\n  - {name: p, ref: robot, size: [2, 2]}\n" if streamed else ""),
    )


#: Steps run between checks whether a robot in a small world reached the end of its street.
WRAP_CHECK_STEPS = 25


def drive(
    world_path: Path, enable_levels: bool, steps: int, start: Pose2D, linear: float, wrap_x: float | None = None
) -> dict:
    """Load the world, then drive the robot straight from ``start``; time the steps.

    With ``wrap_x``, the robot is put back at ``start`` whenever it is past that x (m).
    """
    started = time.perf_counter()
    world = World.from_file(world_path, step_size=STEP_SIZE, enable_levels=enable_levels)
    load_s = time.perf_counter() - started
    world.move_model("robot", start)
    drive_plugin = world.plugins.find(world.models["robot"], "drive")
    drive_plugin.command.linear = linear
    world.step(10)  # reach the commanded speed, load the levels at the start
    travelled = 0.0
    elapsed = 0.0
    done = 0
    while done < steps:
        chunk = min(WRAP_CHECK_STEPS if wrap_x is not None else steps, steps - done)
        started = time.process_time()
        world.step(chunk)
        elapsed += time.process_time() - started
        done += chunk
        pose = world.models["robot"].pose
        if wrap_x is not None and pose.x > wrap_x:
            travelled += pose.x - start.x
            world.move_model("robot", start)
    end = world.models["robot"].pose
    result = {
        "load_s": load_s,
        "ms_per_step": 1e3 * elapsed / steps,
        "models": len(world.models),
        "distance_m": travelled + math.hypot(end.x - start.x, end.y - start.y),
        "levels_loaded_at_end": len(world.levels.loaded_levels),
        "edges_in_box2d": sum(len(layer.loaded_edges()) for layer in world.layers),
    }
    world.close()
    return result


#: (small world, streamed, loaded whole) scenario names of each comparison.
COMPARISONS = (
    ("levels: small world (100 m, 400 models)", "100 levels, 10k models, streamed", "100 levels, 10k models, all loaded"),
    ("map: small world (100 m of the city)", "1 km map, streamed tiles", "1 km map, loaded whole"),
)


def run(steps: int = 4000) -> dict[str, dict]:
    """Every level scenario; returns name -> figures."""
    with tempfile.TemporaryDirectory(prefix="sim_bench_levels_") as tmp:
        folder = Path(tmp)
        levels = levels_world(folder)
        small_levels = small_levels_world(folder)
        city = city_world(folder)
        small_city = city_world(folder, size=100.0, streamed=False)
        speed = 8.0
        block_street = Pose2D(5.0, 10.0, 0.0)
        city_street = Pose2D(4.0, 4.0, 0.0)
        (small_levels_name, streamed_levels_name, whole_levels_name), (small_map_name, streamed_map_name, whole_map_name) = (
            COMPARISONS
        )
        return {
            small_levels_name: drive(small_levels, False, steps, block_street, speed, 95.0),
            streamed_levels_name: drive(levels, True, steps, block_street, speed),
            whole_levels_name: drive(levels, False, steps, block_street, speed),
            small_map_name: drive(small_city, False, steps, city_street, speed, 90.0),
            streamed_map_name: drive(city, True, steps, city_street, speed),
            whole_map_name: drive(city, False, steps, city_street, speed),
        }
