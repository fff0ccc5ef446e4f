"""Shared by the ray-casting sensors' tests (Range, Laser): robots carrying a sensor, each in
front of walls of its own, 20 m apart."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from sim_server.core import World

#: Metres between two robots along y (each robot's walls are moved with it).
ROBOT_SPACING = 20.0
#: A robot model: the dynamic body ``base`` (a disc of 0.1 m) and the plugin entries given.
ROBOT = """
bodies:
  - name: base
    type: dynamic
    footprints:
      - {{type: circle, radius: 0.1, density: 1}}
plugins:
{plugins}
"""


def robot_model(plugins: str) -> str:
    """The YAML of a robot carrying ``plugins`` (the list's entries, indented as under
    ``plugins:``)."""
    return ROBOT.format(plugins=plugins)


def sensor_world(folder: Path, models: Sequence[str], walls: Sequence[tuple[float, float, float, float]], robots: int = 1,
                 layer: str = "walls", only: int | None = None, seed: int | None = None) -> World:
    """A world of ``robots`` robots ``r<k>`` (namespace ``r<k>``) at (0, 20 k) facing +x, robot
    k of the model ``models[k % len(models)]`` (the YAML of each, written to
    ``robot<i>.model.yaml``); ``walls`` (x0, y0, x1, y1 in m, about each robot) make the layer
    ``layer``. ``only``: just robot ``only`` is placed (with every robot's walls). Steps of
    0.01 s, seeded with ``seed``."""
    for index, model in enumerate(models):
        (folder / f"robot{index}.model.yaml").write_text(model)
    segments = [f"{x0} {y0 + ROBOT_SPACING * k} {x1} {y1 + ROBOT_SPACING * k}" for k in range(robots) for x0, y0, x1, y1 in walls]
    (folder / "walls.txt").write_text("\n".join(segments) + "\n")
    (folder / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    lines = ["properties: {}", f"layers:\n  - {{name: {layer}, map: walls.yaml}}", "models:"]
    for k in range(robots) if only is None else (only,):
        model = f"robot{k % len(models)}.model.yaml"
        lines.append(f"  - {{name: r{k}, model: {model}, namespace: r{k}, pose: [0, {ROBOT_SPACING * k}, 0]}}")
    (folder / "world.yaml").write_text("\n".join(lines) + "\n")
    return World.from_file(folder / "world.yaml", step_size=0.01, seed=seed)
