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
