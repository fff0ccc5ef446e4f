"""Level streaming: which entities exist as performers move, validation, tiles, no leaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim_server.core import ConfigError, EntityError, Pose2D, World
from sim_server.core.sensing.laser_scanner import scene_of
from test.conftest import DATA_DIR, plugin

LEVELS = DATA_DIR / "levels"
GLOBAL_MODELS = {"R1", "R2", "M4"}


@pytest.fixture
def world() -> World:
    w = World.from_file(LEVELS / "world.yaml", step_size=0.01, enable_levels=True)
    yield w
    w.close()


def at(world: World, model: str, x: float, y: float = 0.0) -> None:
    """Put ``model`` at (x, y) and take one step (the level check runs before physics)."""
    world.move_model(model, Pose2D(x, y, 0.0))
    world.step()


def present(world: World) -> set[str]:
    return set(world.models)


def walls2_loaded(world: World) -> bool:
    return world.layer("walls2").pieces[0].loaded


def test_initial_levels_follow_the_performers_start(world: World) -> None:
    assert world.levels.loaded_levels == []
    assert present(world) == GLOBAL_MODELS
    assert not walls2_loaded(world) and world.layer("ground").pieces[0].loaded


def test_walking_through_levels(world: World) -> None:
    at(world, "R1", -8.0)  # box [-9, -7] touches L1's buffer zone [-7, 7]: touching counts
    assert world.levels.loaded_levels == ["L1"] and present(world) == GLOBAL_MODELS | {"M1", "M2"}
    at(world, "R1", -8.01)  # a hair further: outside again
    assert world.levels.loaded_levels == [] and present(world) == GLOBAL_MODELS
    at(world, "R1", 5.0)
    shared = world.models["M2"]
    at(world, "R1", 10.0)  # box [9, 11]: between the zones, both unloaded
    assert world.levels.loaded_levels == [] and present(world) == GLOBAL_MODELS
    at(world, "R1", 12.0)  # box [11, 13] touches L2 [13, 27]
    assert world.levels.loaded_levels == ["L2"] and present(world) == GLOBAL_MODELS | {"M2", "M3"}
    assert walls2_loaded(world)
    assert shared is not world.models["M2"]  # re-created from the file
    at(world, "R1", 40.0)
    assert present(world) == GLOBAL_MODELS and not walls2_loaded(world)


def test_shared_entities_survive_moving_between_levels(world: World) -> None:
    world.levels.resize_performer("R1", 8.0, 2.0)  # box [x - 4, x + 4]
    at(world, "R1", 0.0)
    assert world.levels.loaded_levels == ["L1"]
    shared = world.models["M2"]
    at(world, "R1", 10.0)  # box [6, 14]: both levels
    assert world.levels.loaded_levels == ["L1", "L2"] and world.models["M2"] is shared
    at(world, "R1", 20.0)  # L1 leaves, M2 stays with L2
    assert world.levels.loaded_levels == ["L2"] and world.models["M2"] is shared
    assert "M1" not in world.models


def test_two_performers_keep_a_level_alive(world: World) -> None:
    world.levels.add_performer("R2", 2.0, 2.0)
    at(world, "R1", 0.0)
    at(world, "R2", 2.0, 2.0)
    assert world.levels.loaded_levels == ["L1"]
    at(world, "R1", -30.0)
    assert world.levels.loaded_levels == ["L1"] and "M1" in world.models
    at(world, "R2", -30.0, 10.0)
    assert world.levels.loaded_levels == [] and "M1" not in world.models


def test_runtime_performer_errors(world: World) -> None:
    with pytest.raises(EntityError, match='model with name "ghost" does not exist'):
        world.levels.add_performer("ghost")
    with pytest.raises(EntityError, match='model "R1" is already a performer'):
        world.levels.add_performer("R1")
    performer = world.levels.add_performer("R2")
    assert (performer.size_x, performer.size_y) == (2.0, 2.0)


def test_reloaded_models_get_fresh_plugins(world: World) -> None:
    at(world, "R1", 20.0)
    swing = plugin(world, "M3", "swing")
    world.step(50)
    assert swing.progress > 0.2
    at(world, "R1", -30.0)
    assert "M3" not in world.models
    at(world, "R1", 20.0)
    fresh = plugin(world, "M3", "swing")
    assert fresh is not swing and fresh.progress <= 0.01


def test_laser_scene_sees_only_loaded_walls(world: World) -> None:
    scene = scene_of(world)
    assert len(scene.static.segments) == 4  # the ground
    at(world, "R1", 20.0)
    assert len(scene.static.segments) == 6
    at(world, "R1", -30.0)
    assert len(scene.static.segments) == 4


def test_levels_disabled_loads_everything() -> None:
    world = World.from_file(LEVELS / "world.yaml", enable_levels=False)
    assert present(world) == GLOBAL_MODELS | {"M1", "M2", "M3"} and walls2_loaded(world)
    world.move_model("R1", Pose2D(-30.0, 0.0, 0.0))
    world.step(3)
    assert present(world) == GLOBAL_MODELS | {"M1", "M2", "M3"}
    world.close()


def test_reset_restores_the_level_set(world: World) -> None:
    world.levels.add_performer("R2")
    at(world, "R1", 20.0)
    assert world.levels.loaded_levels == ["L2"]
    world.reset()
    assert world.levels.loaded_levels == [] and present(world) == GLOBAL_MODELS
    assert "R2" not in world.levels.performers and not walls2_loaded(world)


def test_no_leaks_over_1000_load_unload_cycles(world: World) -> None:
    at(world, "R1", -30.0)
    bodies, joints = world.physics.bodyCount, world.physics.jointCount
    listeners = len(world._listeners)
    for _ in range(1000):
        at(world, "R1", 20.0)
        at(world, "R1", -30.0)
    assert (world.physics.bodyCount, world.physics.jointCount) == (bodies, joints)
    assert len(world._listeners) == listeners and len(world.plugins._by_model) == len(world.models)
    assert len(scene_of(world)._models) <= len(world.models)


def write_world(tmp_path: Path, levels: str, performers: str = "") -> Path:
    for name in ("robot.model.yaml", "block.model.yaml"):
        (tmp_path / name).write_text((LEVELS / name).read_text())
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: R1, model: robot.model.yaml}\n  - {name: M1, model: block.model.yaml}\n"
        + levels + performers
    )
    return tmp_path / "world.yaml"


@pytest.mark.parametrize(
    ("levels", "performers", "facts"),
    [
        ("levels:\n  - {name: L, pose: [0, 0], size: [1, 1], refs: [nope]}\n", "", ['levels[0] ("L")', 'key "refs"', '"nope"']),
        ("levels:\n  - {name: L, pose: [0, 0], size: [-1, 1]}\n", "", ['levels[0] ("L")', 'key "size"']),
        ("levels:\n  - {name: L, pose: [0, 0], size: [1, .inf]}\n", "", ['levels[0] ("L")', 'key "size"', "finite"]),
        ("levels:\n  - {name: L, pose: [0, 0], size: [1, 1], buffer: -2}\n", "", ['key "buffer"', ">= 0 and <= 10000 m, got -2"]),
        ("levels:\n  - {name: L, pose: [0, 0], size: [1, 1]}\n  - {name: L, pose: [0, 0], size: [1, 1]}\n", "",
         ['levels[1] ("L")', 'a level named "L" already exists']),
        ("", "performers:\n  - {name: P, ref: ghost, size: [1, 1]}\n", ['performers[0] ("P")', 'model "ghost"']),
        ("", "performers:\n  - {name: P, ref: R1, size: [1, 1]}\n  - {name: Q, ref: R1, size: [1, 1]}\n",
         ['performers[1] ("Q")', 'model "R1" is already performer "P"']),
        ("", "performers:\n  - {name: P, ref: R1, size: [0, 1]}\n", ['performers[0] ("P")', 'key "size"']),
        ("levels:\n  - {name: L, pose: [0, 0], size: [1, 1], color: red}\n", "", ['unrecognized key(s) "color"']),
    ],
)
def test_invalid_levels_and_performers(tmp_path: Path, levels: str, performers: str, facts: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        World.from_file(write_world(tmp_path, levels, performers))  # validated even when disabled
    for fact in facts:
        assert fact in str(info.value), f"{fact!r} not in {info.value}"


def test_streamed_layer_tiles_follow_the_performer(tmp_path: Path) -> None:
    (tmp_path / "robot.model.yaml").write_text((LEVELS / "robot.model.yaml").read_text())
    # A 200 m corridor along x: walls at y = +-2, cut into 20 m tiles.
    (tmp_path / "corridor.dat").write_text("0 2 200 2\n0 -2 200 -2\n")
    (tmp_path / "corridor.yaml").write_text("type: line_segments\ndata: corridor.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "world.yaml").write_text(
        "properties: {}\n"
        "layers:\n  - {name: corridor, map: corridor.yaml, streaming: {tile_size: 20, buffer: 5}}\n"
        "models:\n  - {name: R1, model: robot.model.yaml, pose: [30, 0, 0]}\n"
        "performers:\n  - {name: P, ref: R1, size: [1, 1]}\n"
    )
    world = World.from_file(tmp_path / "world.yaml", enable_levels=True)
    corridor = world.layer("corridor")
    assert len(corridor.pieces) == 20 and sum(len(p.edges) for p in corridor.pieces) == 20  # 2 rows of 10 tiles
    assert world.levels.loaded_levels == ["corridor[1,-1]", "corridor[1,0]"]
    assert len(scene_of(world).static.segments) == 2
    at(world, "R1", 38.0)  # within 5 m of the next tile
    assert world.levels.loaded_levels == ["corridor[1,-1]", "corridor[1,0]", "corridor[2,-1]", "corridor[2,0]"]
    at(world, "R1", 150.0)
    assert world.levels.loaded_levels == ["corridor[7,-1]", "corridor[7,0]"]
    world.close()
    whole = World.from_file(tmp_path / "world.yaml", enable_levels=False)
    assert all(piece.loaded for piece in whole.layer("corridor").pieces)
    whole.close()


def test_models_levels_bring_are_the_world_files(world: World) -> None:
    at(world, "R1", 5.0)
    assert {"M1", "M2"} <= present(world)
    world.delete_spawned_models()
    assert {"M1", "M2"} <= present(world) and GLOBAL_MODELS <= present(world)
