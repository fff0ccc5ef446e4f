"""Parsing YAML text and files: YAML 1.2 numbers, duplicate keys rejected, errors with file and line.

Numbers follow YAML 1.2 (and yaml-cpp, which the reference simulator uses): ``-.5``, ``1e3`` and
``-5e-2`` are floats, unlike PyYAML's YAML 1.1 default where they would be strings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from sim_server.core.errors import ConfigError

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
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    return ConfigError(f"{source}: invalid YAML{where}: {problem}")


def parse_yaml_text(text: str, source: str) -> Any:
    """Parse ``text`` (the contents of ``source``) with the strict loader."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, source) from None


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f'{what} "{path}" does not exist') from None
    except IsADirectoryError:
        raise ConfigError(f'{what} "{path}" is a directory, not a file') from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f'{what} "{path}" cannot be read: {exc}') from None


def load_yaml_text(path: Path, what: str) -> Any:
    """Read and parse the single-document YAML file at ``path``; ``what`` names it in errors."""
    return parse_yaml_text(_read_text(path, what), str(path))


def load_yaml_documents(path: Path, what: str) -> list[Any]:
    """Read and parse every document of the YAML file at ``path``."""
    text = _read_text(path, what)
    try:
        return list(yaml.load_all(text, Loader=_StrictLoader))  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, str(path)) from None


def resolve_path(value: str, relative_to: Path) -> Path:
    """Resolve a path from a YAML file: absolute as given, otherwise relative to that file's folder."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else relative_to.parent / path
