"""Tests of the strict YAML reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim_server.core.errors import ConfigError
from sim_server.core.format.yaml_reader import YamlReader, load_yaml_file, parse_yaml_text
from sim_server.core.geometry import Pose2D

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


@pytest.mark.parametrize("text", ['t: ""', "t: /a//b", "t: 1abc", "t: bad topic!!", "t: a/", "t: [scan]", "t: " + "x" * 300])
def test_a_topic_ros_refuses_is_one_line_naming_the_key(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        reader(text).get_topic("t", "cmd")
    assert str(info.value).startswith(f'{FILE}: key "t" ') and "\n" not in str(info.value)


def test_frames_are_checked_defaults_too() -> None:
    assert reader("f: base_link").get_frame("f") == "base_link" and reader("{}").get_frame("f", "r1_laser") == "r1_laser"
    for text, default in (('f: ""', "x"), ("f: a b", "x"), ("f: " + "f" * 300, "x"), ("{}", "with space")):
        with pytest.raises(ConfigError, match=r'key "f" frame .* is not a frame id'):
            reader(text).get_frame("f", default)
