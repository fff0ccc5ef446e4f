"""Generated abuse of every key of every bundled plugin (the entry points of
``sim_server.model_plugins`` in setup.py), found by running each plugin on a minimal entry with a
recording reader (:mod:`test.sim_plugins.plugin_keys`), so that a new plugin or key is covered
without being listed:

* every key is read through a checked reader: topics through ``get_topic``, frames through
  ``get_frame``, names through ``get_name``, numbers within a range of
  :mod:`sim_server.core.limits` (a plugin reading a topic with ``get_str`` fails here);
* every value of the wrong kind (beyond each bound of the key's range, NaN, infinities, 1e300,
  huge integers, wrong types; topics and frames ROS or tf2 refuse; names of nothing) ends the
  model's load in one ConfigError line naming the key, never "failed to initialise";
* every value the key's range holds (its bounds, the smallest number above an open bound, 0,
  1e-300 ...) is refused in such a line or loads, and then the model runs a few hundred steps,
  driven at the fastest commands, with finite poses and no plugin disabled or error logged.
"""

from __future__ import annotations

import copy
import logging
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from sim_server.core import World, limits
from sim_server.core.errors import ConfigError
from sim_server.core.geometry import Pose2D
from sim_server.core.plugins import MODEL_PLUGIN_GROUP
from sim_server.core.plugins.manager import available_plugin_types
from sim_plugins.velocity_command import VelocityCommand
from test.sim_plugins.plugin_keys import (
    ENTRY_POINTS, MINIMAL, MODEL_NAME, NAMESPACE, PLUGIN_NAME, Read, load_world, model_text, reads_of,
)

#: Steps an accepted value runs (the commands turn round halfway).
STEPS = 200
#: Values in range tried per plugin type (a seeded sample of them; a load refused is quick, so
#: every value of the wrong kind is tried, while a value accepted runs :data:`STEPS` steps).
MAX_VALUES_IN_RANGE = 150
#: Elements of a long list (a covariance of 36) a value is put at: the first, the last and one
#: drawn with the plugin's seed.
LIST_POSITIONS = 3

#: Readers that check nothing but the type: no bundled plugin may read a key through them.
UNCHECKED_READERS = ("get_str", "get_any", "get_str_list")
NUMERIC_READERS = ("get_float", "get_int", "get_floats", "get_ints")
#: Readers that give words: a key read so whose name says topic, frame or entity must be read
#: through the reader of that kind (switches such as ``enable_odom_pub`` are booleans).
WORD_READERS = ("get_str", "get_any", "get_str_list", "get_name", "get_name_list", "get_topic", "get_frame", "get_choice")
#: Keys that name a topic, a frame or an entity (by their names).
TOPIC_KEY = re.compile(r"topic|.*_topic|.*_pub|.*_sub")
FRAME_KEY = re.compile(r"frame|.*frame_id|.*_frame")
NAME_KEY = re.compile(r"body|reference|exclude|layers|.*_joint")

#: Values of no kind any key takes (besides those of each kind below).
WRONG_TYPES: list[Any] = [{"a": 1}, [[1]]]
BAD_NUMBERS: list[Any] = [math.nan, math.inf, -math.inf, 1e300, -1e300, 10**40, -(10**40), 2**64, "abc", True, None, [1.0]]
#: Numbers tried against every range: each is accepted or refused as the range says.
PROBE_NUMBERS: list[Any] = [0, 0.0, -1, 1, -1.0, 1e-300, 5e-324, -5e-324]
TOPICS_REFUSED = ["", "a b", "1x", "x//y", "~x", "x/", "/", "~", "{x}", "x" * (limits.MAX_TOPIC_LENGTH + 1), "x" * 500,
                  ["x"], True, None]
TOPICS_ACCEPTED = ["t_x", "/t_abs/y", "~/t_private", "a/b_c", "x" * limits.MAX_TOPIC_LENGTH]
FRAMES_REFUSED = ["", "/", "//x", "a b", "a//b", "a/", "bad frame/../x", "a\tb", "x" * (limits.MAX_FRAME_LENGTH + 1),
                  ["x"], True, None]
FRAMES_ACCEPTED = ["/world_x", "f_x", "a/b", "frame-1.2", "x" * limits.MAX_FRAME_LENGTH]
NAMES_REFUSED = ["nonexistent", "x" * (limits.MAX_NAME_LENGTH + 1), "a\x01b", ["x"], None, True]
BOOLS_REFUSED = ["yes", "true", 1, 0, None, [True]]
CHOICES_REFUSED = ["nope", 3, None, ["x"], True]

REFUSED, ACCEPTED, EITHER = "refused", "accepted", "either"


@dataclass
class Case:
    """A plugin entry with one key changed: ``config`` (the whole entry), the key's ``path``,
    what it shows (``shown``) and what must happen (``expect``: REFUSED, ACCEPTED or EITHER: in
    range, refused in one line naming the key or running clean)."""

    config: dict[str, Any]
    path: tuple[str, ...]
    shown: str
    expect: str


# ------------------------------------------------------------------------------------ the reads
def _limits_constant(value: Any) -> bool:
    """Whether ``value`` is a range stated in :mod:`sim_server.core.limits` (a module constant)."""
    return isinstance(value, limits.Range) and any(value is constant for constant in vars(limits).values())


def read_problems(read: Read) -> list[str]:
    """What breaks the rules in how ``read`` is read."""
    where = f"key {'.'.join(read.path)!r} ({read.method})"
    problems = []
    if read.method in UNCHECKED_READERS:
        problems.append(f"{where}: read unchecked; use get_topic, get_frame, get_name, get_choice or a numeric reader")
    words = read.method in WORD_READERS
    if words and TOPIC_KEY.fullmatch(read.key) and read.method != "get_topic":
        problems.append(f"{where}: names a topic, so it must be read with get_topic")
    if words and FRAME_KEY.fullmatch(read.key) and read.method != "get_frame":
        problems.append(f"{where}: names a frame, so it must be read with get_frame")
    if words and NAME_KEY.fullmatch(read.key) and read.method not in ("get_name", "get_name_list"):
        problems.append(f"{where}: names a body, joint or layer, so it must be read with get_name or get_name_list")
    if read.method in NUMERIC_READERS:
        within = read.kwargs.get("within")
        ranges = within if isinstance(within, (list, tuple)) else [within]
        if not ranges or not all(_limits_constant(bound) for bound in ranges):
            problems.append(f"{where}: its range must be a constant of sim_server.core.limits (within=...), got {within!r}")
    return problems


# ------------------------------------------------------------------------------------ the cases
def _set(config: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A copy of ``config`` with ``value`` at ``path`` (nested maps made where missing)."""
    result = copy.deepcopy(config)
    node = result
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    return result


def _current(config: dict[str, Any], read: Read, default: Any) -> Any:
    """The value at the read's path in ``config``, else ``default``."""
    node: Any = config
    for key in read.path:
        if not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return node


def _nearest(value: float, towards: float) -> float:
    return math.nextafter(float(value), towards)


def number_values(bound: limits.Range, whole: bool) -> Iterator[tuple[Any, str]]:
    """(value, expectation) for a number within ``bound``: its bounds and their neighbours, the
    probes, bad numbers and (for whole numbers) fractions."""
    low, high = bound.low, bound.high
    if whole:
        candidates: list[Any] = [int(low), int(high), int(low) - 1, int(high) + 1, 1.5, *PROBE_NUMBERS]
    else:
        candidates = [low, high, _nearest(low, math.inf), _nearest(low, -math.inf), _nearest(high, math.inf),
                      _nearest(high, -math.inf), *PROBE_NUMBERS]
    seen = set()
    for value in candidates:
        if repr(value) not in seen:
            seen.add(repr(value))
            kind_ok = isinstance(value, int) if whole else isinstance(value, (int, float))
            yield value, EITHER if kind_ok and bound.contains(value) else REFUSED
    for value in BAD_NUMBERS + WRONG_TYPES:
        yield value, REFUSED


def rate_values() -> Iterator[tuple[Any, str]]:
    """(value, expectation) for an update rate: RATE or .inf."""
    for value, expect in number_values(limits.RATE, whole=False):
        yield value, EITHER if value == math.inf and not isinstance(value, bool) else expect


def list_values(read: Read, config: dict[str, Any], seed: str) -> Iterator[tuple[Any, str]]:
    """(value, expectation) for a list of numbers (get_floats, get_ints, get_pose,
    get_position): the list with one element changed, at a few positions, and wrong shapes."""
    if read.method == "get_pose":
        size, ranges, whole = 3, [limits.COORDINATE, limits.COORDINATE, limits.ANGLE], False
        default = read.argument("default", 0, Pose2D())
        default = [default.x, default.y, default.theta] if isinstance(default, Pose2D) else default
    elif read.method == "get_position":
        size, ranges, whole, default = 2, [limits.COORDINATE] * 2, False, read.argument("default", 0, (0.0, 0.0))
    else:
        size, whole = read.argument("size", 0), read.method == "get_ints"
        within = read.kwargs["within"]
        ranges = list(within) if isinstance(within, (list, tuple)) else [within] * size
        default = read.argument("default", 1, [0] * size)
    base = list(_current(config, read, default))
    positions = sorted({0, size - 1, random.Random(seed).randrange(size)})[:LIST_POSITIONS]
    for position in positions:
        for value, expect in number_values(ranges[position], whole):
            changed = list(base)
            changed[position] = value
            yield changed, expect
    for value in (base[:-1], base + base[:1], "abc", 5, None, {"a": 1}):
        yield value, REFUSED


def values_of(read: Read, config: dict[str, Any], seed: str) -> Iterator[tuple[Any, str]]:
    """(value, expectation) for the key ``read`` names."""
    method = read.method
    if method == "get_float":
        yield from number_values(read.kwargs["within"], whole=False)
    elif method == "get_int":
        yield from number_values(read.kwargs["within"], whole=True)
    elif method == "get_rate":
        yield from rate_values()
    elif method in ("get_floats", "get_ints", "get_pose", "get_position"):
        yield from list_values(read, config, seed)
    elif method == "get_bool":
        yield from [(True, EITHER), (False, EITHER)] + [(value, REFUSED) for value in BOOLS_REFUSED + WRONG_TYPES]
    elif method == "get_topic":
        accepted = TOPICS_ACCEPTED + ([""] if read.kwargs.get("empty_means_none") else [])
        refused = [value for value in TOPICS_REFUSED if value not in accepted]
        yield from [(value, ACCEPTED) for value in accepted] + [(value, REFUSED) for value in refused + WRONG_TYPES]
    elif method == "get_frame":
        yield from [(value, EITHER) for value in FRAMES_ACCEPTED] + [(value, REFUSED) for value in FRAMES_REFUSED + WRONG_TYPES]
    elif method == "get_name":
        yield from [(value, REFUSED) for value in NAMES_REFUSED + WRONG_TYPES]
    elif method == "get_name_list":
        yield from [([value], REFUSED) for value in NAMES_REFUSED[:3]] + [(value, REFUSED) for value in (3, {"a": 1}, [[1]])]
    elif method == "get_choice":
        choices = read.argument("choices", 0)
        yield from [(value, EITHER) for value in choices] + [(value, REFUSED) for value in CHOICES_REFUSED]
    elif method == "get_map":
        current = _current(config, read, {})
        yield from [(value, REFUSED) for value in (3, "abc", [1], {**current, "unexpected_key": 1})]
    else:
        raise AssertionError(f"key {'.'.join(read.path)!r}: no values for the reader {method}")


def cases_of(plugin_type: str, reads: list[Read]) -> list[Case]:
    """Every case of ``plugin_type`` (at most :data:`MAX_VALUES_IN_RANGE` of those in range, a
    seeded sample), each key's values in turn, and an unknown key."""
    minimal = MINIMAL[plugin_type]
    cases = [Case({**minimal, "unexpected_key": 1}, ("unexpected_key",), "unexpected_key: 1", REFUSED)]
    for read in reads:
        for value, expect in values_of(read, minimal, f"{plugin_type}:{read.path}"):
            cases.append(Case(_set(minimal, read.path, value), read.path, f"{'.'.join(read.path)}: {value!r:.60}", expect))
    refused = [case for case in cases if case.expect == REFUSED]
    others = [case for case in cases if case.expect != REFUSED]
    if len(others) > MAX_VALUES_IN_RANGE:
        others = random.Random(plugin_type).sample(others, MAX_VALUES_IN_RANGE)
    return refused + others


# ------------------------------------------------------------------------------------ the runs
class _Errors(logging.Handler):
    """Collects the server's error messages (a plugin disabled, a batch split)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def names_key(message: str, path: tuple[str, ...]) -> bool:
    """Whether ``message`` names every part of the key's ``path`` (as words)."""
    return all(re.search(rf"(?<![\w]){re.escape(part)}(?![\w])", message) for part in path)


def refusal_problem(message: str, case: Case) -> str | None:
    """What is wrong with a load's error ``message`` for ``case`` (None: one line naming the
    file and the key)."""
    if "\n" in message or "failed to initialise" in message or ".yaml" not in message:
        return f"not one clean line: {message!r:.400}"
    if not names_key(message, case.path):
        return f"does not name the key: {message!r:.400}"
    return None


def drive_hard(world: World, sign: float) -> None:
    """Command every drive of the model at the fastest speeds (``sign`` picks the direction)."""
    for plugin in world.plugins.plugins_of(world.models[MODEL_NAME]):
        command = getattr(plugin, "command", None)
        if isinstance(command, VelocityCommand):
            command.linear, command.angular = sign * limits.SPEED.high, sign * limits.ANGULAR_SPEED.high
            if command.uses_lateral:
                command.lateral = -sign * limits.SPEED.high


def run_problem(world: World, errors: _Errors) -> str | None:
    """Run the spawned model :data:`STEPS` steps, driven hard; what went wrong, or None."""
    model = world.models[MODEL_NAME]
    for half in (1.0, -1.0):
        drive_hard(world, half)
        world.step(STEPS // 2)
    bodies = [(name, body.physics_body) for name, body in model.bodies.items()]
    bad = [name for name, body in bodies if not all(map(math.isfinite, (*body.position, body.angle, *body.linearVelocity)))]
    if bad:
        return f"bodies {bad} are not finite after {STEPS} steps"
    if len(world.plugins.plugins_of(model)) != 1:
        return f"the plugin was disabled: {errors.messages[:1]}"
    if errors.messages:
        return f"errors were logged: {errors.messages[:2]}"
    return None


def outcome(world: World, folder: Path, plugin_type: str, case: Case, errors: _Errors) -> str | None:
    """Spawn the model of ``case`` in ``world`` and judge it; what went wrong, or None."""
    (folder / "case.model.yaml").write_text(model_text(plugin_type, case.config))
    errors.messages.clear()
    try:
        world.spawn_model("case.model.yaml", MODEL_NAME, NAMESPACE)
    except ConfigError as exc:
        if case.expect == ACCEPTED:
            return f"refused: {str(exc)!r:.300}"
        return refusal_problem(str(exc), case)
    except Exception as exc:  # noqa: BLE001 - anything else is the failure this test looks for
        return f"raised {type(exc).__name__}: {exc!s:.300}"
    try:
        if case.expect == REFUSED:
            return "accepted"
        return run_problem(world, errors)
    except Exception as exc:  # noqa: BLE001
        return f"running raised {type(exc).__name__}: {exc!s:.300}"
    finally:
        world.delete_model(MODEL_NAME)


# ------------------------------------------------------------------------------------ the tests
def test_every_entry_point_is_installed_and_has_a_minimal_entry() -> None:
    installed = {
        name: point.value for name, point in available_plugin_types(MODEL_PLUGIN_GROUP, refresh=True).items()
        if point.dist is not None and point.dist.name.replace("-", "_") == "sim_server"  # (not other packages')
    }
    assert ENTRY_POINTS and installed == ENTRY_POINTS
    assert sorted(MINIMAL) == sorted(ENTRY_POINTS), "add a minimal entry of each new plugin type to plugin_keys.MINIMAL"


@pytest.mark.parametrize("plugin_type", sorted(ENTRY_POINTS))
def test_every_key_is_read_through_a_checked_reader(tmp_path: Path, plugin_type: str) -> None:
    reads = reads_of(plugin_type, tmp_path)
    assert reads, f"{plugin_type} read no key"
    problems = [problem for read in reads for problem in read_problems(read)]
    assert not problems, f"{plugin_type}:\n" + "\n".join(problems)


@pytest.mark.parametrize("plugin_type", sorted(ENTRY_POINTS))
def test_generated_values_are_refused_in_one_line_or_run_clean(tmp_path: Path, plugin_type: str) -> None:
    cases = cases_of(plugin_type, reads_of(plugin_type, tmp_path))
    assert any(case.expect == REFUSED for case in cases) and any(case.expect != REFUSED for case in cases)
    errors = _Errors()
    logging.getLogger("sim_server").addHandler(errors)
    world = load_world(tmp_path)
    failures = []
    try:
        for case in cases:
            problem = outcome(world, tmp_path, plugin_type, case, errors)
            if problem is not None:
                failures.append(f"{case.shown} ({case.expect}): {problem}")
    finally:
        world.close()
        logging.getLogger("sim_server").removeHandler(errors)
    assert not failures, f"{plugin_type}: {len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures[:40])


@pytest.mark.parametrize("plugin_type", sorted(ENTRY_POINTS))
def test_a_refused_value_fails_the_world_file_in_the_same_line(tmp_path: Path, plugin_type: str) -> None:
    """Loading a world file whose model carries a bad key ends as spawning it does: one line,
    naming the world file's entry, the model file and the key."""
    read = next(read for read in reads_of(plugin_type, tmp_path) if read.method != "get_map")
    case = next(case for case in cases_of(plugin_type, [read]) if case.expect == REFUSED and case.path == read.path)
    load_world(tmp_path).close()
    (tmp_path / "case.model.yaml").write_text(model_text(plugin_type, case.config))
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n  - {name: walls, map: walls.yaml}\n"
        f"models:\n  - {{name: {MODEL_NAME}, model: case.model.yaml, namespace: {NAMESPACE}}}\n"
    )
    with pytest.raises(ConfigError) as raised:
        World.from_file(tmp_path / "world.yaml").close()
    message = str(raised.value)
    assert refusal_problem(message, case) is None, message
    assert "world.yaml" in message and "case.model.yaml" in message and f'"{PLUGIN_NAME}"' in message

