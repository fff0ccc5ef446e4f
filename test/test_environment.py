"""env.sh and the distros (tools/distro.sh): each distro's environment alone on the paths, a
switch in one shell leaving nothing of the other, and a distro the checkout does not set up named
in one line."""

from __future__ import annotations

import os
import subprocess

import pytest

from test.conftest import REPO_ROOT

#: Variables through which one environment could leak into another.
PATH_VARIABLES = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH")
PROBE = (
    'python -c "import os, rclpy, importlib.metadata as m; '
    "print(os.environ['ROS_DISTRO'], m.version('ros-rclpy'), rclpy.__file__)\""
)


def distros() -> tuple[list[str], str]:
    """The distros and the default, as tools/distro.sh names them."""
    out = subprocess.run(
        ["bash", "-c", f'source "{REPO_ROOT / "tools" / "distro.sh"}" && echo "${{SIM_DISTROS[*]}}" && echo "$SIM_DEFAULT_DISTRO"'],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout.split("\n")
    return out[0].split(), out[1]


def shell(script: str, **extra: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key not in ("ROS_DISTRO",)}
    environment.update(extra)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300, env=environment, cwd="/")


def paths_of(output: str) -> dict[str, list[str]]:
    found = {}
    for line in output.splitlines():
        name, _, value = line.partition("=")
        if name in PATH_VARIABLES:
            found[name] = [entry for entry in value.split(":") if entry]
    return found


def test_the_default_is_one_of_the_distros() -> None:
    names, default = distros()
    assert default in names and len(names) == len(set(names)) >= 2


def test_a_distro_not_set_up_here_is_named_in_one_line() -> None:
    for value in ("humble", "rolling", "jazzy kilted", "../x"):
        done = shell(f'source "{REPO_ROOT / "env.sh"}"; echo "status $?"', ROS_DISTRO=value)  # as if exported
        assert "status 1" in done.stdout, done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and f"ROS_DISTRO={value}:" in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_switching_distro_in_one_shell_leaves_nothing_of_the_other() -> None:
    names, _ = distros()
    # set up: tools/setup_env.sh writes .envs/<distro>/env.sh at its end (CI sets up the other
    # distros while the first one's tests run: a half-made environment is not ready)
    ready = [name for name in names if (REPO_ROOT / ".envs" / name / "env.sh").is_file()]
    if len(ready) < 2:
        pytest.skip(f"only {ready} set up here (CI's run of the `ros` tests on the other distros has both)")
    first, second = ready[0], ready[1]
    env_sh = REPO_ROOT / "env.sh"
    script = (
        f'export ROS_DISTRO={first} && source "{env_sh}" && {PROBE} && '
        f'export ROS_DISTRO={second} && source "{env_sh}" && {PROBE} && env'
    )
    done = shell(script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[0] == first and lines[1].split()[0] == second
    assert lines[0].split()[1] != lines[1].split()[1]  # another rclpy
    assert f"/.envs/{second}/" in lines[1].split()[2]
    leaked = {name: [e for e in entries if f"/.envs/{first}/" in e] for name, entries in paths_of(done.stdout).items()}
    assert not any(leaked.values()), leaked
