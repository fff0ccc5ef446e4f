"""RLlib's example of the learning page runs as written: PPO with a NavigationVectorEnv in each
env runner trains one iteration. Skipped where RLlib or PyTorch is not installed (neither is by
``make setup``: PyTorch is several GB)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("ray.rllib", reason="RLlib (ray[rllib]: dm-tree, pydantic) is not installed by make setup")
pytest.importorskip("torch", reason="RLlib's PyTorch is not installed by make setup")

from test.conftest import REPO_ROOT  # noqa: E402
from test.test_docs import NO_ROS, learning_examples  # noqa: E402

#: Longest the example may take (s): Ray's start, the runners' and learner's build, one iteration.
EXAMPLE_TIMEOUT = 600.0
#: Checked before the example stops its algorithm: each runner holds one vector environment of
#: all its worlds, and the iteration sampled its batch.
CHECK = """
runners = algo.env_runner_group.foreach_env_runner(
    lambda runner: (type(runner.env.unwrapped).__name__, runner.num_envs), local_env_runner=False)
assert runners == [("NavigationVectorEnv", 64)] * 2, runners
assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 2048, result["env_runners"]
"""


def test_rllib_example_trains_an_iteration_with_a_vector_environment_per_runner() -> None:
    (example,) = learning_examples()[1]
    assert example.count("algo.stop()") == 1
    code = example.replace("algo.stop()", CHECK + "algo.stop()") + NO_ROS
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=EXAMPLE_TIMEOUT)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "environment steps sampled" in result.stdout, result.stdout
