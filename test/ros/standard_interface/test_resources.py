"""The standard interface's world and model lookups: get_spawnables, get_current_world and
get_available_worlds over a made-up tree of folders, with its limits and bad sources."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from simulation_interfaces.msg import Bounds, Result, TagsFilter
from simulation_interfaces.srv import GetAvailableWorlds, GetCurrentWorld, GetSpawnables

from sim_server.ros.standard_interface import resources
from sim_server.ros.standard_interface.resources import MAX_SOURCES, Search, source_folder
from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import DISC, WORLD, pose, spawn, spawnable_uri

SCOUT = DISC + "plugins:\n  - {type: DiffDrive, name: drive, body: base}\n"
#: A body turned a quarter to the left, 1 m ahead of the model's origin, with a 0.4 x 0.2 m plate.
OFFSET = (
    "bodies:\n  - name: plate\n    pose: [1.0, 0.0, 1.5707963267948966]\n    footprints:\n"
    "      - {type: polygon, points: [[-0.2, -0.1], [0.2, -0.1], [0.2, 0.1], [-0.2, 0.1]], density: 1}\n"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """alpha/ (the loaded world, its models, a subfolder, a broken model, a hidden folder, a
    folder too deep, a link back to itself) and library/ (a model and a second world)."""
    alpha = tmp_path / "alpha"
    shutil.copytree(WORLD.parent, alpha)
    (alpha / "robots").mkdir()
    (alpha / "robots" / "scout.model.yaml").write_text(SCOUT)
    (alpha / "robots" / "offset.model.yml").write_text(OFFSET)
    (alpha / "broken.model.yaml").write_text("bodies: [")
    (alpha / "notes.txt").write_text(DISC)
    (alpha / ".hidden").mkdir()
    (alpha / ".hidden" / "secret.model.yaml").write_text(DISC)
    deep = alpha / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    (deep / "deep.model.yaml").write_text(DISC)
    (alpha / "a" / "b" / "c" / "d" / "found.model.yaml").write_text(DISC)
    os.symlink(alpha, alpha / "loop")
    library = tmp_path / "library"
    library.mkdir()
    (library / "crate.model.yaml").write_text(DISC)
    shutil.copytree(WORLD.parent, library / "beta", ignore=shutil.ignore_patterns("*.model.yaml"))
    beta = library / "beta" / "world.yaml"
    beta.write_text(beta.read_text().replace("properties:", "tags: [outdoor, small]\ndescription: the second\nproperties:", 1))
    return tmp_path


def server(ros_context, tree: Path, resource_paths: str) -> Harness:
    return Harness(ros_context, tree / "alpha" / "world.yaml", start_paused=True, resource_paths=resource_paths)


def spawnables(harness: Harness, sources=()) -> GetSpawnables.Response:
    return harness.call(GetSpawnables, "/sim_server/get_spawnables", GetSpawnables.Request(sources=list(sources)))


def test_spawnables_are_the_model_files_spawn_entity_takes(ros_context, tree) -> None:
    h = server(ros_context, tree, str(tree / "library"))
    try:
        got = spawnables(h)
        assert got.result.result == Result.RESULT_OK and got.result.error_message == ""
        uris = [spawnable_uri(s) for s in got.spawnables]
        assert uris == [  # a folder's files by name, then its subfolders by name
            "chair.model.yaml", "person.model.yaml", "turtlebot.model.yaml", "a/b/c/d/found.model.yaml",
            "robots/offset.model.yml", "robots/scout.model.yaml", str(tree / "library" / "crate.model.yaml"),
        ]  # not: the broken one, notes.txt, the hidden folder, deeper than 4 levels, through the link
        by_uri = {spawnable_uri(s): s for s in got.spawnables}
        scout = by_uri["robots/scout.model.yaml"]
        assert "1 body (base)" in scout.description and "DiffDrive (drive)" in scout.description
        assert scout.spawn_bounds.type == Bounds.TYPE_BOX
        upper, lower = scout.spawn_bounds.points
        assert (upper.x, upper.y, lower.x, lower.y) == pytest.approx((0.2, 0.2, -0.2, -0.2))
        upper, lower = by_uri["robots/offset.model.yml"].spawn_bounds.points  # turned: 0.2 wide, 0.4 long
        assert (upper.x, upper.y, lower.x, lower.y) == pytest.approx((1.1, 0.2, 0.9, -0.2))
        for entry in got.spawnables:  # each one spawns as it is given
            done = spawn(h, name="", allow_renaming=True, uri=spawnable_uri(entry), initial_pose=pose(50.0, 50.0))
            assert done.result.result == Result.RESULT_OK, (spawnable_uri(entry), done.result)
            bounds = h.server.world.models[done.entity_name]
            h.server.world.delete_model(bounds.name)
    finally:
        h.close()


def test_sources_that_cannot_be_searched_are_named_and_do_not_fail_the_call(ros_context, tree) -> None:
    extra = tree / "extra"
    extra.mkdir()
    (extra / "ball.model.yaml").write_text(DISC)
    h = server(ros_context, tree, "no_such_folder")
    try:
        got = spawnables(h, [extra.as_uri(), "http://example.com/models", "missing", "", "x" * 5000, str(WORLD)])
        assert got.result.result == Result.RESULT_OK
        message = got.result.error_message
        assert "resource_paths folder 'no_such_folder'" in message and "is not a folder" in message
        for fact in ("scheme 'http' is not supported", "'missing'", "'' (empty)", "more than the limit", "world.yaml"):
            assert fact in message, (fact, message)
        assert str(extra / "ball.model.yaml") in [spawnable_uri(s) for s in got.spawnables]
        too_many = spawnables(h, ["x"] * (MAX_SOURCES + 1))
        assert too_many.result.result == Result.RESULT_OPERATION_FAILED and str(MAX_SOURCES + 1) in too_many.result.error_message
        assert list(too_many.spawnables) == []
    finally:
        h.close()


def test_search_limits_stop_it_with_a_note(tree, monkeypatch) -> None:
    def read(path: Path):
        return path.name

    monkeypatch.setattr(resources, "MAX_FILES_READ", 3)
    search = Search(read)
    search.folder(tree / "alpha")
    assert len(search.found) == 3 and search.notes == ["the search stopped after reading 3 files"]
    monkeypatch.setattr(resources, "MAX_SEARCH_ENTRIES", 5)
    search = Search(read)
    search.folder(tree / "alpha")
    assert search.notes == ["the search stopped after 5 folder entries"]
    monkeypatch.setattr(resources, "SEARCH_TIME_LIMIT", -1.0)
    search = Search(read)
    search.folder(tree / "alpha")
    assert search.found == [] and search.notes == ["the search stopped after -1 s"]


def test_a_file_reached_twice_is_read_once(tree) -> None:
    reads = []
    search = Search(lambda path: reads.append(path) or path.name)
    search.folder(tree / "library")
    search.folder(tree / "library" / "beta")
    assert len(reads) == len(set(reads)) == len(search.found)


def test_source_folder(tree) -> None:
    base = tree / "alpha"
    assert source_folder("robots", base) == (base / "robots", "")
    assert source_folder((base / "robots").as_uri(), base) == (base / "robots", "")
    assert source_folder("ftp://x/y", base)[0] is None
    assert source_folder("a\0b", base) == (None, "contains a NUL character")
    assert source_folder("world.yaml", base)[1].endswith("is not a folder")
    assert source_folder("x" * 100_000, base)[0] is None  # no OS error escapes


def test_current_and_available_worlds(ros_context, tree) -> None:
    h = server(ros_context, tree, str(tree / "library"))
    try:
        current = h.call(GetCurrentWorld, "/sim_server/get_current_world", GetCurrentWorld.Request())
        assert current.result.result == Result.RESULT_OK
        assert current.world.name == "alpha" and current.world.world_resource.uri == str(tree / "alpha" / "world.yaml")
        assert "5 layers" not in current.world.description and "4 layers, 4 models" in current.world.description

        def available(**fields) -> GetAvailableWorlds.Response:
            return h.call(GetAvailableWorlds, "/sim_server/get_available_worlds", GetAvailableWorlds.Request(**fields))

        found = available()
        assert found.result.result == Result.RESULT_OK
        assert [(w.name, w.world_resource.uri) for w in found.worlds] == [
            ("alpha", str(tree / "alpha" / "world.yaml")), ("beta", str(tree / "library" / "beta" / "world.yaml")),
        ]
        failing = available(additional_sources=["nowhere"])
        assert failing.result.result == Result.RESULT_OPERATION_FAILED and "'nowhere'" in failing.result.error_message
        assert list(failing.worlds) == []
        going_on = available(additional_sources=["nowhere"], continue_on_error=True, offline_only=True)
        assert going_on.result.result == Result.RESULT_OK and len(going_on.worlds) == 2
        assert "'nowhere'" in going_on.result.error_message
        tagged = available(filter=TagsFilter(tags=["small", "indoor"]))
        assert tagged.result.result == Result.RESULT_OK and [w.name for w in tagged.worlds] == ["beta"]
        assert list(tagged.worlds[0].tags) == ["outdoor", "small"] and tagged.worlds[0].description == "the second"
        both = available(filter=TagsFilter(tags=["small", "indoor"], filter_mode=TagsFilter.FILTER_MODE_ALL))
        assert both.result.result == Result.RESULT_OK and list(both.worlds) == []
        bad_mode = available(filter=TagsFilter(tags=["small"], filter_mode=2))
        assert bad_mode.result.result == Result.RESULT_OPERATION_FAILED and "filter.filter_mode 2" in bad_mode.result.error_message
    finally:
        h.close()


def test_a_failing_default_source_gives_its_code(ros_context, tree) -> None:
    h = server(ros_context, tree, f"{tree / 'library'}{os.pathsep}gone")
    try:
        def available(**fields) -> GetAvailableWorlds.Response:
            return h.call(GetAvailableWorlds, "/sim_server/get_available_worlds", GetAvailableWorlds.Request(**fields))

        failing = available()
        assert failing.result.result == GetAvailableWorlds.Response.DEFAULT_SOURCES_FAILED
        assert "resource_paths folder 'gone'" in failing.result.error_message
        going_on = available(continue_on_error=True)
        assert going_on.result.result == Result.RESULT_OK and [w.name for w in going_on.worlds] == ["alpha", "beta"]
    finally:
        h.close()
