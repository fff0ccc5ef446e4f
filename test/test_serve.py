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
from pathlib import Path

import pytest

from sim_server.serve import main
from test.conftest import REPO_ROOT
from test.live.client import Client

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
