"""The server node on a world without people, cameras or live view imports none of their models
(checked in a fresh process, whose modules are its own)."""

from __future__ import annotations

import json
import subprocess
import sys

from test.conftest import REPO_ROOT
from test.core.test_world_imports import BENCHMARK_WORLD, UNUSED_AT_REST, loaded

#: Makes the node (as ``python -m sim_server`` does, without its live view) on a world, steps it
#: a second and prints the names of the loaded modules as JSON.
NODE_AT_REST = """
import json, sys
import rclpy
from rclpy.parameter import Parameter
from sim_server.node_view import live_view_of
from sim_server.ros.server_node import SimServerNode
rclpy.init()
node = SimServerNode(
    parameter_overrides=[Parameter("world_path", value=sys.argv[1]), Parameter("show_viz", value=False)],
    live_view=live_view_of,
)
node.world.step(round(1.0 / node.world.time.step_size))
print(json.dumps(sorted(sys.modules)))
node.destroy_node()
rclpy.try_shutdown()
"""


def test_the_node_on_a_world_without_people_imports_no_crowd_model_renderer_or_live_view() -> None:
    result = subprocess.run(
        [sys.executable, "-c", NODE_AT_REST, str(BENCHMARK_WORLD)], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    modules = set(json.loads(result.stdout.splitlines()[-1]))
    assert "sim_server.ros.pedestrians" in modules  # the node's publishers are there, idle
    assert loaded(modules, UNUSED_AT_REST) == []
