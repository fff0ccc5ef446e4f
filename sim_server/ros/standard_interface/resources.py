"""Finding files the standard interface offers (model files for get_spawnables, world files for
get_available_worlds) in folders, within limits on depth, entries, files read and time.

A source is a folder: a path (``~`` expanded, a relative one against the world file's folder) or
a ``file://`` URI. Sources are local only. A folder is searched depth first, its files by name
and then its subfolders by name, skipping hidden folders and links to folders.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Generic, TypeVar
from urllib.parse import unquote, urlparse

from sim_server.core.errors import RequestError, SimError
from sim_server.core.format.bounded_read import shown_path
from sim_server.core.format.yaml_parsing import expand_home
from sim_server.core.world import World
from sim_server.ros.services import quoted
from sim_server.ros.standard_interface.results import Refused

LOGGER = logging.getLogger("sim_server")

#: Folder levels searched below each source folder.
MAX_SEARCH_DEPTH = 4
#: Directory entries one search looks at, over all its sources.
MAX_SEARCH_ENTRIES = 20_000
#: Files one search reads (parses) at most.
MAX_FILES_READ = 2_000
#: Wall seconds one search may take before it stops with what it has.
SEARCH_TIME_LIMIT = 10.0
#: Sources one request may add.
MAX_SOURCES = 64
#: Characters of one source.
MAX_SOURCE_CHARS = 4096
#: File name endings of the YAML files searched.
YAML_SUFFIXES = (".yaml", ".yml")
#: Separates the folders of the ``resource_paths`` parameter (as in PATH).
PATH_SEPARATOR = os.pathsep

T = TypeVar("T")


def source_folder(source: str, base: Path) -> tuple[Path | None, str]:
    """The folder ``source`` names, or None and why it cannot be searched."""
    if len(source) > MAX_SOURCE_CHARS:
        return None, f"{len(source)} characters, more than the limit of {MAX_SOURCE_CHARS}"
    if "\0" in source:
        return None, "contains a NUL character"
    text = source
    if "://" in source:
        parsed = urlparse(source)
        if parsed.scheme != "file":
            return None, f"scheme {parsed.scheme!r} is not supported (local folders: a path or a file:// URI)"
        text = unquote(parsed.path)
    if not text:
        return None, "empty"
    path = expand_home(text)
    if not path.is_absolute():
        path = base / path
    try:
        if not path.is_dir():
            return None, f"{shown_path(path)} is not a folder"
    except (OSError, ValueError) as exc:
        return None, f"{shown_path(path)}: {exc}"
    return path, ""


def local_yaml_file(uri: str, world: World, unsupported: int, missing: int, what: str) -> Path:
    """The YAML file ``uri`` names: a path (``~`` expanded, a relative one against the world
    file's folder) or a ``file://`` URI. Refused with the code ``unsupported`` for another
    scheme or a name that is not YAML's, ``missing`` for a file that does not exist; ``what``
    names the file in messages."""
    scheme = urlparse(uri).scheme if "://" in uri else ""
    if scheme == "file":
        text = unquote(urlparse(uri).path)
    elif scheme:
        raise Refused(unsupported, f"uri {quoted(uri)}: scheme {quoted(scheme)} is not supported (a path or a file:// URI)")
    else:
        text = uri
    try:
        path = world.model_path(text)
    except RequestError as exc:
        raise Refused(missing, f"uri {quoted(uri)}: {exc}") from None
    if not path.name.lower().endswith(YAML_SUFFIXES):
        raise Refused(
            unsupported, f"uri {quoted(uri)}: not a {what} of format yaml (its name ends in {', '.join(YAML_SUFFIXES)})"
        )
    try:
        found = path.is_file()
    except (OSError, ValueError):  # a name the OS refuses (too long, say)
        found = False
    if not found:
        raise Refused(missing, f"{what} {quoted(shown_path(path))} does not exist")
    return path


def configured_folders(resource_paths: str) -> list[str]:
    """The sources of the ``resource_paths`` parameter (folders separated by ``:``)."""
    return [part for part in resource_paths.split(PATH_SEPARATOR) if part]


@dataclass(frozen=True)
class Sources:
    """The folders a search goes through and the sources that cannot be searched (why)."""

    folders: list[Path]
    failed_defaults: list[str]
    failed_extras: list[str]


def sources(base: Path, resource_paths: str, extras: list[str], what: str) -> Sources:
    """The default sources (``base``, the world file's folder, and the ``resource_paths``
    folders), then ``extras`` (at most :data:`MAX_SOURCES`; ``what`` names them in the
    RequestError for more)."""
    if len(extras) > MAX_SOURCES:
        raise RequestError(f"{len(extras)} {what}, more than the limit of {MAX_SOURCES}")
    found = Sources([base], [], [])
    for source in configured_folders(resource_paths):
        folder, problem = source_folder(source, base)
        if folder is None:
            found.failed_defaults.append(f"resource_paths folder {source!r}: {problem}")
        else:
            found.folders.append(folder)
    for source in extras:
        folder, problem = source_folder(source, base)
        if folder is None:
            found.failed_extras.append(f"{source[:200]!r} ({problem})")
        else:
            found.folders.append(folder)
    return found


@dataclass
class Search(Generic[T]):
    """Searches folders for YAML files that ``read`` accepts (it returns None, or raises
    :class:`~sim_server.core.errors.SimError`, for others). Each file is read once per search,
    whichever sources reach it; ``notes`` says where a limit stopped it."""

    read: Callable[[Path], T | None]
    found: list[tuple[Path, T]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _seen: set[Path] = field(default_factory=set)
    _entries: int = 0
    _files_read: int = 0
    _deadline: float = field(default_factory=lambda: time.monotonic() + SEARCH_TIME_LIMIT)

    @property
    def stopped(self) -> bool:
        return bool(self.notes)

    def folder(self, root: Path) -> None:
        """Search ``root`` and its subfolders (to :data:`MAX_SEARCH_DEPTH`), in name order."""
        pending = [(root, 0)]
        while pending and not self.stopped:
            folder, depth = pending.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda entry: entry.name)
            except OSError:
                continue  # unreadable: nothing to offer from it
            subfolders = []
            for entry in entries:
                if not self._count_entry():
                    return
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < MAX_SEARCH_DEPTH and not entry.name.startswith("."):
                            subfolders.append((Path(entry.path), depth + 1))
                        continue
                    if not entry.name.lower().endswith(YAML_SUFFIXES) or not entry.is_file():
                        continue
                except OSError:
                    continue
                self._file(Path(entry.path))
                if self.stopped:
                    return
            pending.extend(reversed(subfolders))

    def _count_entry(self) -> bool:
        self._entries += 1
        if self._entries > MAX_SEARCH_ENTRIES:
            self.notes.append(f"the search stopped after {MAX_SEARCH_ENTRIES} folder entries")
            return False
        if time.monotonic() > self._deadline:
            self.notes.append(f"the search stopped after {SEARCH_TIME_LIMIT:g} s")
            return False
        return True

    def _file(self, path: Path) -> None:
        try:
            key = path.resolve()
        except (OSError, RuntimeError):
            return
        if key in self._seen:
            return
        self._seen.add(key)
        if self._files_read >= MAX_FILES_READ:
            self.notes.append(f"the search stopped after reading {MAX_FILES_READ} files")
            return
        self._files_read += 1
        try:
            value = self.read(path)
        except SimError:
            return  # not one of the files sought (or broken): not offered
        except Exception as exc:  # a loader's bug: the file is not offered, the search goes on
            LOGGER.warning("reading %s failed: %s: %s", shown_path(path), type(exc).__name__, exc)
            return
        if value is not None:
            self.found.append((path, value))
