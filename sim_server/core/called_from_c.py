"""Functions of this project that C code calls back (a library's callbacks: the MCAP writer's
file methods, Box2D's contact listener), marked with :func:`called_from_c`.

An exception raised into the main thread at any moment (a stop signal's
:class:`~sim_server.stop_signals.Interrupted`) must not be raised while one of them runs: it
would reach the C code, which turns it into a failure of its own (the MCAP writer: "attempted
another write after a write method failed") or prints it. :func:`is_called_from_c` tells a
frame that runs one, so the raise can wait until it has returned.
"""

from __future__ import annotations

from types import CodeType
from typing import Callable, TypeVar

Function = TypeVar("Function", bound=Callable)

#: The code of every function marked.
_MARKED: set[CodeType] = set()


def called_from_c(function: Function) -> Function:
    """Mark ``function`` as one that C code calls back; returns it unchanged."""
    _MARKED.add(function.__code__)
    return function


def is_called_from_c(code: CodeType) -> bool:
    """Whether ``code`` (a frame's ``f_code``) is that of a function marked."""
    return code in _MARKED
