"""MCAP files of a recording (sim_server.live.files): written beside their names and put in place
once complete, cut at their size with the newest kept, and stopped quietly at the first write
that fails (a full disk), with one error naming the file and the reason; targets that cannot
receive a recording are refused in one line."""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

import foxglove
import pytest
from mcap.reader import make_reader

from sim_server.core import limits
from sim_server.live.files import McapFiles, RecordWriteError, Sink, check_target, numbered, open_file
from test.live.full_files import NO_SPACE, FillsUp, bad_targets, fill_up_after, hidden_files

#: Bytes of one message of the tests' channel: random, so the writer's compression keeps them.
MESSAGE_BYTES = 2000


class Recording:
    """A channel of its own context, and files recording it."""

    def __init__(self, path: Path, **options) -> None:
        self.context = foxglove.Context()
        self.channel = foxglove.Channel("/noise", message_encoding="json", context=self.context)
        self.files = McapFiles(path, self.context, **options)
        self.logged = 0

    def log(self, count: int = 1) -> None:
        for _ in range(count):
            self.channel.log({"noise": os.urandom(MESSAGE_BYTES // 2).hex()})
            self.logged += 1

    def log_until(self, condition, most: int) -> int:
        """Log until ``condition()`` (checking the files after each message, as the step loop
        does); returns the messages logged. Fails beyond ``most``."""
        for count in range(1, most + 1):
            self.log()
            self.files.check()
            if condition():
                return count
        pytest.fail(f"not so after {most} messages")


def messages_in(path: Path) -> int:
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    return sum(summary.statistics.channel_message_counts.values())


# ---------------------------------------------------------------------------------- the sink
def test_a_sink_writes_through_and_counts_its_size(tmp_path: Path) -> None:
    sink = Sink(open_file(tmp_path / "f"))
    assert sink.write(b"abcdef") == 6 and sink.tell() == 6
    assert sink.seek(2) == 2 and sink.write(b"XY") == 2 and sink.seek(0, os.SEEK_END) == 6
    assert sink.write(memoryview(b"gh")) == 2 and sink.seek(-1, os.SEEK_CUR) == 7
    sink.close()
    assert (tmp_path / "f").read_bytes() == b"abXYefgh" and sink.size == 8 and sink.failure is None


def test_a_sink_keeps_the_first_error_and_lets_nothing_more_reach_the_file(tmp_path: Path) -> None:
    full = FillsUp(open_file(tmp_path / "f"), room=10)
    sink = Sink(full)
    assert sink.write(b"x" * 25) == 25  # 10 taken, then the disk is full: not raised
    assert isinstance(sink.failure, OSError) and sink.failure.errno == errno.ENOSPC
    assert sink.write(b"y" * 5) == 5 and sink.seek(3) == 3 and sink.write(b"z") == 1
    assert sink.seek(0, os.SEEK_END) == 30 and sink.size == 30  # positions as the writer expects
    sink.close()
    assert full.failed_writes == 1 and (tmp_path / "f").read_bytes() == b"x" * 10


def test_a_file_that_takes_nothing_is_a_failure_not_a_loop(tmp_path: Path) -> None:
    class TakesNothing(FillsUp):
        def write(self, data) -> int:
            return 0

    sink = Sink(TakesNothing(open_file(tmp_path / "f"), room=100))
    assert sink.write(b"abc") == 3 and sink.failure is not None and sink.failure.errno == errno.EIO


# ---------------------------------------------------------------------------------- failures
@pytest.mark.parametrize("at_close", [False, True])
def test_a_full_disk_stops_the_recording_at_the_first_failed_write_quietly(
        tmp_path: Path, monkeypatch, caplog, capfd, at_close: bool) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")
    made = fill_up_after(monkeypatch, 100_000)
    caplog.set_level(logging.DEBUG)
    recording = Recording(target, at_close=at_close)
    logged = recording.log_until(lambda: recording.files.failed, most=1000)
    assert not recording.files.recording  # stopped at the check after the message that failed
    assert made[0].failed_writes == 1  # the one write that failed; nothing tried after it
    recording.log(50)  # the channel has no file any more: nothing is written, nothing logged
    recording.files.close()
    error = recording.files.error
    assert isinstance(error, RecordWriteError) and str(error) == f"cannot write {target}: {NO_SPACE}"
    assert error.errno == errno.ENOSPC and error.path == target and logged > 10
    assert target.read_bytes() == b"old" and not hidden_files(tmp_path) and recording.files.files == []
    assert not [r for r in caplog.records if r.name.startswith("foxglove")], caplog.text
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("at_close", [False, True])
def test_a_disk_that_fills_up_in_the_second_file(tmp_path: Path, monkeypatch, at_close: bool) -> None:
    """The first file is complete; the second fails: without at_close the first stays in place
    (complete, readable), with it nothing of the recording is left and the old file stays."""
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")
    made = fill_up_after(monkeypatch, 2 * limits.MCAP_FILE_BYTES.low, 100_000)
    recording = Recording(target, max_bytes=limits.MCAP_FILE_BYTES.low, at_close=at_close)
    recording.log_until(lambda: len(made) == 2, most=5000)
    recording.log_until(lambda: recording.files.failed, most=5000)
    recording.files.close()
    assert str(recording.files.error) == f"cannot write {numbered(target, 1)}: {NO_SPACE}"
    assert not hidden_files(tmp_path)
    if at_close:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"] and target.read_bytes() == b"old"
    else:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"] and messages_in(target) > 100
        assert recording.files.files == [target]


def test_a_file_whose_end_cannot_be_written_is_not_put_in_place(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")
    fill_up_after(monkeypatch, 300)  # the header and the first records; not the chunk
    recording = Recording(target)
    recording.log(3)
    recording.files.check()
    assert not recording.files.failed
    recording.files.close()
    assert str(recording.files.error) == f"cannot write {target}: {NO_SPACE}"
    assert target.read_bytes() == b"old" and not hidden_files(tmp_path)


def test_a_next_file_that_cannot_be_made_stops_the_recording(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "run.mcap"
    real_open = open_file

    def refuse_the_second(path: Path):
        if ".1.partial" in path.name:
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT))
        return real_open(path)

    monkeypatch.setattr("sim_server.live.files.open_file", refuse_the_second)
    recording = Recording(target, max_bytes=limits.MCAP_FILE_BYTES.low)
    recording.log_until(lambda: recording.files.failed, most=5000)
    recording.files.close()
    assert str(recording.files.error) == f"cannot write {numbered(target, 1)}: {os.strerror(errno.EDQUOT)}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"] and messages_in(target) > 100


@pytest.mark.parametrize("where", ["open_mcap", "check"])
def test_a_stop_signal_as_a_recording_begins_leaves_nothing(tmp_path: Path, monkeypatch, where: str) -> None:
    """A KeyboardInterrupt (or the stop signals' Interrupted) raised while the first file
    begins: the hidden file is deleted and the name keeps what it had."""
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("sim_server.live.files.foxglove.open_mcap" if where == "open_mcap" else "sim_server.live.files.McapFiles.check",
                        interrupted)
    with pytest.raises(KeyboardInterrupt):
        McapFiles(target, foxglove.Context())
    assert target.read_bytes() == b"old" and not hidden_files(tmp_path)


# ---------------------------------------------------------------------------------- place and size
def test_a_file_is_written_beside_its_name_and_put_there_when_complete(tmp_path: Path) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"old")
    recording = Recording(target)
    recording.log(20)
    assert target.read_bytes() == b"old" and hidden_files(tmp_path) == [f".run.partial-{os.getpid()}.mcap"]
    recording.files.close()
    recording.files.close()  # again: nothing
    assert messages_in(target) == 20 and not hidden_files(tmp_path)


@pytest.mark.parametrize("at_close", [False, True])
def test_keeping_one_file_leaves_the_newest_alone(tmp_path: Path, at_close: bool) -> None:
    target = tmp_path / "run.mcap"
    target.write_bytes(b"an older recording's")
    recording = Recording(target, max_bytes=limits.MCAP_FILE_BYTES.low, keep=1, at_close=at_close)
    recording.log_until(lambda: recording.files.begun == 4, most=20_000)
    recording.log(3)
    recording.files.close()
    assert recording.files.numbers == [3] and recording.files.error is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.3.mcap"]  # the older ones, run.mcap too, gone
    assert messages_in(tmp_path / "run.3.mcap") >= 3


BOUNDS = [
    ({"max_bytes": limits.MCAP_FILE_BYTES.low - 1}, "size of a recording's file"),
    ({"max_bytes": int(limits.MCAP_FILE_BYTES.low)}, None),
    ({"max_bytes": int(limits.MCAP_FILE_BYTES.high)}, None),
    ({"max_bytes": int(limits.MCAP_FILE_BYTES.high) + 1}, "size of a recording's file"),
    ({"max_bytes": float(limits.MCAP_FILE_BYTES.low)}, "size of a recording's file"),
    ({"keep": int(limits.MCAP_FILES_KEPT.low) - 1}, "files of a recording kept"),
    ({"keep": int(limits.MCAP_FILES_KEPT.low)}, None),
    ({"keep": int(limits.MCAP_FILES_KEPT.high)}, None),
    ({"keep": int(limits.MCAP_FILES_KEPT.high) + 1}, "files of a recording kept"),
    ({"keep": True}, "files of a recording kept"),
]


@pytest.mark.parametrize(("bounds", "fault"), BOUNDS, ids=[f"{b}" for b, _ in BOUNDS])
def test_bounds_at_their_limits(tmp_path: Path, bounds: dict, fault: str | None) -> None:
    target = tmp_path / "run.mcap"
    if fault is not None:
        with pytest.raises(ValueError, match=fault):
            Recording(target, **bounds)
        assert not list(tmp_path.iterdir())
        return
    recording = Recording(target, **bounds)
    recording.log(5)
    recording.files.close()
    assert messages_in(target) == 5 and sorted(p.name for p in tmp_path.iterdir()) == ["run.mcap"]


# ---------------------------------------------------------------------------------- targets
def test_targets_that_cannot_receive_a_recording_are_refused_in_one_line(tmp_path: Path) -> None:
    for case, (target, fault) in bad_targets(tmp_path).items():
        before = sorted(p.name for p in tmp_path.iterdir())
        if fault is None:
            recording = Recording(target)
            recording.log(3)
            recording.files.close()
            assert not target.is_symlink() and messages_in(target) == 3, case
            continue
        with pytest.raises(ValueError) as refused:
            Recording(target)
        message = str(refused.value)
        assert message.startswith("cannot record to ") and fault in message, (case, message)
        assert "\n" not in message and len(message) < 500, case
        assert sorted(p.name for p in tmp_path.iterdir()) == before, case  # nothing made
    assert (tmp_path / "linked.bin").read_bytes() == b"linked" and (tmp_path / "fifo.mcap").is_fifo()


def test_check_target_takes_a_new_name_or_a_regular_file(tmp_path: Path) -> None:
    check_target(tmp_path / "new.mcap")
    (tmp_path / "old.mcap").write_bytes(b"")
    check_target(tmp_path / "old.mcap")
