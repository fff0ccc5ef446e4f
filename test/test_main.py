"""The server as a process: one clear line and exit code 1 for bad input."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from test.conftest import LOAD_WORLD_TESTS, REPO_ROOT


def run_server(*ros_args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sim_server", "--ros-args", *ros_args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_missing_world_path_exits_1_with_one_line() -> None:
    result = run_server()
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines == ['sim_server: error: parameter "world_path" is required: pass --ros-args -p world_path:=/path/to/world.yaml']


@pytest.mark.parametrize(
    ("case", "facts"),
    [
        ("world_invalid_C", ["world_invalid_C/world.yaml", 'layers[0] ("2d")', '"random_param_1"']),
        ("model_invalid_E", ["turtlebot.model.yaml", 'key "layers"', "random_layer"]),
        ("does_not_exist", ["does_not_exist/world.yaml", "does not exist"]),
    ],
)
def test_invalid_world_exits_1_naming_file_and_key(case: str, facts: list[str]) -> None:
    result = run_server("-p", f"world_path:={LOAD_WORLD_TESTS / case / 'world.yaml'}")
    assert result.returncode == 1
    error_lines = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(error_lines) == 1 and error_lines[0].startswith("sim_server: error: ")
    assert "Traceback" not in result.stderr
    for fact in facts:
        assert fact in error_lines[0]


def finish(process: subprocess.Popen, patience: float) -> str:
    """The rest of the server's output once it exits; if it has not within ``patience``
    seconds, fail with every thread's stack (SIGUSR1 makes the server print them)."""
    try:
        return process.communicate(timeout=patience)[0]
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(2.0)
        process.kill()
        output = process.communicate()[0]
        pytest.fail(f"the server did not exit within {patience:g} s of the signal; its stacks:\n{output}")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("world", ["demo", "levels"])
def test_signals_end_the_server_with_exit_0_and_no_traceback(signum: int, world: str) -> None:
    world_path = REPO_ROOT / "config" / "worlds" / world / "world.yaml"
    process = subprocess.Popen(
        [sys.executable, "-m", "sim_server", "--ros-args", "-p", f"world_path:={world_path}", "-p", "enable_levels:=true"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = []
        for line in process.stdout:  # the server logs its services once the loop is about to run
            lines.append(line)
            if "services:" in line:
                break
        process.send_signal(signum)
        process.send_signal(signum)  # as with ros2 launch: the terminal's and the launcher's
        rest = finish(process, 30.0)
    finally:
        process.kill()
    output = "".join(lines) + rest
    assert process.returncode == 0, output
    assert "Traceback" not in output and "Error" not in output, output


@pytest.mark.parametrize("count", [1, 3])
@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5, 3.0])
def test_a_signal_at_any_moment_of_the_start_ends_it_with_exit_0(delay: float, count: int) -> None:
    """Whatever the server is doing (importing rclpy and numba, loading the world, compiling or
    loading the ray caster, running), Ctrl-C ends it cleanly; the delays land in those phases on
    this machine, and any phase must give the same outcome. ``ros2 launch`` passes Ctrl-C on
    while the terminal sends it too: a few signals in a row end it just as cleanly."""
    world_path = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"
    process = subprocess.Popen(
        [sys.executable, "-m", "sim_server", "--ros-args", "-p", f"world_path:={world_path}"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        time.sleep(delay)  # not a timing assert: only where the signal lands varies
        for _ in range(count):
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            time.sleep(0.002)
        output = finish(process, 60.0)
    finally:
        process.kill()
    assert process.returncode == 0, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output


#: Starts the server in a process whose warm-up receives SIGINT inside a C callback (as numba's
#: cache writer calls back into Python): the _Interrupted raised there is dropped by Python.
SIGNAL_IN_A_CALLBACK = """
import ctypes, os, signal, sys, time
import sim_server.__main__ as server
import sim_server.core.sensing.raycast as raycast

def inside():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)  # the handler runs here, inside the callback

callback = ctypes.CFUNCTYPE(None)(inside)
raycast.warm_up = lambda log=None: callback() or 0.0
sys.exit(server.main([sys.argv[0], "--ros-args", "-p", "world_path:=" + sys.argv[1]]))
"""


def test_a_signal_lost_in_a_c_callback_still_ends_the_server() -> None:
    """The server once ran on after a Ctrl-C that landed while numba wrote its cache (a C
    callback into Python drops the exception the handler raises): it must still stop, with
    exit 0 and no traceback."""
    world_path = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"
    process = subprocess.Popen(
        [sys.executable, "-c", SIGNAL_IN_A_CALLBACK, str(world_path)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        output = finish(process, 60.0)
    finally:
        process.kill()
    assert process.returncode == 0, output
    assert "Traceback" not in output and "_Interrupted" not in output, output


#: Runs the server on a world that fails to load, then signals itself as ``ros2 launch`` may
#: once the server is on its way out.
SIGNAL_AFTER_MAIN = """
import os, signal, sys
import sim_server.__main__ as server
code = server.main([sys.argv[0], "--ros-args", "-p", "world_path:=" + sys.argv[1]])
print("ignored after main:", [signal.getsignal(s) == signal.SIG_IGN for s in (signal.SIGINT, signal.SIGTERM)])
os.kill(os.getpid(), signal.SIGINT)
os.kill(os.getpid(), signal.SIGTERM)
sys.exit(code)
"""


def test_stop_signals_stay_ignored_once_the_server_is_on_its_way_out() -> None:
    """Python's teardown resets a handler written in Python to the default action, which kills
    with the signal's status: a Ctrl-C that landed while the interpreter and the DDS libraries
    tore down once ended the server with -2 instead of 0. ``main`` returns with the stop signals
    ignored, so a signal after it changes nothing."""
    world_path = LOAD_WORLD_TESTS / "does_not_exist" / "world.yaml"
    result = subprocess.run(
        [sys.executable, "-c", SIGNAL_AFTER_MAIN, str(world_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ignored after main: [True, True]" in result.stdout, result.stdout
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr
