"""The ray caster compiles before the first step (warm_up), never in one: after warm_up, worlds
with lasers stepping and scanning, spawned lasers, level streaming and odd argument types add no
specialisation to any compiled function. No wall-clock timing here: compiles are counted."""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

from sim_server.core import Pose2D, World, compiled
from sim_server.core.sensing import laser_scanner, ray_kernels, raycast
from test.conftest import DEMO_WORLD, LOAD_WORLD_TESTS, REPO_ROOT, plugin

LEVELS_WORLD = REPO_ROOT / "config" / "worlds" / "levels" / "world.yaml"
CLEANER = REPO_ROOT / "config" / "worlds" / "demo" / "cleaner.model.yaml"


def dispatchers() -> dict[str, Dispatcher]:
    """Every numba-compiled function of the ray caster (its kernels)."""
    found = {name: value for name, value in vars(ray_kernels).items() if isinstance(value, Dispatcher)}
    assert len(found) >= 15  # all of them, not a renamed few
    return found


def specialisations() -> dict[str, set]:
    return {name: set(function.signatures) for name, function in dispatchers().items()}


@pytest.fixture
def warm() -> dict[str, set]:
    """The ray caster warmed up; its specialisations then."""
    raycast.warm_up()
    return specialisations()


def test_warm_up_covers_every_entry_point(warm: dict[str, set]) -> None:
    for function in raycast.ENTRY_POINTS:
        assert len(function.signatures) == 1, function.__name__


def test_the_api_calls_only_entry_points() -> None:
    """Every kernel the Python API calls is warmed up; no compiled function is defined outside the
    kernels' module (numba's cache follows the defining file)."""
    called = {value for value in vars(raycast).values() if isinstance(value, Dispatcher)}
    assert called == set(raycast.ENTRY_POINTS)
    assert all(function.py_func.__module__ == ray_kernels.__name__ for function in dispatchers().values())


def test_scanning_worlds_compile_nothing_after_warm_up(warm: dict[str, set]) -> None:
    world = World.from_file(DEMO_WORLD, step_size=0.01, seed=1)  # a 1081-beam laser
    world.step(5)
    laser = plugin(world, "cleaner1", "laser_front")
    assert laser.last_ranges is not None and np.isfinite(laser.last_ranges).any()
    world.move_model("cleaner1", Pose2D(3.0, 1.0, 0.5))
    world.step(3)
    world.close()
    assert specialisations() == warm


def test_level_streaming_compiles_nothing_after_warm_up(warm: dict[str, set]) -> None:
    world = World.from_file(LEVELS_WORLD, step_size=0.01, enable_levels=True)
    for x in (-20.0, 0.0, 10.0, 20.0, 40.0):  # levels load and unload: the static scene rebuilds
        world.move_model("R1", Pose2D(x, 0.0, 0.0))
        world.step(2)
    world.close()
    assert specialisations() == warm


def test_a_laser_spawned_later_compiles_nothing(warm: dict[str, set], monkeypatch: pytest.MonkeyPatch) -> None:
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", step_size=0.01)
    world.step(2)
    assert laser_scanner.SCENE_KEY not in world._shared  # no laser yet
    calls = []
    monkeypatch.setattr(laser_scanner, "warm_up", lambda *args: calls.append(args) or 0.0)
    world.spawn_model(CLEANER, "late", "late", Pose2D(0.0, 0.0, 0.0))
    assert calls  # the scan scene, made as the laser came, warmed up (outside any step)
    world.step(3)
    assert plugin(world, "late", "laser_front").last_ranges is not None
    world.delete_model("late")
    world.step()
    world.close()
    assert specialisations() == warm


def test_arguments_of_other_types_are_converted_not_compiled_for(warm: dict[str, set]) -> None:
    segments = np.array([[0, -5, 0, 5], [-5, 4, 5, 4]], dtype=np.int32)  # integers
    bits = np.array([1, 1], dtype=np.int32)
    square = np.array([(-0.2, -0.2), (0.2, -0.2), (0.2, 0.2), (-0.2, 0.2)] * 2, dtype=np.float32)
    fixed = raycast.MovingShapes(
        square.reshape(1, 8, 2) + np.float32(2.0), np.array([4], dtype=np.int32), bits[:1], bits[:1],
        np.zeros((0, 3)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
    )
    scene = raycast.StaticScene(segments.tolist(), bits, bits, fixed)
    angles = np.linspace(-3.0, 3.0, 40, dtype=np.float32)[::2]  # float32, strided
    angles.flags.writeable = False  # and read-only
    ranges, tags = raycast.cast_rays(-2.0, 0.0, angles, 20.0, 1, scene)
    reference, _ = raycast.cast_rays(-2.0, 0.0, angles.astype(np.float64), 20.0, 1, scene)
    assert np.array_equal(ranges, reference) and np.isfinite(ranges).any()
    out = np.zeros(len(angles), dtype=np.float32)  # an output buffer of another type: filled
    got, _ = raycast.cast_rays(-2.0, 0.0, angles, 20.0, 1, scene, out_ranges=out)
    assert got is out and np.allclose(out, reference)
    poses = np.array([[1.0, 2.0, 0.3]], dtype=np.float32)
    placed, _ = raycast.place_shapes(
        poses, square.reshape(1, 8, 2), np.zeros(1, np.int32), np.zeros((0, 3)), np.zeros(0, np.int32)
    )
    assert placed.dtype == np.float64 and placed.shape == (1, 8, 2)
    assert specialisations() == warm


def test_a_laser_world_warms_up_while_it_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(laser_scanner, "warm_up", lambda *args: calls.append(args) or 0.0)
    world = World.from_file(DEMO_WORLD)
    assert calls
    world.close()


class FakeClock:
    """perf_counter advancing ``tick`` seconds per call."""

    def __init__(self, tick: float) -> None:
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


@pytest.mark.parametrize(
    ("tick", "counts", "expected"),
    [
        (0.01, (0, 5), []),  # quick: nothing said
        (2.0, (0, 5), ["compiling the ray caster (first run after install; cached afterwards)",
                       "compiled the ray caster in"]),
        (2.0, (5, 0), ["loaded the compiled ray caster from numba's cache in"]),  # slow disk, no compile
    ],
)
def test_a_slow_warm_up_is_logged(
    monkeypatch: pytest.MonkeyPatch, tick: float, counts: tuple[int, int], expected: list[str]
) -> None:
    raycast.warm_up()  # compiled for real first: the rest only counts
    monkeypatch.setattr(raycast, "_warm", False)
    monkeypatch.setattr(raycast, "perf_counter", FakeClock(tick))
    monkeypatch.setattr(raycast, "_cache_counts", lambda: counts)
    messages: list[str] = []
    assert raycast.warm_up(messages.append) > 0.0
    assert len(messages) == len(expected)
    for message, start in zip(messages, expected):
        assert message.startswith(start)
    assert raycast.warm_up(messages.append) < tick * 3 and len(messages) == len(expected)  # once per process


def test_the_default_log_is_seen_without_logging_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    monkeypatch.setattr(raycast.LOGGER, "handlers", [handler])
    monkeypatch.setattr(raycast.LOGGER, "propagate", False)
    root, level = logging.getLogger(), raycast.LOGGER.level
    root_level = root.level
    try:
        raycast.LOGGER.setLevel(logging.NOTSET)  # unconfigured: the root's WARNING applies
        root.setLevel(logging.WARNING)
        raycast._notice("compiling")
        raycast.LOGGER.setLevel(logging.INFO)  # as the server's bridge to its ROS logger sets it
        raycast._notice("compiling")
    finally:
        raycast.LOGGER.setLevel(level)
        root.setLevel(root_level)
    assert [record.levelname for record in records] == ["WARNING", "INFO"]




def run_warm_up_cli() -> list[str]:
    """``python -m sim_server.warm_up``'s lines (it must exit 0 without a traceback)."""
    result = subprocess.run(
        [sys.executable, "-m", "sim_server.warm_up"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout.splitlines()


def test_warm_up_cli_exits_0() -> None:
    lines = run_warm_up_cli()
    assert len(lines) == 3, lines
    assert lines[0].startswith("ray caster: ")
    assert lines[1].startswith("body access: ") and lines[2].startswith("rasterizer: ")
    if "; cache: " in lines[0]:  # numba has a cache directory: the next run loads from it
        again = run_warm_up_cli()[0]
        loaded = f"ray caster: loaded {len(raycast.ENTRY_POINTS)} compiled function(s) from the cache in "
        assert again.startswith(loaded), again
