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
