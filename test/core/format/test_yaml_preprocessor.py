"""The YAML preprocessor against the reference's yaml_preprocessor cases, and its errors."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim_server.core import ConfigError, World
from sim_server.core.format.yaml_preprocessor import YamlPreprocessor
from test.conftest import FLATLAND_DATA, LOAD_WORLD_TESTS

CASES = FLATLAND_DATA / "yaml_preprocessor"
#: The absolute path named by include.parent.yaml.
ABSOLUTE_INCLUDE = Path("/tmp/9aaafd40-2083-49d9-a300-9d01f94d6671.yaml")
ENVIRONMENT = {"VALIDSTRING": "Bar", "VALIDNUMBER": "123.4"}
PARAMETERS = {"/string": "Foo", "/int": 7, "/float": 10.5}


def lookup(name: str) -> tuple[bool, Any]:
    return (name in PARAMETERS, PARAMETERS.get(name))


def expected(name: str) -> Any:
    return yaml.safe_load((CASES / name).read_text())


def test_eval_strings_match_reference_output() -> None:
    preprocessor = YamlPreprocessor(lookup, ENVIRONMENT)
    assert preprocessor.load_file(CASES / "eval.strings.yaml", "test file") == expected("eval.strings.out.yaml")


def test_include_parent_matches_reference_output() -> None:
    ABSOLUTE_INCLUDE.write_text("contents of absolute file\n")
    try:
        result = YamlPreprocessor().load_file(CASES / "include.parent.yaml", "test file")
    finally:
        ABSOLUTE_INCLUDE.unlink()
    assert result == expected("include.parent.out.yaml")
    assert result["g"] == []


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_lua_error_names_file_key_and_expression(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "outer:\n  inner: $eval 1 +\n")
    with pytest.raises(ConfigError) as info:
        YamlPreprocessor().load_file(path, "test file")
    message = str(info.value)
    assert message.startswith(f"{path}: outer.inner: ") and '$eval "1 +" failed' in message


def test_runtime_lua_error_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", "x: $eval error('no way')\n")
    with pytest.raises(ConfigError, match="no way"):
        YamlPreprocessor().load_file(path, "test file")


def test_include_cycle_and_missing_file(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", "child: $include b.yaml\n")
    write(tmp_path, "b.yaml", "back: $include a.yaml\n")
    with pytest.raises(ConfigError, match="makes a cycle"):
        YamlPreprocessor().load_file(a, "test file")
    missing = write(tmp_path, "m.yaml", "items:\n  - $[include] nowhere.yaml\n")
    with pytest.raises(ConfigError, match=r'm\.yaml: items\[0\]: included file ".*nowhere\.yaml" does not exist'):
        YamlPreprocessor().load_file(missing, "test file")


def test_paths_that_cannot_be_followed_are_errors_naming_them(tmp_path: Path) -> None:
    """A link loop, an unknown user's home, an integer Python will not convert: one-line
    ConfigErrors naming the file, never another exception."""
    (tmp_path / "loop1.yaml").symlink_to(tmp_path / "loop2.yaml")
    (tmp_path / "loop2.yaml").symlink_to(tmp_path / "loop1.yaml")
    for directive in ("child: $include loop1.yaml\n", "items:\n  - $[include] loop1.yaml\n"):
        looped = write(tmp_path, "looped.yaml", directive)
        with pytest.raises(ConfigError, match=r"looped\.yaml: .*loop1\.yaml"):
            YamlPreprocessor().load_file(looped, "test file")
    with pytest.raises(ConfigError, match=r"loop1\.yaml"):
        YamlPreprocessor().load_text("a: 1\n", tmp_path / "loop1.yaml", "model")
    homeless = write(tmp_path, "homeless.yaml", "child: $include ~no_such_user_here/a.yaml\n")
    with pytest.raises(ConfigError, match=r'included file ".*~no_such_user_here/a\.yaml" does not exist'):
        YamlPreprocessor().load_file(homeless, "test file")
    for text in ("a: 1" + "0" * 5000 + "\n", "--- [1" + "0" * 5000 + "]\n"):
        huge = write(tmp_path, "huge.yaml", text)
        with pytest.raises(ConfigError, match=r"huge\.yaml: invalid YAML: .*4300 digits"):
            YamlPreprocessor().load_file(huge, "test file")
    spliced = write(tmp_path, "spliced.yaml", "items:\n  - $[include] huge.yaml\n")
    with pytest.raises(ConfigError, match=r"4300 digits"):
        YamlPreprocessor().load_file(spliced, "test file")


def test_an_unknown_users_home_is_a_path_that_does_not_exist() -> None:
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml")
    try:
        path = world.model_path("~no_such_user_here/x.model.yaml")
        assert path == LOAD_WORLD_TESTS / "simple_test_A" / "~no_such_user_here" / "x.model.yaml"
        with pytest.raises(ConfigError, match="does not exist"):
            world.spawn_model("~no_such_user_here/x.model.yaml", "x")
    finally:
        world.close()


def test_eval_time_is_bounded_per_eval_and_per_load(tmp_path: Path, monkeypatch) -> None:
    """Time in Lua's C functions (upper-casing megabytes) escapes the instruction count; the
    processor-time limits bound it, per $eval and for all of a load's together."""
    from sim_server.core import limits

    monkeypatch.setattr(limits, "LUA_SECONDS", 0.3)
    monkeypatch.setattr(limits, "EVAL_SECONDS_PER_LOAD", 0.5)
    slow = "local s = string.rep('x', 1e7) local n = 0 for i = 1, 1000000 do n = n + s:upper():len() end return n"
    one = write(tmp_path, "one.yaml", f"a: $eval {slow}\n")
    with pytest.raises(ConfigError, match=r"one\.yaml: a: \$eval .* took more than the limit of 0\.3 s of processor time"):
        YamlPreprocessor().load_file(one, "test file")
    # Each below the per-eval limit, together over the load's. The limits are set from the processor
    # time one such $eval takes here (a fast machine ran 40 of them within a fixed 0.5 s).
    busy = "local s = string.rep('x', 1e6) local n = 0 for i = 1, 30 do n = n + s:upper():len() end return n"
    started = time.process_time()
    YamlPreprocessor().load_file(write(tmp_path, "single.yaml", f"k: $eval {busy}\n"), "test file")
    single = max(time.process_time() - started, 0.001)
    monkeypatch.setattr(limits, "LUA_SECONDS", 10 * single)
    monkeypatch.setattr(limits, "EVAL_SECONDS_PER_LOAD", 20 * single)
    many = write(tmp_path, "many.yaml", "".join(f"k{i}: $eval {busy}\n" for i in range(60)))
    budget = re.escape(f"{limits.EVAL_SECONDS_PER_LOAD:g}")
    with pytest.raises(ConfigError, match=rf"many\.yaml: k\d+: \$eval .*(rest of this load's {budget} s|together)") as caught:
        YamlPreprocessor().load_file(many, "test file")
    assert "k0:" not in str(caught.value)  # the first ones were within the limits
    # A fresh load has its whole budget again, and quick evals are untouched.
    quick = write(tmp_path, "quick.yaml", "".join(f"k{i}: $eval {i} + 1\n" for i in range(200)))
    assert YamlPreprocessor().load_file(quick, "test file")["k199"] == 200


def test_eval_results_read_as_yaml_scalars(tmp_path: Path) -> None:
    path = write(tmp_path, "s.yaml", 'a: $eval "12"\nb: $eval "true"\nc: $eval nil\nd: \'$eval "x: y"\'\ne: $eval 2.5\n')
    assert YamlPreprocessor().load_file(path, "t") == {"a": 12, "b": True, "c": "", "d": "x: y", "e": 2.5}


def test_enabled_removes_bodies_joints_and_plugins(tmp_path: Path) -> None:
    model = write(
        tmp_path,
        "robot.model.yaml",
        "bodies:\n"
        "  - {name: base, footprints: [{type: circle, radius: 0.3, density: 1}]}\n"
        "  - name: extra\n"
        "    enabled: $eval env('WITH_EXTRA', false)\n"
        "    footprints: [{type: circle, radius: 0.1, density: 1}]\n"
        "joints:\n"
        "  - {name: j, type: weld, enabled: false, bodies: [{name: base, anchor: [0, 0]}, {name: extra, anchor: [0, 0]}]}\n"
        "plugins:\n"
        "  - {name: p, type: Anything, enabled: false}\n",
    )
    world_file = write(tmp_path, "world.yaml", f"properties: {{}}\nmodels:\n  - {{name: r, model: {model.name}}}\n")
    world = World.from_file(world_file)
    assert list(world.models["r"].bodies) == ["base"] and not world.models["r"].joints
    assert world.models["r"].spec.plugins == ()
    world.close()
    with_extra = World.from_file(world_file, preprocessor=YamlPreprocessor(environ={"WITH_EXTRA": "true"}))
    assert list(with_extra.models["r"].bodies) == ["base", "extra"]
    with_extra.close()


def test_enabled_must_be_boolean(tmp_path: Path) -> None:
    path = write(tmp_path, "m.yaml", "bodies:\n  - {name: a, enabled: maybe}\n")
    with pytest.raises(ConfigError, match=r'bodies\[0\]: key "enabled" must be true or false'):
        YamlPreprocessor().load_file(path, "model file")


def test_world_files_are_preprocessed_with_parameters(tmp_path: Path) -> None:
    world_file = write(
        tmp_path,
        "world.yaml",
        "properties:\n  velocity_iterations: $eval param('/iterations', 3)\n"
        f"layers: $include {LOAD_WORLD_TESTS / 'simple_test_A' / 'world.yaml'}\n",
    )
    with pytest.raises(ConfigError, match=r'world\.yaml: key "layers" must be a list'):
        World.from_file(world_file)
    world_file.write_text("properties:\n  velocity_iterations: $eval param('/iterations', 3)\n")
    assert World.from_file(world_file).spec.velocity_iterations == 3
    params = YamlPreprocessor(lambda name: (name == "/iterations", 8))
    assert World.from_file(world_file, preprocessor=params).spec.velocity_iterations == 8
