"""Reading user files with limits: regular files only, never more than a set number of bytes.

A path may name a device (``/dev/zero`` never ends), a FIFO (opening one blocks until a writer
comes), a socket or a directory; :func:`read_bytes` refuses all of them before reading, opens
without blocking and reads at most one byte more than the limit, so no file can hang the server
or exhaust its memory. Errors are :class:`ConfigError` naming the file and what it is for.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from sim_server.core.errors import ConfigError


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


#: Characters of a path shown in an error; longer ones are shortened in the middle.
SHOWN_PATH_CHARS = 200


def shown_path(path: Path | str) -> str:
    """``path`` for an error message: whole when short, else its start and end around "..."."""
    text = str(path)
    if len(text) <= SHOWN_PATH_CHARS:
        return text
    return f"{text[:SHOWN_PATH_CHARS // 2]}...{text[-SHOWN_PATH_CHARS // 2:]}"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: Path, what: str, max_bytes: int) -> bytes:
    """The contents of the regular file at ``path``, at most ``max_bytes`` long.

    Args:
        path: the file (symbolic links are followed).
        what: what the file is, for errors ("model file", 'image of map file "x.yaml"').
        max_bytes: the largest size accepted.

    Raises:
        ConfigError: the file does not exist, is not a regular file, is larger than
            ``max_bytes`` or cannot be read.
    """
    shown = shown_path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        where = "" if Path(path).is_absolute() else f" (relative to the working directory {shown_path(os.getcwd())})"
        raise ConfigError(f'{what} "{shown}" does not exist{where}') from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise ConfigError(f'{what} "{shown}" cannot be read: {_reason(exc)}') from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f'{what} "{shown}" is {_kind(info.st_mode)}, not a regular file')
    if info.st_size > max_bytes:
        raise ConfigError(f'{what} "{shown}" has {_mib(info.st_size)}, more than the limit of {_mib(max_bytes)}')
    try:
        # O_NONBLOCK: should the path have been swapped for a FIFO since stat(), open() must
        # not wait for a writer; fstat() below then refuses it.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ConfigError(f'{what} "{shown}" cannot be read: {_reason(exc)}') from None
    with os.fdopen(descriptor, "rb") as stream:
        mode = os.fstat(stream.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(f'{what} "{shown}" is {_kind(mode)}, not a regular file')
        try:
            data = _read_at_most(stream, max_bytes + 1)
        except OSError as exc:
            raise ConfigError(f'{what} "{shown}" cannot be read: {_reason(exc)}') from None
    if len(data) > max_bytes:
        raise ConfigError(f'{what} "{shown}" has more than the limit of {_mib(max_bytes)}')
    return data


#: Bytes read at a time: a read of the whole limit at once would take all of it (512 MiB for an
#: image) from the allocator whatever the file's size.
READ_CHUNK = 1024 * 1024


def _read_at_most(stream: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``stream``, read a chunk at a time (memory grows with the file,
    not with the limit)."""
    chunks, total = [], 0
    while total < limit:
        chunk = stream.read(min(READ_CHUNK, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_text(path: Path, what: str, max_bytes: int) -> str:
    """The contents of the regular file at ``path`` as UTF-8 text (see :func:`read_bytes`)."""
    data = read_bytes(path, what, max_bytes)
    shown = shown_path(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f'{what} "{shown}" is not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})') from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split())
