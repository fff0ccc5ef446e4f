"""Strict reading of YAML configuration files.

:func:`load_yaml_file` parses and preprocesses a file (:mod:`sim_server.core.format.yaml_preprocessor`)
and :class:`YamlReader` reads one mapping of it. A reader knows the file and the entry it reads
(``layers[2] ("walls")``), checks the type of every value, records which keys were read and
reports the rest as unrecognized, so every error names the file, the entry and the key at fault.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import yaml

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.entity_names import frame_problem, topic_problem
from sim_server.core.format.yaml_parsing import parse_yaml_text, resolve_path  # noqa: F401 - re-exported
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from sim_server.core.geometry import Pose2D
from sim_server.core.limits import Range

#: Sentinel meaning "this key must be present".
REQUIRED: Any = object()


def load_yaml_file(path: Path, what: str, preprocessor: YamlPreprocessor | None = None) -> Any:
    """Read, parse and preprocess the YAML file at ``path``; ``what`` names it in errors."""
    return (preprocessor or YamlPreprocessor()).load_file(path, what)


def describe(value: Any) -> str:
    """A short rendering of a YAML value for error messages."""
    text = repr(value) if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip()
    text = text.removesuffix("\n...").strip()
    return text if len(text) <= 60 else text[:57] + "..."


class YamlReader:
    """Typed, strict access to one YAML mapping of a file.

    Args:
        data: the mapping read from the file.
        file: the file it came from (named in every error).
        location: the entry inside the file, e.g. ``models[1] ("robot")``; empty for the top level.
    """

    def __init__(self, data: Any, file: Path, location: str = "") -> None:
        self.file = file
        self.location = location
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"{self._prefix()}must be a mapping of keys to values, got {describe(data)}")
        self._data: dict[Any, Any] = data
        self._accessed: set[Any] = set()

    # ----------------------------------------------------------------------------- errors
    def _prefix(self) -> str:
        return f"{self.file}: {self.location}: " if self.location else f"{self.file}: "

    def error(self, message: str, key: str | None = None) -> ConfigError:
        """Build a :class:`ConfigError` about ``key`` of this entry (or the entry itself)."""
        subject = f'key "{key}" ' if key is not None else ""
        return ConfigError(f"{self._prefix()}{subject}{message}")

    def rename(self, location: str) -> None:
        """Change the entry's description (e.g. once its name is known)."""
        self.location = location

    # ----------------------------------------------------------------------------- access
    def has(self, key: str) -> bool:
        """Whether ``key`` is present (does not count as reading it)."""
        return key in self._data

    def keys(self) -> list[str]:
        """The keys present in this mapping, in file order."""
        return [str(k) for k in self._data]

    def _raw(self, key: str, default: Any) -> Any:
        self._accessed.add(key)
        if key not in self._data:
            if default is REQUIRED:
                raise self.error("is missing", key)
            return default
        return self._data[key]

    def get_any(self, key: str, default: Any = REQUIRED) -> Any:
        """The raw value of ``key``, whatever its type."""
        return self._raw(key, default)

    def get_str(self, key: str, default: Any = REQUIRED) -> str:
        """A string value; plain numbers are accepted and converted, as yaml-cpp does."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return value
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.error(f"must be a string, got {describe(value)}", key)
        return str(value)

    def get_name(self, key: str, default: Any = REQUIRED) -> str:
        """A name (of a body, joint, plugin, layer, level ...): a string of at most
        :data:`~sim_server.core.limits.MAX_NAME_LENGTH` printable characters."""
        return self._checked_str(key, default, _name_problem)

    def get_topic(self, key: str, default: Any = REQUIRED, *, empty_means_none: bool = False) -> str:
        """A ROS 2 topic a plugin names (relative, absolute or private: see
        :func:`~sim_server.core.format.entity_names.topic_problem`); the default is checked too.
        With ``empty_means_none`` the value ``""`` is accepted and returned: no topic."""
        return self._checked_str(key, default, topic_problem, empty_means_none)

    def get_frame(self, key: str, default: Any = REQUIRED) -> str:
        """A TF frame id a plugin names (see
        :func:`~sim_server.core.format.entity_names.frame_problem`); the default is checked too."""
        return self._checked_str(key, default, frame_problem)

    def get_choice(self, key: str, choices: Sequence[str], default: Any = REQUIRED) -> str:
        """One of the strings ``choices`` (a mode, a kind: a closed set of words)."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return value
        if not isinstance(value, str) or value not in choices:
            raise self.error(f"must be one of {', '.join(choices)}, got {describe(value)}", key)
        return value

    def _checked_str(
        self, key: str, default: Any, problem_of: Callable[[str], str | None], empty_means_none: bool = False
    ) -> str:
        """A string value (see :meth:`get_str`) for which ``problem_of`` finds no problem (else
        the problem, naming the key); ``""`` passes with ``empty_means_none``."""
        text = self.get_str(key, default)
        if empty_means_none and text == "":
            return text
        problem = problem_of(text)
        if problem is not None:
            raise self.error(problem, key)
        return text

    def get_rate(self, key: str, default: Any = REQUIRED) -> float:
        """An update rate (Hz): a number within :data:`~sim_server.core.limits.RATE` (0: once,
        at the start), or ``.inf`` (every step)."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return value
        if isinstance(value, float) and value == math.inf:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not limits.RATE.contains(value):
            raise self.error(f"must be a rate: {limits.RATE.describe()}, or .inf (every step), got {describe(value)}", key)
        return float(value)

    def get_float(
        self,
        key: str,
        default: Any = REQUIRED,
        *,
        minimum: float | None = None,
        positive: bool = False,
        within: Range | None = None,
    ) -> float:
        """A finite number of at most :data:`~sim_server.core.limits.MAX_MAGNITUDE`.

        ``within`` is the range the value must lie in (see :mod:`sim_server.core.limits`);
        ``minimum`` is an inclusive lower bound, ``positive`` demands > 0.
        """
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return value
        number = self._to_float(value, key, within=within)
        if positive and not number > 0.0:
            raise self.error(f"must be greater than 0, got {describe(value)}", key)
        if minimum is not None and number < minimum:
            raise self.error(f"must be at least {minimum:g}, got {describe(value)}", key)
        return number

    def get_int(
        self, key: str, default: Any = REQUIRED, *, minimum: int | None = None, within: Range | None = None
    ) -> int:
        """An integer value in the range ``within`` (by default of magnitude at most
        :data:`~sim_server.core.limits.MAX_MAGNITUDE`); ``minimum`` is an inclusive lower bound."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"must be an integer, got {describe(value)}", key)
        if minimum is not None and value < minimum:
            raise self.error(f"must be at least {minimum}, got {value}", key)
        within = within or _INTEGER
        if not within.contains(value):
            raise self.error(f"must be an integer >= {within.low:g} and <= {within.high:g}, got {value}", key)
        return value

    def get_bool(self, key: str, default: Any = REQUIRED) -> bool:
        """A boolean (``true``/``false``)."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return value
        if not isinstance(value, bool):
            raise self.error(f"must be true or false, got {describe(value)}", key)
        return value

    def get_floats(
        self, key: str, size: int, default: Any = REQUIRED, *, within: Range | Sequence[Range] | None = None
    ) -> tuple[float, ...]:
        """A list of exactly ``size`` finite numbers, each in ``within`` (one range for all, or
        one per item)."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return tuple(value)
        if not isinstance(value, list) or len(value) != size:
            raise self.error(f"must be a list of {size} numbers, got {describe(value)}", key)
        ranges = within if isinstance(within, Sequence) else [within] * size
        return tuple(self._to_float(item, key, whole=value, within=bound) for item, bound in zip(value, ranges))

    def get_ints(self, key: str, size: int, default: Any = REQUIRED, *, within: Range) -> tuple[int, ...]:
        """A list of exactly ``size`` integers, each in ``within``."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return tuple(value)
        if (
            not isinstance(value, list)
            or len(value) != size
            or not all(isinstance(item, int) and not isinstance(item, bool) and within.contains(item) for item in value)
        ):
            raise self.error(
                f"must be a list of {size} integers, each >= {within.low:g} and <= {within.high:g}, got {describe(value)}",
                key,
            )
        return tuple(value)

    def get_position(self, key: str, default: Any = REQUIRED) -> tuple[float, float]:
        """A point ``[x, y]`` of the world (m), within :data:`~sim_server.core.limits.COORDINATE`."""
        return self.get_floats(key, 2, default, within=limits.COORDINATE)  # type: ignore[return-value]

    def get_pose(self, key: str, default: Pose2D | Any = REQUIRED) -> Pose2D:
        """A pose ``[x, y, theta]`` in metres and radians, within the coordinate and angle bounds."""
        if key not in self._data and default is not REQUIRED:
            self._accessed.add(key)
            return default
        x, y, theta = self.get_floats(key, 3, within=_POSE_RANGES)
        return Pose2D(x, y, theta)

    def get_point_list(
        self, key: str, min_size: int, max_size: int, default: Any = REQUIRED
    ) -> list[tuple[float, float]]:
        """A list of ``[x, y]`` points (metres) with ``min_size`` to ``max_size`` entries."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return list(value)
        if not isinstance(value, list):
            raise self.error(f"must be a list of [x, y] points, got {describe(value)}", key)
        if not min_size <= len(value) <= max_size:
            raise self.error(
                f"must have {min_size} to {max_size} points, got {len(value)}", key
            )
        points = []
        for index, item in enumerate(value):
            if not isinstance(item, list) or len(item) != 2:
                raise self.error(f"point {index} must be a list of 2 numbers, got {describe(item)}", key)
            points.append(
                (
                    self._to_float(item[0], key, whole=item, within=limits.BODY_OFFSET),
                    self._to_float(item[1], key, whole=item, within=limits.BODY_OFFSET),
                )
            )
        return points

    def get_str_list(self, key: str, default: Any = REQUIRED, *, scalar_ok: bool = False) -> list[str]:
        """A list of strings; with ``scalar_ok`` a single string stands for a list of one."""
        value = self._raw(key, default)
        if value is default and key not in self._data:
            return list(value)
        if scalar_ok and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return [str(value)]
        if not isinstance(value, list) or any(
            isinstance(item, bool) or not isinstance(item, (str, int, float)) for item in value
        ):
            raise self.error(f"must be a list of strings, got {describe(value)}", key)
        return [str(item) for item in value]

    def get_name_list(self, key: str, default: Any = REQUIRED, *, scalar_ok: bool = False) -> list[str]:
        """A list of names (see :meth:`get_name`)."""
        names = self.get_str_list(key, default, scalar_ok=scalar_ok)
        for name in names:
            problem = _name_problem(name)
            if problem is not None:
                raise self.error(problem, key)
        return names

    def get_map(self, key: str, default: Any = REQUIRED) -> "YamlReader":
        """The mapping under ``key`` as a reader of its own."""
        value = self._raw(key, default)
        if key not in self._data and default is not REQUIRED:
            return self._child(value, self._child_location(key))
        if not isinstance(value, dict) and value is not None:
            raise self.error(f"must be a mapping of keys to values, got {describe(value)}", key)
        return self._child(value, self._child_location(key))

    def get_map_list(self, key: str, default: Any = REQUIRED) -> list["YamlReader"]:
        """The list of mappings under ``key``; each becomes a reader located ``key[i]``."""
        value = self._raw(key, default)
        if value is None:
            value = []
        if not isinstance(value, list):
            raise self.error(f"must be a list, got {describe(value)}", key)
        readers = []
        for index, item in enumerate(value):
            location = self._child_location(f"{key}[{index}]")
            if not isinstance(item, dict):
                raise ConfigError(f"{self.file}: {location}: must be a mapping of keys to values, got {describe(item)}")
            readers.append(self._child(item, location))
        return readers

    def ensure_all_keys_used(self) -> None:
        """Raise if the mapping holds keys that were never read (sorted in the message)."""
        unknown = sorted(str(k) for k in self._data if k not in self._accessed)
        if unknown:
            names = ", ".join(f'"{name}"' for name in unknown)
            raise self.error(f"unrecognized key(s) {names}")

    def ignore(self, *keys: str) -> None:
        """Mark keys as read although their values are not used (accepted for compatibility)."""
        self._accessed.update(keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    # ----------------------------------------------------------------------------- helpers
    def _child(self, data: Any, location: str) -> "YamlReader":
        """A reader of the mapping ``data`` found at ``location`` in this reader's file."""
        return YamlReader(data, self.file, location)

    def _child_location(self, child: str) -> str:
        return f"{self.location}.{child}" if self.location else child

    def _to_float(
        self, value: Any, key: str, whole: Sequence[Any] | None = None, within: Range | None = None
    ) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problem = "must be a number"
        else:
            try:
                number = float(value)
            except OverflowError:  # an integer beyond float's range
                number = math.inf
            if within is not None:
                if within.contains(number):
                    return number
                problem = f"must be {within.describe()}"
            elif not math.isfinite(number):
                problem = "must be a finite number"
            elif abs(number) > limits.MAX_MAGNITUDE:
                problem = f"must be at most {limits.MAX_MAGNITUDE:g} in magnitude"
            else:
                return number
        # (the value is shown only in an error: rendering it is a YAML dump)
        raise self.error(f"{problem}, got {describe(whole if whole is not None else value)}", key)


def _name_problem(name: str) -> str | None:
    if len(name) > limits.MAX_NAME_LENGTH:
        return f"must be a name of at most {limits.MAX_NAME_LENGTH} characters, got {len(name)} ({describe(name)})"
    if not name.isprintable():
        return f"must be a name of printable characters, got {describe(name)}"
    return None


_INTEGER = Range(-limits.MAX_MAGNITUDE, limits.MAX_MAGNITUDE)
_POSE_RANGES = (limits.COORDINATE, limits.COORDINATE, limits.ANGLE)
