"""The server as a process: one clear line and exit code 1 for bad input."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test.conftest import LOAD_WORLD_TESTS, REPO_ROOT
from test.test_stop_signals import handles_signal


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


#: A bug the checks missed, raised while the world loads (as a crowd's negative seed once
#: reached numpy's generator and printed a 35-line traceback).
FAILURE_WHILE_LOADING = """
import sys
import sim_server.__main__ as server
import sim_server.ros.server_node as node

def broken(*args, **kwargs):
    raise ValueError("expected non-negative integer\\nsecond line")

node.World.from_file = broken
sys.exit(server.main([sys.argv[0], "--ros-args", "-p", "world_path:=" + sys.argv[1]]))
"""


def test_a_failure_no_check_foresaw_ends_the_server_in_one_line() -> None:
    world_path = LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"
    result = subprocess.run([sys.executable, "-c", FAILURE_WHILE_LOADING, str(world_path)], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    error_lines = [line for line in result.stderr.splitlines() if "error" in line]
    assert error_lines == [
        "sim_server: error: the server failed: ValueError: expected non-negative integer second line"
    ], result.stderr


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
@pytest.mark.parametrize("delay", [0.0, 0.5, 1.2, 2.7])
def test_a_signal_at_any_moment_of_the_start_ends_it_with_exit_0(delay: float, count: int) -> None:
    """Whatever the server is doing (importing rclpy and numba, loading the world, compiling or
    loading the ray caster, running), Ctrl-C ends it cleanly; the delays, counted from the
    moment it takes the stop signals over (before that Python itself starts and has its
    defaults), land in those phases on this machine, and any phase must give the same outcome. ``ros2 launch`` passes Ctrl-C on
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
        deadline = time.monotonic() + 60.0
        while not handles_signal(process, signal.SIGTERM) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)  # until the server has taken the stop signals over (Python's start before)
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
#: cache writer calls back into Python): the Interrupted raised there is dropped by Python.
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
    assert "Traceback" not in output and "Interrupted" not in output, output


#: Runs the server from the command line (``main()``, as ``ros2 run`` and ``python -m`` do) on a
#: world that fails to load, then signals itself as ``ros2 launch`` may once the server is on
#: its way out.
SIGNAL_AFTER_MAIN = """
import os, signal, sys
import sim_server.__main__ as server
sys.argv = [sys.argv[0], "--ros-args", "-p", "world_path:=" + sys.argv[1]]
code = server.main()
print("ignored after main:", [signal.getsignal(s) == signal.SIG_IGN for s in (signal.SIGINT, signal.SIGTERM)])
os.kill(os.getpid(), signal.SIGINT)
os.kill(os.getpid(), signal.SIGTERM)
sys.exit(code)
"""


def test_stop_signals_stay_ignored_once_the_server_is_on_its_way_out() -> None:
    """Python's teardown resets a handler written in Python to the default action, which kills
    with the signal's status: a Ctrl-C that landed while the interpreter and the DDS libraries
    tore down once ended the server with -2 instead of 0. ``main`` run from the command line
    returns with the stop signals ignored, so a signal after it changes nothing."""
    world_path = LOAD_WORLD_TESTS / "does_not_exist" / "world.yaml"
    result = subprocess.run(
        [sys.executable, "-c", SIGNAL_AFTER_MAIN, str(world_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ignored after main: [True, True]" in result.stdout, result.stdout
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr


#: A program of one's own calls ``main(argv)``: its own handlers come back afterwards.
MAIN_IN_A_PROGRAM = """
import signal, sys
import sim_server.__main__ as server
mine = lambda number, frame: print("mine:", number, flush=True)
for number in (signal.SIGINT, signal.SIGTERM):
    signal.signal(number, mine)
code = server.main([sys.argv[0], "--ros-args", "-p", "world_path:=" + sys.argv[1]])
print("mine after main:", [signal.getsignal(s) is mine for s in (signal.SIGINT, signal.SIGTERM)])
signal.raise_signal(signal.SIGTERM)
sys.exit(code)
"""


def test_called_from_a_program_main_gives_it_its_handlers_back() -> None:
    world_path = LOAD_WORLD_TESTS / "does_not_exist" / "world.yaml"
    result = subprocess.run([sys.executable, "-c", MAIN_IN_A_PROGRAM, str(world_path)],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "mine after main: [True, True]" in result.stdout and f"mine: {int(signal.SIGTERM)}" in result.stdout


RECORDING_CASES = [(1, signal.SIGINT), (2, signal.SIGTERM), (3, signal.SIGINT)]


@pytest.mark.parametrize(("count", "number"), RECORDING_CASES, ids=[f"{c}x{signal.Signals(n).name}" for c, n in RECORDING_CASES])
def test_signals_while_the_node_records_leave_a_whole_recording(tmp_path: Path, count: int, number: int) -> None:
    """The node records (``foxglove_record``): 1-3 stop signals while it writes end it with
    exit 0 and the recording complete, in place, readable; nothing hidden is left."""
    from mcap.reader import make_reader

    from test.test_stop_signals import Watched, file_of_size

    out = tmp_path / "run.mcap"
    world_path = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
    watched = Watched(["-m", "sim_server", "--ros-args", "-p", f"world_path:={world_path}", "-p", "update_rate:=0",
                       "-p", f"foxglove_record:={out}"], REPO_ROOT, merge=True)
    watched.until(lambda: watched.said("loaded world"), "loaded")  # a stop while loading records nothing
    watched.until(file_of_size(lambda: list(tmp_path.glob(".run.partial-*"))), "recording")
    watched.signal(number, count)
    code, said, _ = watched.finish()
    assert code == 0, said
    assert "Traceback" not in said and "ERROR" not in said, said
    assert [p.name for p in tmp_path.iterdir()] == ["run.mcap"]
    with out.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary.statistics.channel_message_counts


def test_a_stop_as_the_node_starts_recording_leaves_the_name_as_it_was(tmp_path: Path) -> None:
    """A stop signal as soon as the recording's file is opened (the node still loading, its
    live view being made): exit 0, nothing hidden is left and the name keeps what it had, or
    (a signal that came after loading) holds a whole recording."""
    from mcap.reader import make_reader

    from test.test_stop_signals import Watched, file_of_size

    out = tmp_path / "run.mcap"
    out.write_bytes(b"what was there")
    world_path = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
    watched = Watched(["-m", "sim_server", "--ros-args", "-p", f"world_path:={world_path}", "-p", "update_rate:=0",
                       "-p", f"foxglove_record:={out}"], REPO_ROOT, merge=True)
    watched.until(file_of_size(lambda: list(tmp_path.glob(".run.partial-*"))), "opening the recording")
    watched.signal(signal.SIGINT)
    code, said, _ = watched.finish()
    assert code == 0, said
    assert "Traceback" not in said and "ERROR" not in said, said
    assert [p.name for p in tmp_path.iterdir()] == ["run.mcap"]
    if out.read_bytes() != b"what was there":
        with out.open("rb") as stream:
            counts = make_reader(stream).get_summary().statistics.channel_message_counts
        assert counts, said


def test_a_full_disk_stops_only_the_node_s_recording_with_one_error_line(tmp_path: Path) -> None:
    """``foxglove_record`` on a disk that fills up (a real limit on the size of the process's
    files: EFBIG): one error line in the node's log names the file and the reason, none of the
    SDK's error lines follow, the old file stays, nothing hidden is left, and the node goes on
    serving its live view; a signal then ends it with exit 0."""
    import re

    from test.live.client import Client
    from test.live.full_files import TOO_LARGE, fill_numba_cache, limit_file_size
    from test.test_stop_signals import Watched

    world_path = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
    fill_numba_cache(world_path)
    out = tmp_path / "run.mcap"
    out.write_bytes(b"old")
    watched = Watched(["-m", "sim_server", "--ros-args", "-p", f"world_path:={world_path}", "-p", "update_rate:=0",
                       "-p", "foxglove:=true", "-p", "foxglove_port:=0", "-p", f"foxglove_record:={out}"],
                      REPO_ROOT, merge=True, preexec_fn=lambda: limit_file_size(300_000))
    try:
        watched.until(lambda: watched.said("recording stopped"), "the recording stopped")
        url = re.search(r"ws://localhost:\d+", "".join(watched.out))
        assert url, "".join(watched.out)
        client = Client(url.group(0))
        try:
            client.until(lambda: "/scene" in client.topics())
            client.subscribe("/scene")
            client.until(lambda: len(client.messages.get("/scene", [])) >= 3)  # served after the failure
        finally:
            client.close()
        watched.signal(signal.SIGINT)
    except BaseException:
        watched.process.kill()
        raise
    code, output, _ = watched.finish()
    assert code == 0, output
    errors = [line for line in output.splitlines() if "ERROR" in line or "rror logging" in line or "Traceback" in line]
    assert len(errors) == 1 and errors[0].endswith(f"live view: the recording stopped: cannot write {out}: {TOO_LARGE}"), output
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["run.mcap"]
