"""Functions of this project that C code calls back (a library's callbacks: the MCAP writer's
file methods, Box2D's contact listener), marked with :func:`called_from_c`.

An exception raised into the main thread at any moment (a stop signal's
:class:`~sim_server.stop_signals.Interrupted`) must not be raised while one of them runs: it
would reach the C code, which turns it into a failure of its own (the MCAP writer: "attempted
another write after a write method failed") or prints it. :func:`runs_called_from_c` says
whether a stack is inside one, so the raise can wait until it has returned.
"""

from __future__ import annotations

from types import CodeType, FrameType
from typing import Callable, TypeVar

Function = TypeVar("Function", bound=Callable)

#: The code of every function marked.
_MARKED: set[CodeType] = set()


def called_from_c(function: Function) -> Function:
    """Mark ``function`` as one that C code calls back; returns it unchanged."""
    _MARKED.add(function.__code__)
    return function


def runs_called_from_c(frame: FrameType | None, frames: int) -> bool:
    """Whether one of the ``frames`` innermost frames from ``frame`` out runs a marked function."""
    while frame is not None and frames > 0:
        if frame.f_code in _MARKED:
            return True
        frame = frame.f_back
        frames -= 1
    return False
