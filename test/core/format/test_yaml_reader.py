"""Tests of the strict YAML reader."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.format.entity_names import frame_problem
from sim_server.core.format.yaml_reader import YamlReader, load_yaml_file, parse_yaml_text
from sim_server.core.geometry import Pose2D
from test.conftest import FLATLAND_DATA, REPO_ROOT

FILE = Path("/tmp/example.yaml")


def reader(text: str) -> YamlReader:
    return YamlReader(parse_yaml_text(text, str(FILE)), FILE)


def test_yaml12_numbers_are_floats_like_yaml_cpp() -> None:
    data = parse_yaml_text("a: -.2\nb: -5e-2\nc: 1e3\nd: 12\ne: 2d\n", "x")
    assert data == {"a": -0.2, "b": -0.05, "c": 1000.0, "d": 12, "e": "2d"}


def test_duplicate_keys_are_rejected_with_line() -> None:
    with pytest.raises(ConfigError, match=r'duplicate key "a" \(line 2\)'):
        parse_yaml_text("a: 1\na: 2\n", "f.yaml")


def test_syntax_error_names_file_and_line() -> None:
    with pytest.raises(ConfigError, match=r"f\.yaml: invalid YAML at line 2"):
        parse_yaml_text("a: [1, 2\nb: 3\n", "f.yaml")


def test_missing_file_names_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match=f'world file "{missing}" does not exist'):
        load_yaml_file(missing, "world file")


def test_required_key_missing() -> None:
    with pytest.raises(ConfigError, match=r'/tmp/example\.yaml: key "name" is missing'):
        reader("other: 1").get_str("name")


def test_unknown_keys_are_listed_sorted() -> None:
    r = reader("b: 1\na: 2\nkeep: 3")
    r.get_int("keep")
    with pytest.raises(ConfigError, match=r'unrecognized key\(s\) "a", "b"'):
        r.ensure_all_keys_used()


@pytest.mark.parametrize(
    ("text", "call", "message"),
    [
        ("x: abc", lambda r: r.get_float("x"), 'key "x" must be a number'),
        ("x: .nan", lambda r: r.get_float("x"), 'key "x" must be a finite number'),
        ("x: 1.5", lambda r: r.get_int("x"), 'key "x" must be an integer'),
        ("x: 1", lambda r: r.get_bool("x"), 'key "x" must be true or false'),
        ("x: [1, 2]", lambda r: r.get_pose("x"), 'key "x" must be a list of 3 numbers'),
        ("x: -1", lambda r: r.get_float("x", positive=True), 'key "x" must be greater than 0'),
        ("x: [[1, 2], [3]]", lambda r: r.get_point_list("x", 1, 8), 'point 1 must be a list of 2 numbers'),
        ("x: {a: 1}", lambda r: r.get_map_list("x"), 'key "x" must be a list'),
        ("x: [1, 2]", lambda r: r.get_map_list("x"), r"x\[0\]: must be a mapping"),
    ],
)
def test_type_errors_name_file_and_key(text: str, call, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        call(reader(text))
    assert str(info.value).startswith(str(FILE))


def test_pose_and_defaults() -> None:
    r = reader("p: [1, 2, 0.5]")
    assert r.get_pose("p") == Pose2D(1.0, 2.0, 0.5)
    assert r.get_pose("q", Pose2D()) == Pose2D()
    assert r.get_float("f", 2.5) == 2.5
    assert r.get_str_list("names", ["all"]) == ["all"]
    r.ensure_all_keys_used()


def test_nested_locations_are_named() -> None:
    r = reader("bodies:\n  - name: base\n    colr: 1\n")
    (body,) = r.get_map_list("bodies")
    body.get_str("name")
    with pytest.raises(ConfigError, match=r'example\.yaml: bodies\[0\]: unrecognized key\(s\) "colr"'):
        body.ensure_all_keys_used()


@pytest.mark.parametrize(("text", "expected"), [("t: scan", "scan"), ("t: /r1/scan", "/r1/scan"), ("t: ~/scan", "~/scan"), ("", "cmd")])
def test_topics_are_ros_names(text: str, expected: str) -> None:
    assert reader(text or "{}").get_topic("t", "cmd") == expected


@pytest.mark.parametrize("text", ['t: ""', "t: /a//b", "t: 1abc", "t: bad topic!!", "t: a/", "t: [scan]", "t: ~scan",
                                  "t: ~", "t: '{x}'", "t: " + "x" * (limits.MAX_TOPIC_LENGTH + 1)])
def test_a_topic_ros_refuses_is_one_line_naming_the_key(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        reader(text).get_topic("t", "cmd")
    assert str(info.value).startswith(f'{FILE}: key "t" ') and "\n" not in str(info.value)


def test_an_empty_topic_means_none_only_where_asked() -> None:
    assert reader('t: ""').get_topic("t", "", empty_means_none=True) == ""
    assert reader("{}").get_topic("t", "", empty_means_none=True) == ""
    assert reader("t: x").get_topic("t", "", empty_means_none=True) == "x"
    with pytest.raises(ConfigError, match='key "t" topic'):
        reader("t: a b").get_topic("t", "", empty_means_none=True)
    with pytest.raises(ConfigError, match='key "t" topic'):
        reader("{}").get_topic("t", "")


def test_frames_are_checked_defaults_too() -> None:
    assert reader("f: base_link").get_frame("f") == "base_link" and reader("{}").get_frame("f", "r1_laser") == "r1_laser"
    for text, default in (('f: ""', "x"), ("f: a b", "x"), ("f: " + "f" * 300, "x"), ("{}", "with space")):
        with pytest.raises(ConfigError, match=r'key "f" frame .* (is not a TF frame id|characters)'):
            reader(text).get_frame("f", default)


@pytest.mark.parametrize(("frame", "why"), [
    ("", "empty"), ("/", "empty"), ("//map", "empty segment"), ("a//b", "empty segment"), ("a/", "empty segment"),
    ("bad frame/../x", "whitespace"), ("a\tb", "whitespace"), ("a\u0001b", "control"), ("f" * (limits.MAX_FRAME_LENGTH + 1), "characters"),
])
def test_frames_tf2_cannot_use_are_refused(frame: str, why: str) -> None:
    problem = frame_problem(frame)
    assert problem is not None and why in problem


def _frame_values(node: object) -> list[str]:
    """Every value of a frame key (``frame``, ``*frame_id``) in a parsed YAML document."""
    if isinstance(node, dict):
        found = [value for key, value in node.items() if isinstance(value, str) and (key == "frame" or str(key).endswith("frame_id"))]
        return found + [value for child in node.values() for value in _frame_values(child)]
    if isinstance(node, list):
        return [value for child in node for value in _frame_values(child)]
    return []


def test_every_frame_of_the_reference_s_tests_and_the_bundled_worlds_is_accepted() -> None:
    files = sorted(FLATLAND_DATA.rglob("*.yaml")) + sorted((REPO_ROOT / "config" / "worlds").rglob("*.yaml"))
    frames = set()
    for file in files:
        try:
            documents = list(yaml.safe_load_all(file.read_text()))
        except yaml.YAMLError:  # (the reference's tests of broken files)
            continue
        frames.update(frame for document in documents for frame in _frame_values(document))
    assert {"map", "laser_front", "world", "center_laser", "laser_flipped_custom"} <= frames
    assert {frame: frame_problem(frame) for frame in frames if frame_problem(frame)} == {}
    for frame in ("/map", "robot1/base_link", "laser-front.2", "odom"):
        assert frame_problem(frame) is None, frame


def test_choices_are_one_of_their_words() -> None:
    assert reader("m: loop").get_choice("m", ("yoyo", "loop")) == "loop"
    assert reader("{}").get_choice("m", ("yoyo", "loop"), "yoyo") == "yoyo"
    for text in ("m: Loop", "m: 3", "m: [loop]", "m: null"):
        with pytest.raises(ConfigError, match='key "m" must be one of yoyo, loop, got'):
            reader(text).get_choice("m", ("yoyo", "loop"))


def test_rates_are_within_the_rate_range_or_inf() -> None:
    assert reader("r: .inf").get_rate("r") == math.inf and reader("r: 0").get_rate("r") == 0.0
    assert reader("r: 1000000").get_rate("r") == limits.RATE.high and reader("{}").get_rate("r", 10.0) == 10.0
    for text in ("r: -.inf", "r: .nan", "r: -1e-300", "r: 1000000.0000001", f"r: {10**40}", "r: fast", "r: true"):
        with pytest.raises(ConfigError, match='key "r" must be a rate: a finite number >= 0 and <= 1e.06 Hz, or .inf'):
            reader(text).get_rate("r")


def test_integer_lists_are_within_their_range() -> None:
    within = limits.Range(1, 10)
    assert reader("p: [1, 10]").get_ints("p", 2, within=within) == (1, 10)
    assert reader("{}").get_ints("p", 2, (3, 4), within=within) == (3, 4)
    for text in ("p: [0, 1]", "p: [1, 11]", "p: [1.5, 2]", "p: [true, 2]", "p: [1]", "p: 5", f"p: [1, {10**40}]"):
        with pytest.raises(ConfigError, match=r'key "p" must be a list of 2 integers, each >= 1 and <= 10, got'):
            reader(text).get_ints("p", 2, within=within)


def test_a_number_s_error_shows_the_whole_list() -> None:
    with pytest.raises(ConfigError, match=r'key "o" must be a finite number >= -100000 and <= 100000 m, got \[1, .nan, 0\]'):
        reader("o: [1, .nan, 0]").get_pose("o")
