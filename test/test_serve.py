"""``python -m sim_server.serve WORLD``: the world live in real time for a client of the
protocol, which pauses, steps and drives it; signals end it with exit 0; arguments that cannot be
used are one line."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcap.reader import make_reader

from sim_server.serve import main
from test.conftest import REPO_ROOT
from test.live.client import Client
from test.live.full_files import RECORDING_BOUNDS

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_client_pauses_steps_and_drives_the_served_world_and_a_signal_ends_it(number: int) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "sim_server.serve", str(CROWD_WORLD), "--port", "0", "--speed", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
    )
    try:
        first = process.stdout.readline()
        url = re.search(r"ws://localhost:\d+", first)
        assert url, first + process.stderr.read()
        client = Client(url.group(0))
        try:
            assert client.call("/pause", {})["success"]
            stepped = client.call("/step_world", {"steps": 20})
            assert stepped["success"] and "stepped 20 time(s)" in stepped["message"], stepped
            assert client.call("/resume", {})["success"]
            client.publish(client.advertise("/cmd_vel"), {"linear": {"x": 0.5}})
            client.until(lambda: "/scene" in client.topics())
        finally:
            client.close()
        process.send_signal(number)
        said, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "stopped at sim time" in said and "Traceback" not in err


def test_a_run_of_given_seconds_ends_by_itself_and_writes_the_layout_asked_for(capsys, tmp_path: Path) -> None:
    layout = tmp_path / "layout.json"
    assert main([str(CROWD_WORLD), "--port", "0", "--seconds", "0.2", "--speed", "0", "--watch-only", "--layout", str(layout)]) == 0
    assert "stopped at sim time 0.200 s" in capsys.readouterr().out
    assert json.loads(layout.read_text())["configById"]["Teleop!sim"]["topic"] == "/cmd_vel"


def test_a_port_in_use_is_one_line_and_code_2(capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        code = main([str(CROWD_WORLD), "--port", str(taken.getsockname()[1]), "--seconds", "0.1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "cannot serve on 127.0.0.1" in err


@pytest.mark.parametrize(("extra", "code", "fault"), [
    (["--speed", "-1"], 2, "speed"),
    (["--seconds", "nan"], 2, "seconds"),
    (["--rate", "0"], 2, "rate"),
    (["--port", "70000"], 2, "port"),
    (["--record", "run.bag"], 2, ".mcap"),
    (["--step-size", "5"], 2, "--step-size"),
    (["--seed", "-4"], 2, "--seed"),
])
def test_bad_arguments_are_one_line(capsys, extra: list[str], code: int, fault: str) -> None:
    assert main([str(CROWD_WORLD), "--port", "0", *extra]) == code
    err = capsys.readouterr().err
    assert fault in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_world_that_does_not_load_is_one_line_and_code_1(capsys, tmp_path: Path) -> None:
    assert main([str(tmp_path / "missing.yaml"), "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert "missing.yaml" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------------- the recording
def test_a_recording_is_put_over_the_old_file_once_complete(capsys, tmp_path: Path) -> None:
    out = tmp_path / "run.mcap"
    out.write_bytes(b"old")
    assert main([str(CROWD_WORLD), "--port", "0", "--seconds", "0.5", "--speed", "0", "--record", str(out)]) == 0
    with out.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert sum(summary.statistics.channel_message_counts.values()) > 10
    assert [p.name for p in tmp_path.iterdir()] == ["run.mcap"]


def test_a_file_that_cannot_grow_ends_the_run_with_one_line_and_exit_1(tmp_path: Path) -> None:
    """A real limit on the size of the process's files (EFBIG): one line naming the file and
    the reason, none of the SDK's error lines, exit 1, the old file kept, nothing hidden left."""
    from test.live.full_files import TOO_LARGE, fill_numba_cache, hidden_files, run_with_file_size_limit

    fill_numba_cache(CROWD_WORLD)
    out = tmp_path / "run.mcap"
    out.write_bytes(b"old")
    result = run_with_file_size_limit(["-m", "sim_server.serve", str(CROWD_WORLD), "--port", "0", "--speed", "0",
                                       "--seconds", "600", "--record", str(out)], 300_000)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [f"python -m sim_server.serve: error: cannot write {out}: {TOO_LARGE}"]
    assert result.stdout.startswith("serving ") and "stopped at" not in result.stdout
    assert out.read_bytes() == b"old" and not hidden_files(tmp_path)


def test_a_full_disk_ends_the_run_in_the_step_whose_write_failed(capsys, tmp_path: Path, monkeypatch) -> None:
    from sim_server.core.world import World
    from test.live.full_files import NO_SPACE, fill_up_after, hidden_files

    made = fill_up_after(monkeypatch, 200_000)
    steps = {"all": 0, "after": 0}
    real_step = World.step

    def step(self, *args, **kwargs):
        if made and made[0].failed_writes:
            steps["after"] += 1  # a step begun once a write had failed
        steps["all"] += 1
        return real_step(self, *args, **kwargs)

    monkeypatch.setattr(World, "step", step)
    out = tmp_path / "run.mcap"
    assert main([str(CROWD_WORLD), "--port", "0", "--speed", "0", "--seconds", "600", "--record", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"python -m sim_server.serve: error: cannot write {out}: {NO_SPACE}\n"
    assert steps["after"] == 0 and 0 < steps["all"] < 600 / 0.005 / 10 and made[0].failed_writes == 1
    assert not out.exists() and not hidden_files(tmp_path)


def test_record_targets_that_cannot_be_used_are_one_line_and_code_2(capsys, tmp_path: Path) -> None:
    from test.live.full_files import bad_targets

    cases = bad_targets(tmp_path) | {"a name without .mcap": (tmp_path / "run.bag", ".mcap")}
    for case, (out, fault) in cases.items():
        before = sorted(p.name for p in tmp_path.iterdir())
        code = main([str(CROWD_WORLD), "--port", "0", "--seconds", "0.1", "--speed", "0", "--record", str(out)])
        said, err = capsys.readouterr()
        if fault is None:
            assert code == 0 and not out.is_symlink() and out.stat().st_size > 1000, (case, err)
            continue
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1 and fault in lines[0] and "serving" not in said, (case, err)
        assert lines[0].startswith("python -m sim_server.serve: error: ") and len(lines[0]) < 600, case
        assert sorted(p.name for p in tmp_path.iterdir()) == before, case


@pytest.mark.parametrize(("extra", "fault"), [([f"--record-{option}", value], fault) for option, value, fault in RECORDING_BOUNDS])
def test_the_bounds_of_a_recording_at_their_limits(capsys, tmp_path: Path, extra: list[str], fault: str | None) -> None:
    out = tmp_path / "run.mcap"
    code = main([str(CROWD_WORLD), "--port", "0", "--seconds", "0.1", "--speed", "0", "--record", str(out), *extra])
    err = capsys.readouterr().err
    if fault is None:
        assert code == 0 and [p.name for p in tmp_path.iterdir()] == ["run.mcap"], err
    else:
        assert code == 2 and err.count("\n") == 1 and fault in err and not list(tmp_path.iterdir()), err


# ---------------------------------------------------------------------------------- stop signals
#: When the signals come: a moment after the program took them over (Python importing, the world
#: loading), while serving and recording, and once it said it stopped (the end: the file
#: written, the teardown).
PHASES = ("at 0 s", "at 0.4 s", "at 0.9 s", "serving", "ending")
SIGNAL_CASES = [(phase, 1 + index % 3, (signal.SIGINT, signal.SIGTERM)[index % 2]) for index, phase in enumerate(PHASES)]
SIGNAL_CASES += [(phase, 3 - index % 3, (signal.SIGTERM, signal.SIGINT)[index % 2]) for index, phase in enumerate(PHASES)]


@pytest.mark.parametrize(("phase", "count", "number"), SIGNAL_CASES,
                         ids=[f"{p}-{c}x{signal.Signals(n).name}" for p, c, n in SIGNAL_CASES])
def test_stop_signals_at_any_moment_end_with_exit_0_and_a_whole_recording(tmp_path: Path, phase: str, count: int, number: int) -> None:
    from test.test_stop_signals import Watched, file_of_size

    out = tmp_path / "run.mcap"
    watched = Watched(["-m", "sim_server.serve", str(CROWD_WORLD), "--port", "0", "--speed", "4", "--record", str(out)], REPO_ROOT)
    if phase.startswith("at "):
        watched.until(lambda: watched.handles(signal.SIGTERM), "handling stop signals")
        time.sleep(float(phase.split()[1]))  # not a timing assert: only where the signals land varies
        watched.signal(number, count)
    elif phase == "serving":
        watched.until(file_of_size(lambda: list(tmp_path.glob(".run.partial-*"))), "recording")
        watched.signal(number, count)
    else:  # one to stop it, the others once it says so (writing the file's end, tearing down)
        watched.until(lambda: watched.said("serving "), "serving")
        watched.signal(number)
        watched.until(lambda: watched.said("stopped at sim time"), "stopped")
        watched.signal(number, count)
    code, said, err = watched.finish()
    assert code == 0, (said, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "rror" not in err, err
    assert not list(tmp_path.glob(".*")), list(tmp_path.iterdir())
    if phase in ("serving", "ending"):
        assert "stopped at sim time" in said and out.exists(), said
    if out.exists():
        with out.open("rb") as stream:
            summary = make_reader(stream).get_summary()
        counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
        assert counts["/scene"] >= 1 and counts["/tf"] == counts["/scene"]
    else:
        assert "stopped at sim time" not in said, said
