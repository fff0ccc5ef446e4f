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
  end.
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

import contextlib
import os
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any, Callable, Iterator

#: The signals that end a program early and cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The exit code of a program stopped by a signal: it did what it was asked to, up to then.
EXIT_STOPPED = 0


class Interrupted(BaseException):
    """A stop signal, raised into what runs inside :meth:`StopSignals.interrupting` (a
    ``BaseException``, as ``KeyboardInterrupt``: code that catches ``Exception`` lets it pass)."""


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
        self._previous: dict[int, Any] = {}
        self._previous_hook: Callable[[Any], None] | None = None

    @property
    def requested(self) -> bool:
        """Whether a stop signal came (the run should end early)."""
        return bool(self.received)

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self._ending:
            return
        self.received.append(signum)
        if self.on_stop is not None:
            self.on_stop()
        if self._interrupting:
            self._interrupting = False  # one Interrupted a block: the first unwinds it
            raise Interrupted()

    @contextlib.contextmanager
    def interrupting(self) -> Iterator[None]:
        """Inside, a stop signal also raises :class:`Interrupted` (one that came before raises
        it at once). Catch it outside the block too: it may be raised as the block is left.

        Raised inside a callback from C code (a library calling back into Python) the exception
        may be lost; :attr:`requested` still says the signal came.
        """
        if self.received and not self._ending:
            raise Interrupted()
        self._interrupting = not self._ending
        try:
            yield
        finally:
            self._interrupting = False

    def end(self) -> None:
        """The orderly end begins: from now on stop signals change nothing."""
        self._ending = True
        self._interrupting = False

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
