"""A world imports the models it uses only: one without people loads no crowd model and one
without cameras no renderer (each checked in a fresh process, whose modules are its own)."""

from __future__ import annotations

import json
import subprocess
import sys

from test.conftest import REPO_ROOT

BENCHMARK_WORLD = REPO_ROOT / "bench" / "worlds" / "benchmark_world" / "world.yaml"
CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
#: Modules a world without people, cameras or live view has no use for.
UNUSED_AT_REST = (
    "sim_server.core.crowd.crowd",
    "sim_server.core.crowd.social_force",
    "sim_server.core.crowd.orca",
    "sim_server.core.crowd.world_metrics",
    "sim_server.core.pictures",
    "sim_server.rendering",
    "sim_server.live",
    "sim_server.learning",
    "foxglove",
)
#: Loads a world, steps it a second and prints the names of the loaded modules as JSON.
LOAD_AND_STEP = """
import json, sys
from sim_server.core import World
world = World.from_file(sys.argv[1])
world.step(round(1.0 / world.time.step_size))
print(json.dumps(sorted(sys.modules)))
"""


def modules_after_loading(world: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-c", LOAD_AND_STEP, world], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(name for name in names if name in modules)


def test_a_world_without_people_or_cameras_imports_no_crowd_model_nor_renderer() -> None:
    modules = modules_after_loading(str(BENCHMARK_WORLD))
    assert "sim_server.core.sensing.raycast" in modules  # its laser casts
    assert loaded(modules, UNUSED_AT_REST) == []


def test_a_world_with_people_imports_the_crowd_models() -> None:
    modules = modules_after_loading(str(CROWD_WORLD))
    assert loaded(modules, ("sim_server.core.crowd.crowd", "sim_server.core.crowd.social_force")) == [
        "sim_server.core.crowd.crowd",
        "sim_server.core.crowd.social_force",
    ]
