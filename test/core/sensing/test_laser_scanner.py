"""LaserScanner: scanners cast together get what each gets alone, their faults drawn from their
generators as each alone draws them (a generator shared between scanners too); rates that are
not probabilities are refused."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import Pose2D, World
from sim_server.core.sensing.laser_scanner import LaserScanner, scan_all, scene_of


def _world(folder: Path) -> World:
    """Three discs in a walled square (a layer), one step made."""
    (folder / "disc.model.yaml").write_text("bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.3, density: 1}]\n")
    (folder / "walls.txt").write_text("-9 -9 9 -9\n9 -9 9 9\n9 9 -9 9\n-9 9 -9 -9\n0 -3 2 4\n")
    (folder / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    models = "".join(f"  - {{name: m{i}, model: disc.model.yaml, pose: [{2 * i - 3}, {i - 1}, {i}]}}\n" for i in range(3))
    (folder / "world.yaml").write_text("properties: {}\nlayers:\n  - {name: walls, map: walls.yaml}\nmodels:\n" + models)
    world = World.from_file(folder / "world.yaml")
    world.step()
    return world


@pytest.mark.parametrize("increments", [(0.01, 0.02, 0.0067), (0.02, 0.02, 0.02), (0.02, 0.04, 0.01333)])
def test_a_batch_of_scanners_gives_each_its_own_scan(tmp_path: Path, increments: tuple[float, ...]) -> None:
    """Scanners of one size and of several sizes (the second line-up's total equals three
    times the first scanner's beams) cast together: each gets the scan it gets alone."""
    world = _world(tmp_path)
    try:
        scene = scene_of(world)
        scanners = [
            LaserScanner(world.models[f"m{i}"].first_body.physics_body, Pose2D(0.4, 0.0, 0.0), -2.0, 2.0, increment, 15.0, 0xFFFF)
            for i, increment in enumerate(increments)
        ]
        together = scan_all(scanners, scene, world.time.iterations)
        assert [len(ranges) for ranges, _ in together] == [len(scanner.local_angles) for scanner in scanners]
        for scanner, (ranges, bits) in zip(scanners, together):
            alone, alone_bits = scan_all([scanner], scene, world.time.iterations)[0]
            assert np.array_equal(ranges, alone, equal_nan=True) and np.array_equal(bits, alone_bits)
            assert np.isfinite(ranges).sum() > 100
    finally:
        world.close()


def _scanners(world: World, rngs: list[np.random.Generator]) -> list[LaserScanner]:
    """Scanners of 200, 400 and 600 beams on the three discs, with noise, dropouts and maximum
    ranges, each drawing from ``rngs[i % len(rngs)]`` (ranges 15, 15 and 4 m)."""
    return [
        LaserScanner(
            world.models[f"m{i}"].first_body.physics_body, Pose2D(0.4, 0.0, 0.0), -2.0, 2.0, 4.0 / (200 * (i + 1) - 1),
            4.0 if i == 2 else 15.0, 0xFFFF, noise_std_dev=0.01, rng=rngs[i % len(rngs)],
            dropout_rate=0.1 * (i + 1), max_range_rate=0.05,
        )
        for i in range(3)
    ]


@pytest.mark.parametrize("shared", [False, True], ids=["own generators", "one generator"])
def test_scanners_cast_together_draw_as_each_alone(tmp_path: Path, shared: bool) -> None:
    world = _world(tmp_path)
    try:
        scene = scene_of(world)
        seeds = [4] if shared else [4, 5, 6]
        together = scan_all(_scanners(world, [np.random.default_rng(s) for s in seeds]), scene, world.time.iterations)
        # Alone, one after the other, from generators seeded alike: the same numbers.
        alone_scanners = _scanners(world, [np.random.default_rng(s) for s in seeds])
        for scanner, (ranges, bits) in zip(alone_scanners, together):
            alone, alone_bits = scan_all([scanner], scene, world.time.iterations)[0]
            assert np.array_equal(ranges, alone, equal_nan=True) and np.array_equal(bits, alone_bits)
            maxed = ranges == np.float32(scanner.max_range)
            assert maxed.any() and np.isnan(ranges).any() and (bits[maxed | np.isnan(ranges)] == 0).all()
    finally:
        world.close()


@pytest.mark.parametrize(("dropout", "maximum"), [(-0.1, 0.0), (0.0, 1.01), (math.nan, 0.0), (0.7, 0.4)])
def test_rates_that_are_not_probabilities_are_refused(tmp_path: Path, dropout: float, maximum: float) -> None:
    world = _world(tmp_path)
    try:
        with pytest.raises(ValueError, match="dropout_rate .* and max_range_rate .* must be probabilities"):
            LaserScanner(world.models["m0"].first_body.physics_body, Pose2D(), -1.0, 1.0, 0.1, 5.0, 0xFFFF,
                         dropout_rate=dropout, max_range_rate=maximum)
    finally:
        world.close()
