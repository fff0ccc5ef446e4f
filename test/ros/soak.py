"""The spawn/delete soak, run by ``test_abuse.py`` in a pytest process of its own (this file's
name keeps pytest from collecting it with the others): 1,000 cycles of spawning and deleting a
robot leave the server's memory flat."""

from __future__ import annotations

import math
import os

import pytest
from geometry_msgs.msg import Pose2D

from sim_msgs.srv import DeleteModel, SpawnModel
from test.conftest import DEMO_WORLD
from test.ros.conftest import Harness

SOAK_CYCLES = 800
#: Cycles before measuring: long enough that one-off growth of the heap (an arena of the
#: allocator taken once, seen once at 1.2 MB in the cycles 200-400 of a fresh-clone run, flat
#: afterwards) falls in the warm-up, and what is measured is growth that goes on.
SOAK_WARM_UP = 400
#: Largest RSS growth over the soak after warm-up (the issue's bound).
SOAK_GROWTH_LIMIT = 1024 * 1024


@pytest.fixture
def demo(ros_context):
    harness = Harness(ros_context, DEMO_WORLD, show_viz=True)
    yield harness
    harness.close()


def _rss() -> int:
    with open(f"/proc/{os.getpid()}/statm") as stream:
        return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_spawn_delete_soak_keeps_memory_flat(demo: Harness) -> None:
    def cycle(index: int) -> None:
        request = SpawnModel.Request(yaml_path="turtlebot.model.yaml", name="soak", ns="soak_ns", pose=Pose2D(x=2.0, y=2.0))
        assert demo.server.world_services._spawn_model(request, SpawnModel.Response()).success
        deleted = demo.server.world_services._delete_model(DeleteModel.Request(name="soak"), DeleteModel.Response())
        assert deleted.success
        if index % 50 == 0:
            demo.run_ticks(2)
            demo.server.forget_destroyed_entities()

    for index in range(SOAK_WARM_UP):
        cycle(index)
    start = _rss()
    curve = []
    for index in range(SOAK_CYCLES):
        cycle(index)
        if index % 200 == 199:
            curve.append(_rss() - start)
    print("RSS growth (bytes) every 200 cycles:", curve)
    assert curve[-1] < SOAK_GROWTH_LIMIT, curve
    steps = demo.server.world.time.iterations
    demo.run_until(lambda: demo.server.world.time.iterations > steps + 5, "steps after the soak")
    for body in demo.server.world.physics.bodies:
        assert math.isfinite(body.position[0]) and math.isfinite(body.position[1]) and math.isfinite(body.angle)
