"""``python -m sim_server.record``: what a user types. Files written, robots driven by a command or
a script, and every bad argument, world or script answered in one line (no traceback) with the
exit code; Ctrl-C keeps what was recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from sim_server.record import main
from test.conftest import DEMO_WORLD, REPO_ROOT
from test.live.full_files import RECORDING_BOUNDS

TUNNEL_WORLD = REPO_ROOT / "config" / "worlds" / "tunnel" / "world.yaml"


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in args])
    except SystemExit as exit_:  # argparse
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_gif_of_the_demo_driven_by_a_command(capsys, tmp_path: Path) -> None:
    out = tmp_path / "office.gif"
    code, said, err = run(capsys, DEMO_WORLD, "--seconds", "2", "--drive", "cleaner1", "0.5", "0.3",
                          "--lasers", "--trails", "--out", out)
    assert code == 0, err
    assert said.startswith(f"wrote {out}: 21 frame(s) of 512 x ") and "2.00 s of sim time" in said
    with Image.open(out) as gif:
        assert gif.size[0] == 512 and gif.n_frames > 1


def test_a_followed_turning_view_of_the_tunnel_with_levels(capsys, tmp_path: Path) -> None:
    out = tmp_path / "tunnel.png"
    code, said, err = run(capsys, TUNNEL_WORLD, "--levels", "--seconds", "3", "--follow", "hauler", "--turn",
                          "--field", "10", "20", "--pixels", "100", "--drive", "hauler", "2", "0", "--out", out)
    assert code == 0, err
    picture = np.asarray(Image.open(out).convert("RGB"))
    assert picture.shape == (100, 50, 3)
    # Heading up: the tunnel's walls (along x, 4 m apart) run up the picture, left and right of
    # the robot, from the top down to the tunnel's mouth 8 m behind it.
    walls = (picture != (48, 48, 48)).any(axis=2)
    assert walls[:80, :20].any(axis=1).all() and walls[:80, 30:].any(axis=1).all()


def test_a_script_drives_the_robots(capsys, tmp_path: Path) -> None:
    script = tmp_path / "control.py"
    script.write_text(
        "def control(world):\n"
        "    drive = world.plugins.find(world.model('hauler'), 'drive')\n"
        "    drive.command.linear = 1.0 if world.time.sim_time < 1.0 else 0.0\n"
    )
    out = tmp_path / "end.png"
    code, said, err = run(capsys, TUNNEL_WORLD, "--seconds", "2", "--script", script, "--view", "5", "0", "10", "4", "--out", out)
    assert code == 0, err
    picture = np.asarray(Image.open(out).convert("RGB"))
    assert picture.shape == (205, 512, 3)


SCRIPTS = {
    "syntax": ("def control(world)\n    pass\n", "control.py:1: SyntaxError"),
    "raises when loaded": ("x = 1\nraise RuntimeError('no')\n", "control.py:2: RuntimeError: no"),
    "raises when called": ("def control(world):\n    return 1 / 0\n", "control.py:2: ZeroDivisionError"),
    "a message of many lines": ("def control(world):\n    raise ValueError('one\\ntwo')\n", "control.py:2: ValueError: one ..."),
    "sys.exit": ("import sys\ndef control(world):\n    sys.exit(7)\n", "control.py:3: SystemExit: the script exited (7)"),
    "KeyboardInterrupt": ("def control(world):\n    raise KeyboardInterrupt\n", "control.py:2: KeyboardInterrupt"),
    "a BaseException": ("class Odd(BaseException):\n    pass\ndef control(world):\n    raise Odd('x')\n", "control.py:4: Odd: x"),
    "breaks the world": ("def control(world):\n    world.time.step_size = 0\n", "the run failed: "),
    "no control": ("def steer(world):\n    pass\n", "defines no function control(world)"),
    "bad command": ("def control(world):\n    world.plugins.find(world.model('hauler'), 'drive').command.linear = float('nan')\n",
                    "control.py:2: ValueError"),
}


@pytest.mark.parametrize("case", SCRIPTS)
def test_a_failing_script_is_one_line_naming_its_line(capsys, tmp_path: Path, case: str) -> None:
    text, fault = SCRIPTS[case]
    script = tmp_path / "control.py"
    script.write_text(text)
    code, said, err = run(capsys, TUNNEL_WORLD, "--seconds", "1", "--script", script, "--out", tmp_path / "x.gif")
    lines = err.strip().splitlines()
    assert code in (1, 2) and fault in lines[-1], err
    assert "Traceback" not in err and all(line.startswith("python -m sim_server.record: ") for line in lines)
    assert len(lines) == 1 or case == "breaks the world"  # where plugins fail, their warnings come first
    assert not (tmp_path / "x.gif").exists()  # a failed recording leaves no file


BAD = [
    (["--seconds", "-1"], 2, "seconds"),
    (["--seconds", "nan"], 2, "seconds"),
    (["--seconds", "abc"], 2, "invalid float"),
    (["--fps", "0"], 2, "frames a second"),
    (["--speed", "-1"], 2, "speed"),
    (["--pixels", "0"], 2, "--pixels"),
    (["--pixels", "100000"], 2, "--pixels"),
    (["--out", "run.avi"], 2, "must end in"),
    (["--out", "/no/such/folder/run.gif"], 2, "does not exist"),
    (["--view", "0", "0", "0", "5"], 2, "width and a height > 0"),
    (["--view", "nan", "0", "5", "5"], 2, "finite"),
    (["--follow", "nobody"], 2, 'no model "nobody"'),
    (["--follow", "cleaner1", "--view", "0", "0", "5", "5"], 2, "cannot be used together"),
    (["--turn"], 2, "go with --follow"),
    (["--follow", "cleaner1", "--field", "-1", "5"], 2, "width and a height > 0"),
    (["--drive", "nobody", "1", "0"], 2, 'no model "nobody"'),
    (["--drive", "cleaner1", "fast", "0"], 2, "must be numbers"),
    (["--drive", "cleaner1", "1e9", "0"], 2, "--drive cleaner1"),
    (["--drive", "walker1", "1", "0"], 2, "has no drive"),
    (["--step-size", "0"], 2, "--step-size"),
    (["--step-size", "2"], 2, "--step-size"),
    (["--step-size", "1e-300"], 2, "--step-size"),
    (["--seed", "-1"], 2, "--seed"),
    (["--seconds", "1e308"], 2, "at most"),
    (["--fps", "0.001"], 2, "frames a second must be from 0.01"),
    (["--fps", "5e-324"], 2, "frames a second"),
    (["--speed", "1e-320", "--fps", "120"], 2, "speed must be from"),
    (["--view", "0", "0", "1e-310", "1e-310"], 2, "sides of at least"),
    (["--follow", "cleaner1", "--field", "1e-320", "1e-320"], 2, "sides of at least"),
    (["--pixels", "8192", "--seconds", "10"], 2, "more than a GIF is allowed to hold"),
    (["--script", "/no/such/script.py"], 2, "is not a file"),
    (["--seconds", "100", "--fps", "100"], 2, "more than a GIF holds"),
    (["--seconds", "1000", "--fps", "100", "--out", "run.mp4"], 2, "at most 100000"),
]


@pytest.mark.parametrize("extra, code, fault", BAD, ids=[" ".join(b[0]) for b in BAD])
def test_bad_arguments_are_one_line_and_code_2(capsys, tmp_path: Path, extra: list[str], code: int, fault: str) -> None:
    os.chdir(tmp_path)
    got, said, err = run(capsys, DEMO_WORLD, *extra)
    assert got == code and fault in err, err
    assert "Traceback" not in err and not said
    if fault != "invalid float":  # argparse's own errors come after its usage lines
        assert err.startswith("python -m sim_server.record: error: ") and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize("text, fault", [
    (None, "does not exist"),
    ("models: [", "world.yaml"),
    ("properties: {}\nmodels:\n  - {name: a, model: none.yaml}\n", "none.yaml"),
])
def test_a_bad_world_is_one_line_and_code_1(capsys, tmp_path: Path, text: str | None, fault: str) -> None:
    world = tmp_path / "world.yaml"
    if text is not None:
        world.write_text(text)
    code, said, err = run(capsys, world, "--out", tmp_path / "x.gif")
    assert code == 1 and fault in err and "Traceback" not in err


def test_plugin_warnings_are_one_line_each(capsys, tmp_path: Path) -> None:
    """A script that breaks the world's time makes the cleaner's drive fail: the simulator's
    warnings (the plugin disabled) come as lines of ours, without tracebacks."""
    script = tmp_path / "control.py"
    script.write_text("def control(world):\n    world.time.step_size = 0\n")
    code, _, err = run(capsys, DEMO_WORLD, "--seconds", "1", "--script", script, "--out", tmp_path / "x.gif")
    lines = err.strip().splitlines()
    assert code == 1 and "Traceback" not in err and len(lines) >= 2
    assert all(line.startswith("python -m sim_server.record: ") for line in lines)
    assert any('plugin "cleaner_drive" (type "TricycleDrive")' in line and "is disabled" in line for line in lines)


def test_an_mp4_says_the_size_it_wrote(capsys, tmp_path: Path) -> None:
    out = tmp_path / "odd.mp4"
    code, said, err = run(capsys, DEMO_WORLD, "--seconds", "0.2", "--pixels", "101", "--out", out)
    assert code == 0, err
    import av

    with av.open(str(out)) as video:
        stream = video.streams.video[0]
        assert f"of {stream.width} x {stream.height} pixels" in said and stream.width == 100


def test_a_followed_model_that_leaves_ends_the_run_with_code_1(capsys, tmp_path: Path) -> None:
    script = tmp_path / "control.py"
    script.write_text("def control(world):\n    if world.time.sim_time > 0.5 and 'hauler' in world.models:\n        world.delete_model('hauler')\n")
    out = tmp_path / "x.mp4"
    code, said, err = run(capsys, TUNNEL_WORLD, "--seconds", "2", "--script", script, "--follow", "hauler", "--out", out)
    assert code == 1 and 'model "hauler" left the world at 0.600 s' in err and "Traceback" not in err
    assert not out.exists()


def test_help_works(capsys) -> None:
    code, said, _ = run(capsys, "--help")
    assert code == 0 and "--seconds" in said and "--drive MODEL LINEAR ANGULAR" in said


def test_a_failed_run_leaves_an_existing_file_as_it_was(capsys, tmp_path: Path) -> None:
    script = tmp_path / "control.py"
    script.write_text("def control(world):\n    if world.time.sim_time > 0.3:\n        raise RuntimeError('stop')\n")
    for name in ("keep.gif", "keep.mp4", "keep.png"):
        out = tmp_path / name
        out.write_text("old")
        code, _, err = run(capsys, TUNNEL_WORLD, "--seconds", "1", "--script", script, "--out", out)
        assert code == 1 and "RuntimeError: stop" in err
        assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["control.py", "keep.gif", "keep.mp4", "keep.png"]


def test_targets_that_are_not_writable_files_are_refused_before_the_run(capsys, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.gif"
    os.mkfifo(fifo)
    (tmp_path / "folder.gif").mkdir()
    locked = tmp_path / "locked.png"
    locked.write_text("old")
    locked.chmod(0o444)
    cases = [(fifo, "not a regular file"), (tmp_path / "folder.gif", "not a regular file")]
    if os.geteuid() != 0:  # root may write anyway
        cases.append((locked, "cannot be written"))
    for out, fault in cases:
        code, said, err = run(capsys, DEMO_WORLD, "--seconds", "1", "--out", out)
        assert code == 2 and fault in err and not said, err
    assert fifo.is_fifo() and locked.read_text() == "old"


LONG_RUNS = {
    "a long run": ["--seconds", "3000", "--fps", "30"],
    "a script that never returns": ["--seconds", "10", "--script", "SCRIPT"],
    "two million steps between frames": ["--seconds", "20000", "--speed", "10000", "--fps", "1"],
}


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("case", LONG_RUNS)
def test_a_signal_stops_early_and_keeps_the_recording(tmp_path: Path, number: int, case: str) -> None:
    out = tmp_path / "long.mp4"
    script = tmp_path / "forever.py"
    script.write_text("import time\ndef control(world):\n    if world.time.sim_time > 0.05:\n        while True:\n            time.sleep(0.01)\n")
    extra = [str(script) if a == "SCRIPT" else a for a in LONG_RUNS[case]]
    process = subprocess.Popen(
        [sys.executable, "-m", "sim_server.record", str(DEMO_WORLD), *extra, "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
    )
    partial = lambda: list(tmp_path.glob(".long.partial-*.mp4"))  # noqa: E731 - the file being written
    deadline = time.monotonic() + 60
    while not partial() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    time.sleep(1.0)  # into the run
    process.send_signal(number)
    said, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "(stopped early)" in said and "Traceback" not in err
    import av

    with av.open(str(out)) as video:
        assert sum(1 for _ in video.decode(video=0)) >= 1


# ---------------------------------------------------------------------------------- full disks
#: Per format: the options of a run and the bytes a file may hold (the run's file needs more).
FORMATS_FILLED = {
    "mcap": (["--seconds", "600"], 300_000),
    "gif": (["--seconds", "5", "--pixels", "400", "--lasers"], 5_000),
    "mp4": (["--seconds", "30", "--pixels", "400"], 20_000),
}


@pytest.mark.parametrize("kind", FORMATS_FILLED)
def test_a_file_that_cannot_grow_is_one_line_exit_1_and_the_old_file_stays(tmp_path: Path, kind: str) -> None:
    """A real limit on the size of the files the process writes (EFBIG "File too large", as a
    full disk's ENOSPC): one line naming the file and the reason, none of the SDK's error lines,
    exit 1, what was at the target kept, nothing hidden left; for MCAP the run stopped in the
    step whose write failed (a script, called before every step, sees whether it ran on)."""
    from test.live.full_files import TOO_LARGE, fill_numba_cache, hidden_files, run_with_file_size_limit

    fill_numba_cache(DEMO_WORLD)
    out = tmp_path / f"run.{kind}"
    out.write_bytes(b"old")
    options, limit = FORMATS_FILLED[kind]
    report = tmp_path / "steps.json"
    script = tmp_path / "control.py"
    script.write_text(
        "import atexit, json\nfrom pathlib import Path\n"
        f"FOLDER, LIMIT, REPORT = Path({str(tmp_path)!r}), {limit}, Path({str(report)!r})\n"
        "seen = {'steps': 0, 'after_full': 0}\n"
        "def control(world):\n"
        "    seen['steps'] += 1\n"
        "    sizes = [p.stat().st_size for p in FOLDER.glob('.run.partial-*')]\n"
        "    if not sizes or max(sizes) >= LIMIT:  # the write that failed filled it to the limit\n"
        "        seen['after_full'] += 1\n"
        "atexit.register(lambda: REPORT.write_text(json.dumps(seen)))\n"
    )
    result = run_with_file_size_limit(["-m", "sim_server.record", str(DEMO_WORLD), *options,
                                       "--script", str(script), "--out", str(out)], limit)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [f"python -m sim_server.record: error: cannot write {out}: {TOO_LARGE}"]
    assert out.read_bytes() == b"old" and not hidden_files(tmp_path) and not result.stdout
    if kind == "mcap":  # written as the run goes: it stopped where the file was full
        import json

        seen = json.loads(report.read_text())
        assert seen["after_full"] == 0 and 0 < seen["steps"] < 600 / 0.005 / 10, seen


# ---------------------------------------------------------------------------------- bad targets
def test_mcap_targets_that_cannot_be_recorded_to_are_one_line_and_code_2(capsys, tmp_path: Path) -> None:
    from test.live.full_files import bad_targets

    cases = bad_targets(tmp_path) | {"a name without .mcap": (tmp_path / "run.bag", "must end in")}
    for case, (out, fault) in cases.items():
        before = sorted(p.name for p in tmp_path.iterdir())
        code, said, err = run(capsys, DEMO_WORLD, "--seconds", "0.2", "--out", out)
        if fault is None:
            assert code == 0 and said.startswith(f"wrote {out}: 3 update(s)") and not out.is_symlink(), (case, err)
            continue
        lines = err.splitlines()
        assert code == 2 and len(lines) == 1 and fault in lines[0] and not said, (case, err)
        assert lines[0].startswith("python -m sim_server.record: error: ") and len(lines[0]) < 600, case
        assert sorted(p.name for p in tmp_path.iterdir()) == before, case
    assert (tmp_path / "linked.bin").read_bytes() == b"linked"


BOUNDS = [([f"--{option}", value], fault) for option, value, fault in RECORDING_BOUNDS]


@pytest.mark.parametrize(("extra", "fault"), BOUNDS, ids=[" ".join(b[0]) for b in BOUNDS])
def test_the_bounds_of_an_mcap_recording_at_their_limits(capsys, tmp_path: Path, extra: list[str], fault: str | None) -> None:
    out = tmp_path / "run.mcap"
    code, said, err = run(capsys, DEMO_WORLD, "--seconds", "0.2", "--out", out, *extra)
    if fault is None:
        assert code == 0 and said.startswith(f"wrote {out}: 3 update(s)"), err
        assert [p.name for p in tmp_path.iterdir()] == ["run.mcap"]
    else:
        assert code == 2 and err.count("\n") == 1 and fault in err and not list(tmp_path.iterdir()), err


def test_keeping_one_file_of_a_long_run_leaves_the_newest_whole(capsys, tmp_path: Path) -> None:
    from mcap.reader import make_reader

    out = tmp_path / "run.mcap"
    out.write_bytes(b"an older run's")
    code, said, err = run(capsys, TUNNEL_WORLD.parent.parent / "crowd" / "world.yaml", "--seconds", "30",
                          "--max-mib", "1", "--keep", "1", "--out", out)
    kept = [p.name for p in tmp_path.iterdir()]
    assert code == 0 and len(kept) == 1 and kept[0].startswith("run.") and kept[0] != "run.mcap", (err, kept)
    assert f"(and {kept[0]})" not in said and kept[0] in said
    with (tmp_path / kept[0]).open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary.statistics.channel_message_counts  # whole: it has its summary


# ---------------------------------------------------------------------------------- stop signals
#: When the signals come: a moment after the program took them over (Python importing, the world
#: loading: where each lands varies, the outcome must not), while stepping (the file being
#: written exists), as the file is written at the end, and after "wrote ..." (the teardown).
PHASES = ("at 0 s", "at 0.4 s", "at 0.9 s", "stepping", "writing", "teardown")
SIGNAL_CASES = [
    (kind, phase, 1 + index % 3, STOP[index % 2])
    for index, (kind, phase) in enumerate((k, p) for k in ("gif", "mcap") for p in PHASES)
    for STOP in [(signal.SIGINT, signal.SIGTERM)]
]


@pytest.mark.parametrize(("kind", "phase", "count", "number"), SIGNAL_CASES,
                         ids=[f"{k}-{p}-{c}x{signal.Signals(n).name}" for k, p, c, n in SIGNAL_CASES])
def test_stop_signals_at_any_moment_end_with_exit_0_and_a_whole_file_or_none(
        tmp_path: Path, kind: str, phase: str, count: int, number: int) -> None:
    from test.test_stop_signals import Watched, file_of_size

    out = tmp_path / f"run.{kind}"
    stepping = tmp_path / "stepping"  # made by the script once the run is 0.5 s of sim time in
    script = tmp_path / "mark.py"
    script.write_text("from pathlib import Path\ndef control(world):\n"
                      f"    if world.time.sim_time >= 0.5:\n        Path({str(stepping)!r}).touch()\n")
    extra = ["--seconds", "60", "--script", str(script)] if phase == "stepping" else ["--seconds", "1"]
    watched = Watched(["-m", "sim_server.record", str(DEMO_WORLD), *extra, "--pixels", "200", "--out", str(out)], REPO_ROOT)
    partial = lambda: list(tmp_path.glob(".run.partial-*"))  # noqa: E731 - the file being written
    if phase.startswith("at "):
        watched.until(lambda: watched.handles(signal.SIGTERM), "handling stop signals")
        time.sleep(float(phase.split()[1]))  # not a timing assert: only where the signals land varies
    elif phase == "stepping":
        watched.until(stepping.exists, "stepping")
    elif phase == "writing":  # a GIF is written at the end; an MCAP is put in place then
        watched.until(lambda: file_of_size(partial)() or out.exists(), "writing the file")
    else:
        watched.until(lambda: watched.said("wrote "), "done")
    watched.signal(number, count)
    code, said, err = watched.finish()
    assert code == 0, (said, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "rror" not in err, err
    assert not list(tmp_path.glob(".*")), list(tmp_path.iterdir())
    if phase == "stepping":
        assert "(stopped early)" in said, said
    if out.exists():
        assert said.startswith(f"wrote {out}: ")
        _assert_whole(out, kind)
    else:
        assert said in ("", "stopped before the recording began; nothing written\n"), said


def _assert_whole(out: Path, kind: str) -> None:
    if kind == "gif":
        with Image.open(out) as gif:
            assert gif.n_frames >= 1
            gif.seek(gif.n_frames - 1)
            gif.load()
        return
    from mcap.reader import make_reader

    with out.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/scene"] >= 1 and counts["/tf"] == counts["/scene"]
