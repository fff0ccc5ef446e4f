"""MCAP files of bounded size: a recording that reaches its size starts the next file, and only
the newest ones are kept, so a long run cannot fill the disk.

The files are ``run.mcap``, then ``run.1.mcap``, ``run.2.mcap``, ... Each is a whole MCAP file
(closed properly when the next begins), and each starts with the whole scene again, so any of
them replays alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import foxglove

from sim_server.core import limits

#: Bytes of one file, by default (the file may pass it by one chunk of the writer).
DEFAULT_FILE_BYTES = 1024 * 2**20
#: Files kept, by default: the newest.
DEFAULT_FILES_KEPT = 10


def check_bounds(max_bytes: int, keep: int) -> None:
    """ValueError naming the bound that cannot be used."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not limits.MCAP_FILE_BYTES.contains(max_bytes):
        raise ValueError(f"the size of a recording's file must be {limits.MCAP_FILE_BYTES.describe()}, got {max_bytes!r:.40}")
    if isinstance(keep, bool) or not isinstance(keep, int) or not limits.MCAP_FILES_KEPT.contains(keep):
        raise ValueError(f"the files of a recording kept must be {limits.MCAP_FILES_KEPT.describe()}, got {keep!r:.40}")


def numbered(path: Path, number: int) -> Path:
    """The ``number``-th file after ``path`` (``run.mcap``: ``run.1.mcap``, ...)."""
    return path.with_name(f"{path.stem}.{number}{path.suffix}")


class McapFiles:
    """The files of one recording into ``context``'s channels: ``path`` first, the next one
    when a file holds ``max_bytes``; the ``keep`` newest stay. ``on_new_file`` is called when a
    file begins after the first (the scene is sent again).

    Raises:
        ValueError: the file cannot be made, or bounds that cannot be used.
    """

    def __init__(self, path: Path, context: foxglove.Context, max_bytes: int = DEFAULT_FILE_BYTES,
                 keep: int = DEFAULT_FILES_KEPT, on_new_file: Callable[[], None] = lambda: None) -> None:
        check_bounds(max_bytes, keep)
        self.path = Path(path)
        self._context = context
        self.max_bytes = max_bytes
        self.keep = keep
        self._on_new_file = on_new_file
        #: The files kept, oldest first (those beyond ``keep`` are deleted).
        self.files: list[Path] = []
        #: Each kept file's number (0 for ``path``, k for ``numbered(path, k)``).
        self.numbers: list[int] = []
        #: Files begun so far.
        self.begun = 0
        self._writer = None
        self._open(self.path)

    def _open(self, path: Path) -> None:
        try:
            self._writer = foxglove.open_mcap(path, allow_overwrite=True, context=self._context)
        except Exception as exc:  # the SDK's error for a file it cannot create
            raise ValueError(f'cannot record to "{path}": {exc}') from None
        self.files.append(path)
        self.numbers.append(self.begun)
        self.begun += 1
        while len(self.files) > self.keep:
            self.files.pop(0).unlink(missing_ok=True)
            self.numbers.pop(0)

    @property
    def current(self) -> Path:
        """The file being written."""
        return self.files[-1]

    def check(self) -> None:
        """Begin the next file when the current one holds its size."""
        try:
            size = os.path.getsize(self.current)
        except OSError:
            return
        if size < self.max_bytes or self._writer is None:
            return
        self._writer.close()
        self._writer = None
        self._open(numbered(self.path, self.begun))
        self._on_new_file()

    def close(self) -> None:
        """Finish the file being written (it stays readable)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
