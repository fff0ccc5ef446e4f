"""Laser faults of real scanners: dropouts (NaN) and spurious maximum ranges at the rates asked
for, measured over many beams; seeded runs repeat; zero rates are the laser without the keys;
lasers cast in one batch draw what each draws alone; bad rates are one line naming the key."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import ConfigError, World
from test.sim_plugins.sensor_worlds import robot_model, sensor_world

#: Beams per scan: a full turn, 0.1 degree apart.
BEAMS = 3600
LIDAR = """  - type: Laser
    name: lidar
    body: base
    range: 5
    angle: {{min: {low!r}, max: {high!r}, increment: {increment!r}}}
{keys}"""
#: A room of half-side 2 m round each robot, open on its +x side: beams within 45 degrees of
#: +x miss, all others hit a wall (the farthest corner is 2.83 m away, within range).
ROOM = ((2.0, -2.0, -2.0, -2.0), (-2.0, -2.0, -2.0, 2.0), (-2.0, 2.0, 2.0, 2.0))


def _robot(keys: str, beams: int = BEAMS) -> str:
    increment = 2.0 * math.pi / beams
    return robot_model(LIDAR.format(low=-math.pi, high=-math.pi + increment * (beams - 1), increment=increment, keys=keys))


def _world(folder: Path, keys: str = "", robots: int = 1, only: int | None = None, seed: int | None = 7,
           beams: tuple[int, ...] = (BEAMS,)) -> World:
    """Robots ``r<k>`` at (0, 20 k), each in its room, whose walls are the layer ``reflectance``;
    ``only``: just robot ``only`` (with every room); robot k's laser has ``beams[k % len(beams)]``
    beams."""
    return sensor_world(folder, [_robot(keys, count) for count in beams], ROOM, robots, "reflectance", only, seed)


def _lidar(world: World, robot: str = "r0"):
    return next(p for p in world.plugins.plugins_of(world.models[robot]) if p.context.name == "lidar")


def _scans(world: World, steps: int, robot: str = "r0") -> tuple[np.ndarray, np.ndarray]:
    """The ranges and intensities of ``steps`` scans (one a step), stacked; closes the world."""
    ranges, intensities = [], []
    try:
        for _ in range(steps):
            world.step()
            lidar = _lidar(world, robot)
            ranges.append(lidar.last_ranges.copy())
            intensities.append(lidar.last_intensities.copy())
    finally:
        world.close()
    return np.array(ranges), np.array(intensities)


def test_beams_drop_out_and_max_out_at_the_rates_asked_for(tmp_path: Path) -> None:
    steps = 20
    clean, clean_intensities = _scans(_world(tmp_path), steps)
    hits = np.isfinite(clean)
    assert 0.7 < hits.mean() < 0.8 and (clean_intensities[hits] == 255).all()  # a quarter misses
    ranges, intensities = _scans(_world(tmp_path, "    dropout_rate: 0.1\n    max_range_rate: 0.05"), steps)
    dropped, maxed = np.isnan(ranges), ranges == np.float32(5.0)
    # Over 54,000 beams that hit and 18,000 that miss: 5 standard deviations are below 0.007.
    assert dropped[hits].mean() == pytest.approx(0.1, abs=0.007)
    assert maxed[hits].mean() == pytest.approx(0.05, abs=0.007)
    assert maxed[~hits].mean() == pytest.approx(0.05, abs=0.01)  # misses max out too
    assert (dropped[~hits] == ~maxed[~hits]).all()  # other misses stay NaN
    untouched = ~dropped & ~maxed
    assert np.array_equal(ranges[untouched], clean[untouched])  # every other beam as it was
    assert (intensities[dropped | maxed] == 0).all() and (intensities[untouched] == clean_intensities[untouched]).all()
    assert not (dropped & maxed).any()


def test_a_beam_drops_out_or_maxes_out_whatever_it_would_hit(tmp_path: Path) -> None:
    ranges, _ = _scans(_world(tmp_path, "    dropout_rate: 1"), 2)
    assert np.isnan(ranges).all()
    ranges, intensities = _scans(_world(tmp_path, "    max_range_rate: 1"), 2)
    assert (ranges == np.float32(5.0)).all() and (intensities == 0).all()
    ranges, _ = _scans(_world(tmp_path, "    dropout_rate: 0.5\n    max_range_rate: 0.5"), 4)
    assert (np.isnan(ranges) | (ranges == np.float32(5.0))).all()
    assert np.isnan(ranges).mean() == pytest.approx(0.5, abs=0.02)


def test_a_seed_repeats_the_faults_and_another_changes_them(tmp_path: Path) -> None:
    keys = "    dropout_rate: 0.2\n    max_range_rate: 0.1\n    noise_std_dev: 0.02"
    first, _ = _scans(_world(tmp_path, keys, seed=11), 5)
    again, _ = _scans(_world(tmp_path, keys, seed=11), 5)
    other, _ = _scans(_world(tmp_path, keys, seed=12), 5)
    assert np.array_equal(first, again, equal_nan=True)
    assert not np.array_equal(np.isnan(first), np.isnan(other))


def test_zero_rates_scan_as_a_laser_without_the_keys(tmp_path: Path) -> None:
    """No draw is taken for rates of 0: even the Gaussian noise is the same, bit for bit."""
    without, without_intensities = _scans(_world(tmp_path, "    noise_std_dev: 0.05", seed=3), 5)
    zero, zero_intensities = _scans(
        _world(tmp_path, "    noise_std_dev: 0.05\n    dropout_rate: 0\n    max_range_rate: 0.0", seed=3), 5
    )
    assert np.array_equal(without, zero, equal_nan=True) and np.array_equal(without_intensities, zero_intensities)
    assert np.isfinite(without).mean() > 0.7 and np.isnan(without).any()


@pytest.mark.parametrize("beams", [(BEAMS,), (BEAMS, 1000, 2400)], ids=["one size", "several sizes"])
def test_lasers_cast_together_draw_what_each_draws_alone(tmp_path: Path, beams: tuple[int, ...]) -> None:
    """Three lasers in one world are cast in one batch; each alone (with every room, the same
    seed and model name, so the same generator) gives the same scans."""
    keys = "    dropout_rate: 0.15\n    max_range_rate: 0.05\n    noise_std_dev: 0.01"
    world = _world(tmp_path, keys, robots=3, beams=beams)
    together: dict[str, list[np.ndarray]] = {name: [] for name in world.models}
    try:
        for _ in range(4):
            world.step()
            for name in together:
                together[name].append(_lidar(world, name).last_ranges.copy())
    finally:
        world.close()
    for index, name in enumerate(sorted(together)):
        alone, _ = _scans(_world(tmp_path, keys, robots=3, only=index, beams=beams), 4, name)
        assert np.array_equal(np.array(together[name]), alone, equal_nan=True)
        assert np.isnan(alone).any() and (alone == np.float32(5.0)).any()


@pytest.mark.parametrize("key", ["dropout_rate", "max_range_rate"])
@pytest.mark.parametrize("value", ["-0.1", "1.5", ".nan", ".inf", "often", '"0.5"', "true", "[0.1]"])
def test_a_bad_rate_is_one_line_naming_the_key(tmp_path: Path, key: str, value: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, f"    {key}: {value}").close()
    message = str(raised.value)
    assert f'key "{key}"' in message and "\n" not in message and 'type "Laser"' in message


def test_rates_adding_up_to_more_than_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, "    dropout_rate: 0.6\n    max_range_rate: 0.5").close()
    message = str(raised.value)
    assert 'key "max_range_rate"' in message and "dropout_rate (0.6)" in message and "\n" not in message
