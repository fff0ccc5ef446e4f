"""The README's in-process example runs as written, without rclpy."""

from __future__ import annotations

import re
import subprocess
import sys

from test.conftest import REPO_ROOT


def test_in_process_example_runs_without_ros() -> None:
    text = (REPO_ROOT / "README.md").read_text()
    example = re.search(r"## Using the core without ROS\n\n```python\n(.*?)```", text, re.S).group(1)
    check = example + "\nimport sys\nassert 'rclpy' not in sys.modules, 'the core imported rclpy'\n"
    result = subprocess.run([sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_recording_commands_run_as_written(tmp_path) -> None:
    """The README's ``python -m sim_server.record`` lines, verbatim, in a folder where
    ``config/`` is the repository's (so the files they write land in the test's folder)."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## Pictures and videos, headless", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^python -m sim_server\.record .*$", section, re.M)
    assert len(commands) == 2
    (tmp_path / "config").symlink_to(REPO_ROOT / "config")
    for command in commands:
        arguments = command.split()[1:]
        result = subprocess.run([sys.executable, *arguments], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        out = tmp_path / arguments[arguments.index("--out") + 1]
        assert out.stat().st_size > 10_000 and result.stdout.startswith(f"wrote {out.name}: 201 frame(s)")


def test_learning_examples_run_as_written() -> None:
    """Every Python block of the learning section, as written, each in a process of its own,
    none importing rclpy; the first's picture and observation are checked too."""
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("## Reinforcement learning (Gymnasium, PettingZoo, Ray)", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(examples) == 3
    checks = ["\nassert picture.shape[2] == 3 and env.observation_space.contains(observation)\n", "", ""]
    for example, check in zip(examples, checks):
        check += "import sys\nassert 'rclpy' not in sys.modules, 'the environment imported rclpy'\n"
        result = subprocess.run([sys.executable, "-c", example + check], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
