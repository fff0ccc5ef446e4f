"""MCAP files of a recording: of bounded size, written beside their names until complete, and
stopped at the first write that fails.

Size: a recording that reaches its size starts the next file, and only the newest ones are
kept, so a long run cannot fill the disk. The files are ``run.mcap``, then ``run.1.mcap``,
``run.2.mcap``, ... Each is a whole MCAP file (closed properly when the next begins), and each
starts with the whole scene again, so any of them replays alone.

Place: each file is written to a hidden file beside its name (``.run.partial-<pid>.mcap``) and
put in place (renamed over whatever had its name) once it is complete: when the next begins or
the recording closes; with ``at_close`` every file waits for the close (a run recorded as a
whole, :func:`sim_server.live.log.record_mcap`: a run that fails leaves what was there).

Failures: the SDK's MCAP writer writes through :class:`Sink`, an unbuffered file of ours that
keeps the first error of the operating system (a full disk, a file size limit) instead of
raising it into the writer. The writer would log every later message as an error of its own
(thousands of lines for a full disk) and go on; here it goes on quietly into nothing, the step
loop sees :attr:`McapFiles.error` at once and stops the recording, the hidden file is deleted,
and whatever was at the file's name stays.
"""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Callable

import foxglove

from sim_server.core import limits
from sim_server.core.called_from_c import called_from_c
from sim_server.core.errors import one_line
from sim_server.core.format.bounded_read import shown_path
from sim_server.core.format.file_targets import partial_path, reason_of, target_problem

#: Bytes of one file, by default (the file may pass it by one chunk of the writer).
DEFAULT_FILE_BYTES = 1024 * 2**20
#: Files kept, by default: the newest.
DEFAULT_FILES_KEPT = 10
#: How files are created: write only, made or emptied, never through a symbolic link, not
#: inherited by child processes.
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
#: Permissions of a new file (less the process's umask), as ``open()`` gives.
_CREATE_MODE = 0o666


class RecordWriteError(Exception):
    """A file of a recording could not be written (a full disk, a file size limit): the message
    names the file, by the name it was to have, and the operating system's reason, as in
    ``cannot write /x/run.mcap: No space left on device``."""

    def __init__(self, path: Path, reason: str, code: int | None = None) -> None:
        super().__init__(f"cannot write {shown_path(path)}: {reason}")
        #: The file (its final name).
        self.path = path
        #: The operating system's reason (its ``strerror``).
        self.reason = reason
        #: The ``errno`` (None when the failure was not the operating system's).
        self.errno = code


def check_bounds(max_bytes: int, keep: int) -> None:
    """ValueError naming the bound that cannot be used."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not limits.MCAP_FILE_BYTES.contains(max_bytes):
        raise ValueError(f"the size of a recording's file must be {limits.MCAP_FILE_BYTES.describe()}, got {max_bytes!r:.40}")
    if isinstance(keep, bool) or not isinstance(keep, int) or not limits.MCAP_FILES_KEPT.contains(keep):
        raise ValueError(f"the files of a recording kept must be {limits.MCAP_FILES_KEPT.describe()}, got {keep!r:.40}")


def numbered(path: Path, number: int) -> Path:
    """The ``number``-th file after ``path`` (``run.mcap``: ``run.1.mcap``, ...)."""
    return path.with_name(f"{path.stem}.{number}{path.suffix}")


def check_target(path: Path) -> None:
    """ValueError (one line, naming ``path``) when ``path`` cannot receive a recording
    (:func:`~sim_server.core.format.file_targets.target_problem`)."""
    problem = target_problem(path)
    if problem is not None:
        raise ValueError(f'cannot record to "{shown_path(path)}": {problem}')


def open_file(path: Path) -> io.RawIOBase:
    """A new, empty, unbuffered file at ``path`` (never through a symbolic link).

    Raises:
        OSError: it cannot be made.
        ValueError: a name that cannot be a file's (a NUL character).
    """
    descriptor = os.open(path, _CREATE_FLAGS, _CREATE_MODE)
    return os.fdopen(descriptor, "wb", buffering=0)


class Sink:
    """What the SDK's MCAP writer writes to (``write``, ``seek``, ``flush``): ``raw``, a file
    written unbuffered, whose first ``OSError`` is kept in :attr:`failure` instead of raised.

    From a failure on (or :meth:`silence`), nothing reaches the file: writes and seeks are only
    counted, so the positions the writer asks for stay consistent, and the writer, which never
    saw an error, logs none. The writer hands over its chunks in pieces of at most 32 KiB: one
    system call each, as a buffer of its own would make, and the size is known without asking
    the file system.
    """

    def __init__(self, raw: io.RawIOBase) -> None:
        self._raw = raw
        #: The first error of the operating system, or None.
        self.failure: OSError | None = None
        #: Bytes of the file (as written or, once silent, as counted).
        self.size = 0
        self._position = 0
        self._silent = False

    def silence(self) -> None:
        """Let nothing more reach the file (a recording discarded)."""
        self._silent = True

    def fail(self, error: OSError) -> None:
        """Keep ``error`` as the failure (unless one came first); nothing more reaches the file."""
        if self.failure is None:
            self.failure = error
        self._silent = True

    @called_from_c
    def write(self, data: bytes | bytearray | memoryview) -> int:
        """Write all of ``data``; returns its length in bytes, also once silent."""
        view = memoryview(data).cast("B")
        count = len(view)
        if not self._silent:
            try:
                done = 0
                while done < count:
                    written = self._raw.write(view[done:])
                    if not written:  # a file that takes nothing would loop forever
                        raise OSError(errno.EIO, "the file took no bytes")
                    done += written
            except OSError as error:
                self.fail(error)
        self._position += count
        self.size = max(self.size, self._position)
        return count

    @called_from_c
    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """Move to ``offset`` bytes from the start, the position or the end; returns the position."""
        bases = {os.SEEK_SET: 0, os.SEEK_CUR: self._position, os.SEEK_END: self.size}
        if whence not in bases:
            raise ValueError(f"whence must be SEEK_SET, SEEK_CUR or SEEK_END, got {whence!r:.20}")
        target = bases[whence] + offset
        if target < 0:
            raise ValueError(f"cannot seek to {target}, before the start")
        if not self._silent and target != self._position:
            try:
                self._raw.seek(target)
            except OSError as error:
                self.fail(error)
        self._position = target
        return target

    @called_from_c
    def tell(self) -> int:
        """The position, bytes from the start."""
        return self._position

    @called_from_c
    def flush(self) -> None:
        """Nothing to do: every write went to the file at once."""

    def close(self) -> None:
        """Close the file (a failure to, as some network file systems report late, is kept too)."""
        try:
            self._raw.close()
        except OSError as error:
            self.fail(error)


class McapFiles:
    """The files of one recording of ``context``'s channels: ``path`` first, the next one when
    a file holds ``max_bytes``; the ``keep`` newest stay. ``on_new_file`` is called when a file
    begins after the first (the scene is sent again). Each file is written beside its name and
    put in place once complete (with ``at_close``, all of them when :meth:`close` is called).

    A write that fails stops the recording at the next :meth:`check` or :meth:`close`:
    :attr:`error` says why, the file being written is deleted (with ``at_close``, every file of
    the recording) and its name keeps what it had.

    Raises:
        ValueError: ``path`` cannot be recorded to (:func:`check_target`), it cannot be made, or
            bounds that cannot be used.
    """

    def __init__(self, path: Path, context: foxglove.Context, max_bytes: int = DEFAULT_FILE_BYTES,
                 keep: int = DEFAULT_FILES_KEPT, on_new_file: Callable[[], None] = lambda: None, *,
                 at_close: bool = False) -> None:
        check_bounds(max_bytes, keep)
        self.path = Path(path)
        check_target(self.path)
        self._context = context
        self.max_bytes = max_bytes
        self.keep = keep
        self._on_new_file = on_new_file
        self._at_close = at_close
        #: The files kept, by their names, oldest first (those beyond ``keep`` are deleted).
        self.files: list[Path] = []
        #: Each kept file's number (0 for ``path``, k for ``numbered(path, k)``).
        self.numbers: list[int] = []
        #: Files begun so far.
        self.begun = 0
        #: Why the recording stopped early (a write failed), or None.
        self.error: RecordWriteError | None = None
        self._writer: foxglove.mcap.MCAPWriter | None = None
        self._sink: Sink | None = None
        self._partial: Path | None = None  # where the file being written is
        self._waiting: dict[Path, Path] = {}  # with at_close: complete files' names -> where they are
        self._dropped: list[Path] = []  # with at_close: names of files dropped by keep
        try:
            self._open(0)
            self.check()
        except (OSError, ValueError) as error:
            raise ValueError(f'cannot record to "{shown_path(self.path)}": {reason_of(error)}') from None
        except BaseException:  # a stop signal (KeyboardInterrupt, say) as it began: nothing is left
            self.discard()
            raise
        if self.error is not None:  # not even the header could be written
            raise ValueError(f'cannot record to "{shown_path(self.path)}": {self.error.reason}')

    # ------------------------------------------------------------------ state
    @property
    def current(self) -> Path:
        """The file being written, or the last one (by its name)."""
        return self.files[-1]

    @property
    def recording(self) -> bool:
        """Whether a file is open for writing."""
        return self._writer is not None

    @property
    def failed(self) -> bool:
        """Whether a write failed (cheap to ask after every message): :meth:`check` then stops
        the recording."""
        return self.error is not None or (self._sink is not None and self._sink.failure is not None)

    # ------------------------------------------------------------------ one file
    def _open(self, number: int) -> None:
        name = self.path if number == 0 else numbered(self.path, number)
        partial = partial_path(name)
        sink = Sink(open_file(partial))
        try:
            writer = foxglove.open_mcap(sink, context=self._context)
            self._writer, self._sink, self._partial = writer, sink, partial
        except BaseException as error:  # the SDK's own failure (one line), or a stop signal meanwhile
            if self._sink is not sink:
                sink.close()
                partial.unlink(missing_ok=True)
            if not isinstance(error, Exception):
                raise
            raise ValueError(f"the MCAP writer cannot begin: {one_line(str(error))}") from None
        self.files.append(name)
        self.numbers.append(number)
        self.begun += 1
        while len(self.files) > self.keep:
            self._drop(self.files.pop(0))
            self.numbers.pop(0)

    def _drop(self, name: Path) -> None:
        """Delete a file beyond ``keep`` (with at_close: the one waiting, and its name at close)."""
        waiting = self._waiting.pop(name, None)
        if waiting is None:
            name.unlink(missing_ok=True)
        else:
            waiting.unlink(missing_ok=True)
            self._dropped.append(name)

    def _end_current(self, keep: bool) -> Path | None:
        """Close the file being written: where it lies complete, or None when it failed (then
        :attr:`error` says why) or is not to be kept; then it is deleted and leaves the list."""
        writer, sink, partial = self._writer, self._sink, self._partial
        if writer is None or sink is None or partial is None:
            return None
        self._writer = self._sink = self._partial = None
        if not keep:
            sink.silence()
        try:
            writer.close()  # the last chunk and the summary, into the sink
        except Exception as error:  # noqa: BLE001 - the SDK's own failure: the file is not whole
            sink.fail(OSError(None, f"the MCAP writer failed: {one_line(str(error))}"))
        sink.close()
        if keep and sink.failure is None:
            return partial
        partial.unlink(missing_ok=True)
        name = self.files.pop()
        self.numbers.pop()
        if keep:
            self._set_error(name, sink.failure)
        return None

    def _put(self, name: Path, partial: Path) -> bool:
        """A complete file to its name, or with at_close to wait for the close; False when it
        cannot be put there (see :meth:`_place`)."""
        if self._at_close:
            self._waiting[name] = partial
            return True
        return self._place(name, partial)

    def _place(self, name: Path, partial: Path) -> bool:
        """Rename ``partial`` to ``name``; False when it cannot be (then it is gone, leaves the
        list, and :attr:`error` says why)."""
        try:
            os.replace(partial, name)
            return True
        except OSError as error:  # the name became a folder meanwhile, say
            partial.unlink(missing_ok=True)
            if name in self.files:
                self.numbers.pop(self.files.index(name))
                self.files.remove(name)
            self._set_error(name, error)
            return False

    def _set_error(self, name: Path, failure: OSError | None) -> None:
        if self.error is None:
            reason = reason_of(failure) if failure is not None else "unknown"
            self.error = RecordWriteError(name, reason, getattr(failure, "errno", None))

    # ------------------------------------------------------------------ the recording
    def check(self) -> None:
        """Stop the recording if a write failed (see :attr:`error`); else begin the next file
        when the current one holds its size."""
        sink = self._sink
        if sink is None:
            return
        if sink.failure is not None:
            self._end_current(keep=True)
            self.discard()
            return
        if sink.size < self.max_bytes:
            return
        name = self.current
        partial = self._end_current(keep=True)
        if partial is None or not self._put(name, partial):
            self.discard()
            return
        following = numbered(self.path, self.begun)
        try:
            self._open(self.begun)
        except (OSError, ValueError) as error:
            self._set_error(following, error if isinstance(error, OSError) else OSError(None, str(error)))
            self.discard()
            return
        self._on_new_file()
        if self._sink is not None and self._sink.failure is not None:
            self.check()

    def close(self) -> None:
        """Finish the file being written and put every file in place (a file that could not be
        written whole sets :attr:`error` and the recording is discarded). Repeating it does
        nothing."""
        name = self.current if self._writer is not None else None
        partial = self._end_current(keep=True)
        if name is not None and partial is not None:
            self._put(name, partial)
        if self.error is not None:
            self.discard()
            return
        if self._waiting:
            for dropped in self._dropped:
                dropped.unlink(missing_ok=True)  # an older recording's file by a name this one dropped
            self._dropped = []
            for name in list(self.files):  # oldest first
                partial = self._waiting.pop(name, None)
                if partial is not None and not self._place(name, partial):
                    self.discard()
                    return

    def discard(self) -> None:
        """Stop, and delete what is not in place yet (the file being written; with at_close
        every file): their names keep what they had."""
        self._end_current(keep=False)
        for name, partial in self._waiting.items():
            partial.unlink(missing_ok=True)
            if name in self.files:
                self.numbers.pop(self.files.index(name))
                self.files.remove(name)
        self._waiting.clear()
        self._dropped = []
