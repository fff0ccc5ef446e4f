"""Files that fill up, for tests of recordings: in-process, a real file that takes so many bytes
and then fails as a full disk does (ENOSPC); in a subprocess, a real limit on the size of the
files the process writes (RLIMIT_FSIZE, with SIGXFSZ ignored: EFBIG "File too large")."""

from __future__ import annotations

import errno
import io
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import sim_server.live.files as files_module
from test.conftest import REPO_ROOT

#: The error of a full disk, as the operating system words it.
NO_SPACE = os.strerror(errno.ENOSPC)
#: The error of a file beyond the process's size limit.
TOO_LARGE = os.strerror(errno.EFBIG)


class FillsUp(io.RawIOBase):
    """``raw``, a real file, that takes ``room`` bytes in all, then fails every write with
    ENOSPC; :attr:`failed_writes` counts the writes refused."""

    def __init__(self, raw: io.RawIOBase, room: int) -> None:
        super().__init__()
        self._raw = raw
        self.room = room
        self.failed_writes = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if self.room <= 0:
            self.failed_writes += 1
            raise OSError(errno.ENOSPC, NO_SPACE)
        written = self._raw.write(memoryview(data).cast("B")[: self.room])
        self.room -= written
        return written

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def close(self) -> None:
        self._raw.close()
        super().close()


def fill_up_after(monkeypatch, *rooms: int) -> list[FillsUp]:
    """Make the files a recording opens from now on fill up: the first after ``rooms[0]``
    bytes, the second after ``rooms[1]``, ... (the last room for every later one); returns the
    files made, in order (each written where the recording asked)."""
    made: list[FillsUp] = []
    real_open = files_module.open_file

    def open_file(path: Path) -> FillsUp:
        made.append(FillsUp(real_open(path), rooms[min(len(made), len(rooms) - 1)]))
        return made[-1]

    monkeypatch.setattr(files_module, "open_file", open_file)
    return made


def limit_file_size(limit: int) -> None:
    """In the child, before it runs: files beyond ``limit`` bytes fail with EFBIG (SIGXFSZ,
    which would kill the process, ignored as a daemon would)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def fill_numba_cache(world_path: Path) -> None:
    """Load ``world_path``, step it and draw it here, so that numba's on-disk cache holds what
    a process running that world compiles: a child limited in the size of its files then loads
    it instead of failing to write it (as it would in an environment fresh from setup)."""
    from sim_server.core import World
    from sim_server.rendering import render

    world = World.from_file(world_path)
    try:
        world.step(2)
        render(world, pixels=64)
    finally:
        world.close()


def run_with_file_size_limit(arguments: list[str], limit: int, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """``python ARGUMENTS`` from the repository's folder, writing no file beyond ``limit`` bytes
    (call :func:`fill_numba_cache` for its world first)."""
    return subprocess.run([sys.executable, *arguments], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=lambda: limit_file_size(limit))


def hidden_files(folder: Path) -> list[str]:
    """Names in ``folder`` that start with a dot (what a recording writes to until it is done)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def bad_targets(folder: Path) -> dict[str, tuple[Path, str | None]]:
    """Targets of a recording made in ``folder``, each with the words its refusal must hold
    (None: a good recording, which replaces a link at the name, not what it points to)."""
    (folder / "dir.mcap").mkdir()
    os.mkfifo(folder / "fifo.mcap")
    (folder / "real").mkdir()
    (folder / "to_dir.mcap").symlink_to(folder / "real")
    (folder / "dangling.mcap").symlink_to(folder / "nowhere.mcap")
    (folder / "linked.bin").write_bytes(b"linked")
    (folder / "to_file.mcap").symlink_to(folder / "linked.bin")
    cases: dict[str, tuple[Path, str | None]] = {
        "folder missing": (folder / "missing" / "run.mcap", "does not exist"),
        "a folder": (folder / "dir.mcap", "not a regular file"),
        "a FIFO": (folder / "fifo.mcap", "not a regular file"),
        "a link to a folder": (folder / "to_dir.mcap", "not a regular file"),
        "a dangling link": (folder / "dangling.mcap", "not a regular file"),
        "a name of 5000 characters": (folder / ("x" * 4995 + ".mcap"), os.strerror(errno.ENAMETOOLONG)),
        "a path of 5000 characters": (folder.joinpath(*["d" * 99] * 50, "run.mcap"), os.strerror(errno.ENAMETOOLONG)),
        "a NUL in the name": (folder / "a\x00b.mcap", "null"),
        "a link to a file (replaced, not followed)": (folder / "to_file.mcap", None),
    }
    if os.geteuid() != 0:  # root writes anyway
        (folder / "locked").mkdir()
        (folder / "locked").chmod(0o555)
        (folder / "readonly.mcap").write_bytes(b"old")
        (folder / "readonly.mcap").chmod(0o444)
        cases["a read-only folder"] = (folder / "locked" / "run.mcap", os.strerror(errno.EACCES))
        cases["a read-only file"] = (folder / "readonly.mcap", "cannot be written")
    return cases


#: The bounds of a recording at and beyond their limits: (``max-mib`` or ``keep``, the value,
#: the words of its refusal or None), for the options of ``record`` and ``serve``.
RECORDING_BOUNDS: list[tuple[str, str, str | None]] = [
    ("max-mib", "0", "size of a recording's file"),
    ("max-mib", "1", None),
    ("max-mib", str(2**20), None),
    ("max-mib", str(2**20 + 1), "size of a recording's file"),
    ("keep", "0", "files of a recording kept"),
    ("keep", "1", None),
    ("keep", "100000", None),
    ("keep", "100001", "files of a recording kept"),
]
