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
  end. A signal that lands inside an import is raised once the import is done (at most
  :data:`IMPORT_WAIT` s later): raised inside one, it can reach C code that turns it into another
  error and prints it (numba's extension modules: "ImportError: numba._devicearray failed to
  import"). However the block is left after a signal came, it is left with :class:`Interrupted`.
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
#: The longest a stop signal's :class:`Interrupted` waits for an import to end, s (an import
#: that takes longer, a module that never finishes loading, is interrupted all the same).
IMPORT_WAIT = 2.0
#: How often a waiting :class:`Interrupted` looks again whether the import has ended, s.
IMPORT_RECHECK = 0.01
#: The files of the frames of Python's import system (frozen modules).
_IMPORT_FILES = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


class Interrupted(BaseException):
    """A stop signal, raised into what runs inside :meth:`StopSignals.interrupting` (a
    ``BaseException``, as ``KeyboardInterrupt``: code that catches ``Exception`` lets it pass)."""


def _inside_import(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an import (a frame of Python's import system calls it)."""
    while frame is not None:
        if frame.f_code.co_filename in _IMPORT_FILES:
            return True
        frame = frame.f_back
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
        #: When the Interrupted of a signal first waited for an import to end (monotonic s), or None.
        self._waiting_since: float | None = None
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
        if _inside_import(frame) and now - self._waiting_since < IMPORT_WAIT:
            timer = threading.Timer(IMPORT_RECHECK, self._recheck, args=(signum,))
            timer.daemon = True
            timer.start()
            return
        self._interrupting = False  # one Interrupted a block: the first unwinds it
        self._waiting_since = None
        raise Interrupted()

    def _recheck(self, signum: int) -> None:
        """(Another thread.) Call the handler again in the main thread, which raises the
        waiting :class:`Interrupted` if the import has ended (Python calls no handler that is
        no longer this one's)."""
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
