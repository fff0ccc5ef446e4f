"""Stop signals (SIGINT: Ctrl-C; SIGTERM), handled one way by the programs:
``python -m sim_server.record``, ``python -m sim_server.serve`` and the ROS server
(``python -m sim_server``).

* While a program started from the command line imports what it needs, before its ``main``
  runs, a stop signal ends the process at once with exit 0
  (:func:`exit_at_once_while_starting`): nothing has run yet, and Python's defaults would print
  a ``KeyboardInterrupt`` traceback (SIGINT) or die of the signal (SIGTERM).
* While ``main`` runs, inside ``with StopSignals(...)``, a first stop signal is noted
  (:attr:`StopSignals.requested`: the program's loop ends early and cleanly, exit 0); inside
  :meth:`StopSignals.interrupting` it also raises :class:`Interrupted` into what runs there
  (loading a world, a user's script), so nothing that takes long or never returns holds the
  end. It is raised only where this project's code (or a user's script) runs: a signal that
  lands inside an import, a library (a package of ``site-packages``) or a function of ours that
  C code called back (:mod:`sim_server.core.called_from_c`) is raised once that has returned (at
  most :data:`LIBRARY_WAIT` s later). Raised inside one, it can reach C code that
  turns it into an error of its own and prints it (numba's extension modules: "ImportError:
  numba._devicearray failed to import"), or leave a library's object half made (llvmlite's, whose
  ``__del__`` then fails). However the block is left after a signal came, it is left with
  :class:`Interrupted`.
* Once the orderly end has begun (:meth:`StopSignals.end`, and from leaving the ``with``) a
  second or third signal changes nothing.
* Leaving the ``with``, a program of the command line keeps the stop signals ignored until the
  process has ended: Python's teardown resets a handler written in Python to the default
  action, so a late signal (a second Ctrl-C, or the second of the two ``ros2 launch`` sends)
  would kill the process with the signal's status (exit 130, or -2 / -15) after its work was
  done. Called as a function from another program (``main(argv)``), that program's handlers
  come back instead.

Signals are handled by the main thread only: from another thread ``StopSignals`` changes no
handler (the program's own stay).
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time
from types import FrameType, TracebackType
from typing import Any, Callable, Iterator

#: The signals that end a program early and cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The exit code of a program stopped by a signal: it did what it was asked to, up to then.
EXIT_STOPPED = 0
#: The longest a stop signal's :class:`Interrupted` waits for an import or a library to return,
#: s (one that takes longer, a module that never finishes loading, is interrupted all the same).
LIBRARY_WAIT = 2.0
#: How often a waiting :class:`Interrupted` looks again whether it may be raised, s.
RECHECK = 0.01
#: Folders of the packages of libraries (third-party code), as parts of a path.
_LIBRARY_FOLDERS = frozenset({"site-packages", "dist-packages"})
#: The module that knows the functions C code calls back.
_CALLED_FROM_C = "sim_server.core.called_from_c"
#: This project's packages (their folders, with a trailing separator), found on first use.
_own_folders: tuple[str, ...] | None = None


class Interrupted(BaseException):
    """A stop signal, raised into what runs inside :meth:`StopSignals.interrupting` (a
    ``BaseException``, as ``KeyboardInterrupt``: code that catches ``Exception`` lets it pass)."""


def _depth(frame: FrameType | None) -> int:
    """The frames from ``frame`` out to the bottom of the stack."""
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _library_code(filename: str) -> bool:
    """Whether code of ``filename`` is an import's or a library's: frozen modules (Python's
    import system, ``<frozen ...>``) and packages installed in ``site-packages`` other than this
    project's."""
    global _own_folders
    if filename.startswith("<"):
        return True
    if _own_folders is None:
        import importlib.util

        found = [importlib.util.find_spec(name) for name in ("sim_server", "sim_plugins")]
        _own_folders = tuple(os.path.dirname(spec.origin) + os.sep for spec in found if spec is not None and spec.origin)
    if filename.startswith(_own_folders):
        return False
    return not _LIBRARY_FOLDERS.isdisjoint(filename.split(os.sep))


def _must_wait(frame: FrameType | None, frames: int) -> bool:
    """Whether one of the ``frames`` innermost frames from ``frame`` out runs code that an
    :class:`Interrupted` must not be raised into: an import's or a library's
    (:func:`_library_code`), or a function of ours that C code called back
    (:mod:`sim_server.core.called_from_c`; none is marked before that module is imported, and this
    module, imported before the slow imports, does not import it)."""
    marks = sys.modules.get(_CALLED_FROM_C)
    while frame is not None and frames > 0:
        code = frame.f_code
        if _library_code(code.co_filename) or (marks is not None and marks.is_called_from_c(code)):
            return True
        frame = frame.f_back
        frames -= 1
    return False


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    os._exit(EXIT_STOPPED)


def exit_at_once_while_starting() -> None:
    """Until ``main`` takes the stop signals over, one ends the process at once with exit 0,
    without a traceback: for a program started from the command line, called before its slow
    imports (a second or so)."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _exit_at_once)


class StopSignals:
    """The stop signals of one run of a program, while in ``with``.

    Args:
        command_line: the program runs from the command line (its ``main`` called with no
            arguments): leaving the ``with``, the stop signals stay ignored until the process
            ends. False: the handlers found on entering come back.
    """

    def __init__(self, *, command_line: bool) -> None:
        self.command_line = command_line
        #: The stop signals noted, in order (those after the end began are not).
        self.received: list[int] = []
        #: Called by each stop signal noted (the ROS server's ``request_stop``), or None.
        self.on_stop: Callable[[], None] | None = None
        self._interrupting = False
        self._ending = False
        #: When the Interrupted of a signal first waited for library code (monotonic s), or None.
        self._waiting_since: float | None = None
        #: The depth of the frame running the ``interrupting`` block (its frames are deeper).
        self._block_depth = 0
        #: The next call of the handler looks again at a waiting Interrupted (no new signal).
        self._rechecking = False
        self._previous: dict[int, Any] = {}
        self._previous_hook: Callable[[Any], None] | None = None

    @property
    def requested(self) -> bool:
        """Whether a stop signal came (the run should end early)."""
        return bool(self.received)

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self._ending:
            return
        if self._rechecking:  # called by _recheck: the signal was noted already
            self._rechecking = False
        else:
            self.received.append(signum)
            if self.on_stop is not None:
                self.on_stop()
        if not self._interrupting:
            return
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        if _must_wait(frame, _depth(frame) - self._block_depth) and now - self._waiting_since < LIBRARY_WAIT:
            timer = threading.Timer(RECHECK, self._recheck, args=(signum,))
            timer.daemon = True
            timer.start()
            return
        self._interrupting = False  # one Interrupted a block: the first unwinds it
        self._waiting_since = None
        raise Interrupted()

    def _recheck(self, signum: int) -> None:
        """(Another thread.) Call the handler again in the main thread, which raises the
        waiting :class:`Interrupted` if the library code has returned (Python calls no handler
        that is no longer this one's)."""
        if self._interrupting and not self._ending:
            self._rechecking = True
            _thread.interrupt_main(signum)

    @contextlib.contextmanager
    def interrupting(self) -> Iterator[None]:
        """Inside, a stop signal also raises :class:`Interrupted` (one that came before raises
        it at once). Catch it outside the block too: it may be raised as the block is left.

        A block left after a stop signal came is left with :class:`Interrupted`, however it
        ended: an Interrupted raised inside a callback from C code (a library calling back into
        Python) is lost there, and C code may turn it into an error of its own; the error is
        then the stop's doing (it is the Interrupted's ``__context__``).
        """
        if self.received and not self._ending:
            raise Interrupted()
        self._interrupting = not self._ending
        self._block_depth = _depth(sys._getframe(2))  # (this generator, contextlib's __enter__, the block)
        noted = len(self.received)
        try:
            yield
        except Interrupted:
            raise
        except BaseException:
            if len(self.received) > noted:
                raise Interrupted() from None
            raise
        else:
            if len(self.received) > noted:
                raise Interrupted()
        finally:
            self._interrupting = False
            self._waiting_since = None

    def end(self) -> None:
        """The orderly end begins: from now on stop signals change nothing."""
        self._ending = True
        self._interrupting = False
        self._waiting_since = None
        self._rechecking = False

    def _unraisable(self, unraisable: Any) -> None:
        """An :class:`Interrupted` that Python could not raise (in a C callback) is no error:
        :attr:`requested` tells of it. Others go to the hook that was there."""
        if not isinstance(unraisable.exc_value, Interrupted):
            (self._previous_hook or sys.__unraisablehook__)(unraisable)

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self)
        self._previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.end()
        for signum, previous in self._previous.items():
            if self.command_line:
                signal.signal(signum, signal.SIG_IGN)  # until the process has ended
            elif previous is not None:  # None: a handler not set from Python, which cannot be put back
                signal.signal(signum, previous)
        self._previous.clear()
        if sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._previous_hook or sys.__unraisablehook__
