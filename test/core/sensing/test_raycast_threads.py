"""Casting on numba's threads: large batches equal the serial cast, and callers on several
Python threads at once neither crash the process nor get other results (numba's fallback
thread pool, "workqueue", aborts on concurrent use: the caster lets one parallel cast run at a
time)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from test.conftest import REPO_ROOT

CONCURRENT_SCANS = textwrap.dedent(
    """
    import tempfile, threading
    from pathlib import Path
    import numpy as np
    from bench import fleet_scenarios
    from sim_server.core import World
    from sim_server.core.sensing.laser_scanner import scan_all
    world = World.from_file(fleet_scenarios.swarm_world(Path(tempfile.mkdtemp()), 300), step_size=0.02)
    world.step(2)
    scanners = [world.plugins.find(model, "ranger").scanner for model in world.models.values()]
    scene = world.plugins.find(world.models["s0"], "ranger").scene
    expected = scan_all(scanners, scene, world.time.iterations)
    assert sum(len(ranges) for ranges, _ in expected) >= 8192  # a parallel batch
    failures = []
    def cast():
        for _ in range(20):
            got = scan_all(scanners, scene, world.time.iterations)
            if not all(np.array_equal(a, b, equal_nan=True) for (a, _), (b, _) in zip(expected, got)):
                failures.append(1)
    threads = [threading.Thread(target=cast) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("failures", len(failures))
    """
)


def test_concurrent_casts_with_the_fallback_thread_pool() -> None:
    environment = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2")
    result = subprocess.run(
        [sys.executable, "-c", CONCURRENT_SCANS], cwd=REPO_ROOT, env=environment, capture_output=True, text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("failures 0"), result.stdout + result.stderr


def test_one_large_scan_is_cut_into_runs_of_beams_that_equal_the_serial_cast() -> None:
    """A 10,000-beam scan among walls, a fixed square and 60 circles: on threads, in runs of
    beams (each finding the circles near the scan again), every range and tag as serially."""
    import numpy as np

    from sim_server.core.sensing import raycast

    rng = np.random.default_rng(3)
    walls = np.array([[-10, -10, 10, -10], [10, -10, 10, 10], [10, 10, -10, 10], [-10, 10, -10, -10], [1, -4, 3, 5]])
    square = np.array([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)] * 2).reshape(1, 8, 2) + (0.2, 1.2)
    ones = np.ones(1, dtype=np.int64)
    fixed = raycast.MovingShapes(square, np.array([4]), ones, ones * 7, np.zeros((0, 3)), ones[:0], ones[:0])
    scene = raycast.StaticScene(walls, np.ones(5, dtype=np.int64), np.arange(5), fixed)
    places = rng.uniform(-9, 9, (200, 2))
    places = places[np.hypot(places[:, 0] - 0.2, places[:, 1] + 0.4) > 2.0][:60]  # none at the laser
    circles = np.column_stack([places, np.full(60, 0.25)])
    people = raycast.MovingShapes(
        np.zeros((0, 8, 2)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
        circles, np.ones(60, dtype=np.int64), np.arange(60) + 100,
    )
    beams = 10_000
    assert beams >= raycast.PARALLEL_MIN_BEAMS
    batch = raycast.ScanBatch.of([(np.linspace(-3.1, 3.1, beams), 25.0, 1)])
    origin = (np.array([0.2]), np.array([-0.4]), np.array([0.3]))
    serial = raycast.cast_scans(batch, *origin, scene, people, parallel=False)
    threaded = raycast.cast_scans(batch, *origin, scene, people, parallel=True)
    assert np.array_equal(serial[0], threaded[0]) and np.array_equal(serial[1], threaded[1])
    seen = set(serial[1].tolist())
    assert len(seen & set(range(100, 160))) > 20 and 7 in seen and seen & {0, 1, 2, 3}  # people, square, walls
