"""Parsing YAML text and files: YAML 1.2 numbers, duplicate keys rejected, errors with file and line.

Numbers follow YAML 1.2 (and yaml-cpp, which the reference simulator uses): ``-.5``, ``1e3`` and
``-5e-2`` are floats, unlike PyYAML's YAML 1.1 default where they would be strings.

Before a document is built, its event stream (libyaml's parser keeps its own stack, so any depth
is safe to scan) is checked against :data:`~sim_server.core.limits.MAX_YAML_DEPTH` and, with
aliases expanded, :data:`~sim_server.core.limits.MAX_YAML_NODES`: a "billion laughs" or a list
nested 10,000 deep is refused in one line instead of exhausting memory or the stack.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.bounded_read import read_text

_YAML12_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


#: libyaml's parser when PyYAML was built with it (about ten times faster), else the pure-Python one.
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """SafeLoader with YAML 1.2 floats that rejects duplicate keys in a mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                line = key_node.start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None, None, f'duplicate key "{key}" (line {line})', key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _YAML12_FLOAT, list("-+.0123456789"))


def _syntax_error(exc: yaml.YAMLError, source: str) -> ConfigError:
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow (NUL, ...)
        return ConfigError(
            f"{source}: invalid YAML: character #x{exc.character:04x} at offset {exc.position} is not allowed"
            if isinstance(exc.character, int)
            else f"{source}: invalid YAML: {exc.reason}"
        )
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    return ConfigError(f"{source}: invalid YAML{where}: {' '.join(str(problem).split())}")


class ReadBudget:
    """What one load (a file and everything it includes) may still read.

    Attributes:
        nodes: YAML nodes (aliases expanded) left for the rest of the load.
        files: included files left.
        eval_seconds: processor seconds left for ``$eval``.
    """

    def __init__(self) -> None:
        self.nodes = limits.MAX_YAML_NODES
        self.files = limits.MAX_INCLUDED_FILES
        self.eval_seconds = limits.EVAL_SECONDS_PER_LOAD


def _structure_error(event: yaml.Event, source: str, message: str) -> ConfigError:
    mark = event.start_mark
    return ConfigError(f"{source}: line {mark.line + 1}: {message}")


def check_structure(text: str, source: str, budget: ReadBudget | None = None) -> int:
    """Check every document of ``text`` against the nesting and size limits of YAML.

    Returns the number of nodes (aliases expanded) of all documents together, which is also
    taken from ``budget`` (when given: the nodes left to the load ``text`` is part of).

    Raises:
        ConfigError: nesting deeper than MAX_YAML_DEPTH, more than MAX_YAML_NODES nodes once
            aliases are expanded, or invalid YAML.
    """
    open_counts: list[int] = []  # nodes so far of each collection being read
    open_anchors: list[str | None] = []
    anchor_sizes: dict[str, int] = {}
    total = 0  # nodes of every document, open collections included
    allowed = limits.MAX_YAML_NODES if budget is None else budget.nodes
    try:
        for event in yaml.parse(text, Loader=_BASE_LOADER):
            if isinstance(event, yaml.CollectionStartEvent):
                if len(open_counts) >= limits.MAX_YAML_DEPTH:
                    raise _structure_error(
                        event, source, f"collections nested deeper than the limit of {limits.MAX_YAML_DEPTH}"
                    )
                open_counts.append(1)
                open_anchors.append(event.anchor)
                total += 1
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                size = open_counts.pop()
                anchor = open_anchors.pop()
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                is_alias = isinstance(event, yaml.AliasEvent)
                size = anchor_sizes.get(event.anchor, 1) if is_alias else 1
                anchor = None if is_alias else event.anchor
                total += size
                if total > allowed:
                    raise _structure_error(
                        event, source,
                        f"more than {limits.MAX_YAML_NODES} YAML nodes in one load, aliases expanded and "
                        "included files counted (an alias bomb?)",
                    )
            else:
                continue
            if anchor is not None:
                anchor_sizes[anchor] = size
            if open_counts:
                open_counts[-1] += size
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, source) from None
    if budget is not None:
        budget.nodes -= total
    return total


def parse_yaml_text(text: str, source: str, budget: ReadBudget | None = None) -> Any:
    """Parse ``text`` (the contents of ``source``) with the strict loader, within the limits."""
    check_structure(text, source, budget)
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, source) from None
    except ValueError as exc:  # a value PyYAML cannot build (an integer of more than 4,300 digits)
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None


def _read_text(path: Path, what: str) -> str:
    return read_text(path, what, limits.MAX_YAML_BYTES)


def load_yaml_text(path: Path, what: str, budget: ReadBudget | None = None) -> Any:
    """Read and parse the single-document YAML file at ``path``; ``what`` names it in errors."""
    return parse_yaml_text(_read_text(path, what), str(path), budget)


def load_yaml_documents(path: Path, what: str, budget: ReadBudget | None = None) -> list[Any]:
    """Read and parse every document of the YAML file at ``path``."""
    text = _read_text(path, what)
    check_structure(text, str(path), budget)
    try:
        return list(yaml.load_all(text, Loader=_StrictLoader))  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, str(path)) from None
    except ValueError as exc:  # as in parse_yaml_text
        raise ConfigError(f"{path}: invalid YAML: {exc}") from None


def expand_home(value: str | Path) -> Path:
    """``value`` with ``~`` and ``~user`` expanded; as written where there is no such home (it
    then names a relative path, which leads to a file that does not exist, said as such)."""
    try:
        return Path(value).expanduser()
    except RuntimeError:  # "Could not determine home directory"
        return Path(value)


def resolved(path: Path, where: str = "") -> Path:
    """``path`` made absolute with its links followed; ConfigError (``where`` in front) for a
    loop of links or a path the OS refuses."""
    try:
        return path.resolve()
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f'{where}"{path}": {exc}') from None


def resolve_path(value: str, relative_to: Path) -> Path:
    """Resolve a path from a YAML file: absolute as given, otherwise relative to that file's folder."""
    path = expand_home(value)
    return path if path.is_absolute() else relative_to.parent / path
