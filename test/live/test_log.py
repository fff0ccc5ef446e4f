"""A run recorded to MCAP in-process (sim_server.live.log.record_mcap): a write that fails ends
the run in the step it failed in, with one error naming the file and the reason, and leaves
nothing of the run (what was at the target stays); targets that cannot be recorded to are
refused before a step; a stop request keeps what was recorded, readable."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from mcap.reader import make_reader

from sim_server.core import World
from sim_server.live.files import RecordWriteError
from sim_server.live.log import LogError, record_mcap
from test.conftest import REPO_ROOT
from test.live.full_files import NO_SPACE, bad_targets, fill_up_after, hidden_files

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
STEP = 0.005


@pytest.fixture
def world() -> World:
    made = World.from_file(CROWD_WORLD, step_size=STEP, seed=1)
    yield made
    made.close()


def _steps(world: World) -> int:
    return round(world.time.time_ns / (STEP * 1e9))


def test_a_full_disk_ends_the_run_in_the_step_it_happened(world: World, tmp_path: Path, monkeypatch, caplog) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")
    failed_at: list[int] = []
    made = fill_up_after(monkeypatch, 200_000)
    caplog.set_level(logging.DEBUG)

    def watch(current: World) -> None:  # before every step: has a write failed yet?
        if made and made[0].failed_writes and not failed_at:
            failed_at.append(_steps(current))

    with pytest.raises(RecordWriteError) as failed:
        record_mcap(world, target, 600.0, before_step=watch)
    assert str(failed.value) == f"cannot write {target}: {NO_SPACE}"
    assert made[0].failed_writes == 1  # nothing tried after the first refusal
    assert not failed_at  # no step began once a write had failed
    assert 0 < _steps(world) < 600 / STEP / 10  # it filled up early in a long run, and ended there
    assert target.read_bytes() == b"old" and not hidden_files(tmp_path)
    assert not [r for r in caplog.records if r.name.startswith("foxglove")], caplog.text


def test_a_full_disk_while_a_long_run_is_cut_into_files_leaves_nothing_of_it(world: World, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")
    fill_up_after(monkeypatch, 4 * 2**20, 4 * 2**20, 300_000)  # the third file fills the disk
    with pytest.raises(RecordWriteError, match=rf"cannot write {tmp_path}/run\.2\.mcap: {NO_SPACE}"):
        record_mcap(world, target, 600.0, max_bytes=2**20, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"] and target.read_bytes() == b"old"


def test_a_script_that_fails_leaves_what_was_at_the_target(world: World, tmp_path: Path) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")

    def fail(current: World) -> None:
        if current.time.sim_time > 0.2:
            raise RuntimeError("the script broke")

    with pytest.raises(RuntimeError):
        record_mcap(world, target, 5.0, before_step=fail)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"] and target.read_bytes() == b"old"


def test_stopped_early_the_file_is_complete(world: World, tmp_path: Path) -> None:
    target = tmp_path / "run.mcap"
    log = record_mcap(world, target, 600.0, stop=lambda: world.time.sim_time >= 0.5)
    assert log.interrupted and log.files == [target] and not hidden_files(tmp_path)
    with target.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/scene"] == log.updates == 11


def test_targets_that_cannot_be_recorded_to_are_refused_before_a_step(world: World, tmp_path: Path) -> None:
    cases = bad_targets(tmp_path) | {"a name without .mcap": (tmp_path / "run.bag", ".mcap")}
    for case, (target, fault) in cases.items():
        before = sorted(p.name for p in tmp_path.iterdir())
        start = world.time.time_ns
        if fault is None:
            log = record_mcap(world, target, 0.1)
            assert log.files == [target] and not target.is_symlink(), case
            continue
        with pytest.raises(LogError) as refused:
            record_mcap(world, target, 0.1)
        assert fault in str(refused.value) and "\n" not in str(refused.value), (case, str(refused.value))
        assert world.time.time_ns == start and sorted(p.name for p in tmp_path.iterdir()) == before, case
