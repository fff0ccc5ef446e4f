"""The key reference (sim_server.core.key_reference) against the readers: every key they read
loading the bundled, benchmark and test worlds is in it, every key their code names is in it,
every bundled plugin has a section, and every key in it is accepted by a file that gives it."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim_server.core import World
from sim_server.core.errors import SimError
from sim_server.core.format.key_catalog import ANY_NAME, READ_METHODS, Catalog, KeyRecorder, Read
from sim_server.core.format.map_file import load_map_file
from sim_server.core.format.model_file import load_model_file
from sim_server.core.key_reference import PLUGIN_ENTRIES, PLUGIN_MODEL, recording_all
from test.conftest import REPO_ROOT
from test.sim_plugins.plugin_keys import setup_entry_points

#: The folders of shipped and test worlds whose keys must all be in the reference.
WORLD_FOLDERS = ("config/worlds", "bench/worlds", "test/data")
#: The modules whose reads the reference covers, by the scopes their keys are of.
READER_MODULES = {
    "files": ["sim_server/core/format/world_file.py", "sim_server/core/format/model_file.py",
              "sim_server/core/format/map_file.py", "sim_server/core/format/crowd_file.py"],
    "plugins": sorted(str(path.relative_to(REPO_ROOT)) for path in (REPO_ROOT / "sim_plugins").glob("*.py")),
}


def test_every_bundled_plugin_has_an_exemplar_and_a_section(catalog: Catalog) -> None:
    assert set(PLUGIN_ENTRIES) == set(setup_entry_points())
    assert {entry.scope for entry in catalog.entries if entry.scope.startswith("plugin ")} == {
        f"plugin {name}" for name in PLUGIN_ENTRIES
    }


def _world_like_files() -> dict[str, list[Path]]:
    """The YAML files of :data:`WORLD_FOLDERS` by kind (``world``, ``model``, ``map``), told by
    their top-level keys; files that are none of these (or do not parse) are left out."""
    kinds: dict[str, list[Path]] = {"world": [], "model": [], "map": []}
    for folder in WORLD_FOLDERS:
        for path in sorted((REPO_ROOT / folder).rglob("*.yaml")):
            try:
                data = yaml.safe_load(path.read_text())
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            if not isinstance(data, dict):
                continue
            if "bodies" in data:
                kinds["model"].append(path)
            elif data.keys() & {"layers", "models", "properties"}:
                kinds["world"].append(path)
            elif data.keys() & {"image", "data", "resolution"}:
                kinds["map"].append(path)
    return kinds


def test_every_key_read_loading_the_shipped_and_test_worlds_is_in_the_reference(catalog: Catalog) -> None:
    files = _world_like_files()
    assert len(files["world"]) > 20 and files["model"] and files["map"]
    with recording_all() as recorder:
        for path in files["world"]:
            try:
                World.from_file(path, step_size=0.01, seed=1).close()
            except SimError:  # a test world meant to fail: the keys read up to its fault count
                pass
        for path in files["model"]:
            try:
                load_model_file(path)
            except SimError:
                pass
        for path in files["map"]:
            try:
                load_map_file(path, "layer")
            except SimError:
                pass
    ours = {"world", "model", "map"} | {f"plugin {name}" for name in PLUGIN_ENTRIES}
    found = {(read.scope, ".".join(read.path)) for read in recorder.reads if read.scope in ours}
    assert {scope for scope, _ in found} >= {"world", "model", "map", "plugin DiffDrive", "plugin Laser"}
    missing = sorted(found - catalog.keys())
    assert not missing, f"keys read loading the worlds but not in the reference: {missing}"


def _literal_keys(path: Path) -> set[str]:
    """The keys that ``path`` names as string literals in reader calls (``x.get_float("key"``,
    ``x.has("key")``, ``x.ignore("a", "b")``)."""
    keys: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr in READ_METHODS or node.func.attr in ("has", "ignore"):
            arguments = node.args if node.func.attr == "ignore" else node.args[:1]
            keys |= {arg.value for arg in arguments if isinstance(arg, ast.Constant) and isinstance(arg.value, str)}
    return keys


def test_every_key_the_readers_name_in_their_code_is_in_the_reference(catalog: Catalog) -> None:
    leaves = {
        "files": {entry.path[-1] for entry in catalog.entries if not entry.scope.startswith("plugin ")},
        "plugins": {entry.path[-1] for entry in catalog.entries if entry.scope.startswith("plugin ")},
    }
    for family, paths in READER_MODULES.items():
        named = {key: path for path in paths for key in _literal_keys(REPO_ROOT / path)}
        assert len(named) > 10
        missing = sorted(f"{key} ({named[key]})" for key in set(named) - leaves[family])
        assert not missing, f"keys the readers name but the reference lacks: {missing}"


def _given_keys(data: Any, path: tuple[str, ...] = ()) -> set[str]:
    """The dotted paths of every key a file's data gives (``[]`` for a list's entries)."""
    keys: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            keys.add(".".join(path + (str(key),)))
            keys |= _given_keys(value, path + (str(key),))
    elif isinstance(data, list) and path:
        for item in data:
            if isinstance(item, dict):
                keys |= _given_keys(item, path[:-1] + (path[-1] + "[]",))
    return keys


def test_every_file_key_of_the_reference_is_given_by_an_exemplar_that_loads(
    catalog: Catalog, recorded: tuple[KeyRecorder, Path]
) -> None:
    """The exemplars loaded (the fixture), and between them they give every key of the world,
    model and map files (the plugins' are given by the next test)."""
    folder = recorded[1]
    given = {
        "world": _given_keys(yaml.safe_load((folder / "world.yaml").read_text())),
        "model": _given_keys(yaml.safe_load((folder / "full.model.yaml").read_text())),
        "map": _given_keys(yaml.safe_load((folder / "room.yaml").read_text()))
        | _given_keys(yaml.safe_load((folder / "walls.yaml").read_text())),
    }
    for entry in catalog.entries:
        if entry.scope in given and ANY_NAME not in entry.path:
            assert entry.dotted in given[entry.scope], f"{entry.scope}: {entry.dotted} is given by no exemplar"


def _with_defaults(entries: list[Any], config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with every key of ``entries`` that has one default given at it."""
    for entry in entries:
        if len(entry.defaults) != 1 or entry.required:
            continue
        reads = [read for read in entry.reads if read.method not in ("get_map", "ignore")]
        if not reads:
            continue
        target = config
        for element in entry.path[:-1]:
            target = target.setdefault(element, {})
        target.setdefault(entry.path[-1], _value(reads[0]))
    return config


def _value(read: Read) -> Any:
    """The default of ``read`` as a file gives it."""
    value = read.default
    if hasattr(value, "theta"):
        return [value.x, value.y, value.theta]
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("plugin_type", sorted(PLUGIN_ENTRIES))
def test_every_plugin_key_of_the_reference_is_accepted_when_given(
    plugin_type: str, catalog: Catalog, tmp_path: Path
) -> None:
    """Each plugin loads with every key of its section given its default at once."""
    entries = [entry for entry in catalog.entries if entry.scope == f"plugin {plugin_type}"]
    config = _with_defaults(entries, dict(PLUGIN_ENTRIES[plugin_type]))
    assert len(config) > len(PLUGIN_ENTRIES[plugin_type])
    (tmp_path / "walls.txt").write_text("0 0 10 0\n")
    (tmp_path / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    (tmp_path / "world.yaml").write_text("properties: {}\nlayers: [{name: walls, map: walls.yaml}]\nmodels: []\n")
    model = dict(PLUGIN_MODEL, plugins=[{"name": "probe", "type": plugin_type, **config}])
    (tmp_path / "probe.model.yaml").write_text(yaml.safe_dump(model))
    world = World.from_file(tmp_path / "world.yaml", step_size=0.01, seed=1)
    try:
        world.spawn_model(tmp_path / "probe.model.yaml", "probe", "ns")
        world.step()
    finally:
        world.close()


def test_recording_all_restores_the_plugin_manager() -> None:
    from sim_server.core.format.yaml_reader import YamlReader
    from sim_server.core.plugins import manager

    instantiate = manager.PluginManager._instantiate
    with recording_all():
        assert manager.YamlReader is not YamlReader and manager.PluginManager._instantiate is not instantiate
    assert manager.YamlReader is YamlReader and manager.PluginManager._instantiate is instantiate
