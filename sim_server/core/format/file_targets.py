"""Where a file the simulator writes goes (pictures, videos, MCAP logs): the target checked
before anything is made, and written beside its name until it is whole.

A file is written to a hidden file in the target's folder (:func:`partial_path`) and renamed
over the target once complete, so a run that fails, or a reader that opens the target while it
is written, never sees half a file, and whatever was at the target stays until then.
"""

from __future__ import annotations

import os
from pathlib import Path

from sim_server.core.format.bounded_read import shown_path


def partial_path(path: Path) -> Path:
    """Where ``path`` is written until it is complete: a hidden file beside it, named for this
    process (``.run.partial-<pid>.mcap`` for ``run.mcap``)."""
    return path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")


def reason_of(error: BaseException) -> str:
    """The operating system's words for ``error`` (its ``strerror``), else its text."""
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def target_problem(path: Path) -> str | None:
    """Why ``path`` cannot receive a file (its folder is missing; it exists and is not a
    regular file, a folder, a FIFO or a link to one, or cannot be written; the system refuses
    the name), or None when it can. The words follow the path in a message."""
    try:
        if not path.parent.is_dir():
            return f'the folder "{shown_path(path.parent)}" does not exist'
        if path.exists() or path.is_symlink():
            if not path.is_file():
                return "it exists and is not a regular file"
            if not os.access(path, os.W_OK):
                return "it exists and cannot be written"
    except (OSError, ValueError) as error:  # a name too long, a NUL in it
        return reason_of(error)
    return None
