"""Tests of the in-process world API: stepping, spawning, moving and deleting models."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sim_server.core import ConfigError, EntityError, Pose2D, World
from sim_server.core.errors import RequestError
from test.conftest import LOAD_WORLD_TESTS

SIMPLE = LOAD_WORLD_TESTS / "simple_test_A"


@pytest.fixture
def world() -> World:
    w = World.from_file(SIMPLE / "world.yaml", step_size=0.01)
    yield w
    w.close()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def on_model_added(self, model) -> None:
        self.events.append(("added", model.name))

    def on_model_removed(self, model) -> None:
        self.events.append(("removed", model.name))


def test_n_steps_advance_exactly_n_step_sizes(world: World) -> None:
    world.step(1000)
    assert world.time.iterations == 1000
    assert world.time.time_ns == 1000 * 10_000_000
    assert world.time.sim_time == 10.0


def test_hooks_run_around_the_physics_step(world: World) -> None:
    calls: list[tuple[str, int]] = []
    world.before_step_hooks.append(lambda t: calls.append(("before", t.iterations)))
    world.after_step_hooks.append(lambda t: calls.append(("after", t.iterations)))
    world.step(2)
    assert calls == [("before", 0), ("after", 1), ("before", 1), ("after", 2)]


def test_spawn_like_reference_service_test(world: World) -> None:
    """The reference spawns `person` at (101.1, 102.1, 0.23) in namespace robot123."""
    recorder = Recorder()
    world.add_listener(recorder)
    model = world.spawn_model("person.model.yaml", "spawned", "robot123", Pose2D(101.1, 102.1, 0.23))
    assert model.namespace == "robot123"
    pose = model.pose
    assert (pose.x, pose.y, pose.theta) == pytest.approx((101.1, 102.1, 0.23), abs=1e-5)
    assert recorder.events == [("added", "spawned")]


def test_spawn_resolves_relative_paths_against_world_file(world: World, tmp_path: Path) -> None:
    model = world.spawn_model(str(SIMPLE / "chair.model.yaml"), "abs_chair")
    assert model.spec.path == SIMPLE / "chair.model.yaml"
    rel = world.spawn_model("chair.model.yaml", "rel_chair")
    assert rel.spec.path == SIMPLE / "chair.model.yaml"


def test_spawn_missing_file_names_the_path(world: World) -> None:
    bodies_before = world.physics.bodyCount
    with pytest.raises(ConfigError, match=r'model file ".*/does_not_exist\.yaml" does not exist'):
        world.spawn_model("does_not_exist.yaml", "ghost")
    assert "ghost" not in world.models and world.physics.bodyCount == bodies_before


def test_missing_relative_paths_say_what_they_resolve_against(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match="a relative path resolves against the world file's folder"):
        world.spawn_model("nested/nope.model.yaml", "x")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=f"relative to the working directory {tmp_path}"):
        World.from_file("config/worlds/nope/world.yaml")


def test_spawn_duplicate_name_fails(world: World) -> None:
    with pytest.raises(EntityError, match='model with name "turtlebot1" already exists'):
        world.spawn_model("person.model.yaml", "turtlebot1")


def test_failed_spawn_leaves_nothing_behind(world: World, tmp_path: Path) -> None:
    """A model whose second body names an unknown layer creates no body at all."""
    model_file = tmp_path / "bad.model.yaml"
    model_file.write_text(
        "bodies:\n"
        "  - name: a\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
        "  - name: b\n    footprints: [{type: circle, radius: 0.5, density: 1, layers: [nowhere]}]\n"
    )
    bodies_before = world.physics.bodyCount
    with pytest.raises(ConfigError, match=r'bodies\[1\] \("b"\)\.footprints\[0\]: key "layers" names \{nowhere\}'):
        world.spawn_model(str(model_file), "bad")
    assert world.physics.bodyCount == bodies_before and "bad" not in world.models


def test_move_puts_first_body_at_pose_and_carries_the_rest(world: World) -> None:
    """The reference moves to (5.5, 9.9, 0.77)."""
    model = world.models["turtlebot1"]
    relative = model.bodies["base"].pose.inverse().compose(model.bodies["left_wheel"].pose)
    world.move_model("turtlebot1", Pose2D(5.5, 9.9, 0.77))
    base = model.bodies["base"].pose
    assert (base.x, base.y, base.theta) == pytest.approx((5.5, 9.9, 0.77), abs=1e-5)
    wheel = model.bodies["left_wheel"].pose
    expected = base.compose(relative)
    assert (wheel.x, wheel.y, wheel.theta) == pytest.approx((expected.x, expected.y, expected.theta), abs=1e-4)
    world.step()
    assert math.isfinite(model.pose.x)


def test_move_and_delete_unknown_model(world: World) -> None:
    with pytest.raises(EntityError, match='model with name "nobody" does not exist'):
        world.move_model("nobody", Pose2D(1, 2, 3))
    with pytest.raises(EntityError, match='model with name "nobody" does not exist'):
        world.delete_model("nobody")


def test_non_finite_poses_are_rejected(world: World) -> None:
    with pytest.raises(RequestError, match="pose .* must have x and y within .* all finite"):
        world.move_model("turtlebot1", Pose2D(math.nan, 0.0, 0.0))
    with pytest.raises(RequestError, match="pose .* must have x and y within .* all finite"):
        world.spawn_model("person.model.yaml", "p", pose=Pose2D(0.0, math.inf, 0.0))


def test_delete_removes_bodies_and_joints(world: World) -> None:
    recorder = Recorder()
    world.add_listener(recorder)
    bodies_before, joints_before = world.physics.bodyCount, world.physics.jointCount
    world.delete_model("turtlebot1")
    assert "turtlebot1" not in world.models
    assert world.physics.bodyCount == bodies_before - 5
    assert world.physics.jointCount == joints_before - 4
    assert recorder.events == [("removed", "turtlebot1")]
    world.step(5)


def test_spawn_delete_cycles_do_not_leak(world: World) -> None:
    bodies_before = world.physics.bodyCount
    for index in range(200):
        world.spawn_model("turtlebot.model.yaml", "cycle", pose=Pose2D(index * 0.01, 0.0, 0.0))
        world.step()
        world.delete_model("cycle")
    assert world.physics.bodyCount == bodies_before and world.physics.jointCount == 8


def test_partial_resets_tell_spawned_models_from_the_world_files(world: World) -> None:
    """delete_spawned_models keeps the world file's models (also one deleted and spawned again
    by the same name counts as spawned); restore_models puts every body back where it was
    built, at rest, joints and all."""
    world.spawn_model(SIMPLE / "chair.model.yaml", "spawned_chair", "", Pose2D(5.0, 5.0, 0.5))
    world.delete_model("chair1")
    world.spawn_model(SIMPLE / "chair.model.yaml", "chair1", "", Pose2D(-3.0, 0.0, 0.0))
    bot = world.models["turtlebot2"]  # at (3, 4.5, 3.14159) in the world file, with wheels on joints
    built = {name: body.pose for name, body in bot.bodies.items()}
    for body in bot.bodies.values():
        body.physics_body.linearVelocity = (1.0, -2.0)
        body.physics_body.angularVelocity = 3.0
    world.step(20)
    world.move_model("turtlebot2", Pose2D(-6.0, 2.0, 1.0))
    assert all(body.pose != built[name] for name, body in bot.bodies.items())
    recorder = Recorder()
    moved: list[str] = []
    recorder.on_model_moved = lambda model: moved.append(model.name)
    world.add_listener(recorder)

    world.restore_models()
    for name, body in bot.bodies.items():
        pose = body.pose
        assert (pose.x, pose.y, pose.theta) == pytest.approx((built[name].x, built[name].y, built[name].theta), abs=1e-5)
        assert tuple(body.physics_body.linearVelocity) == (0.0, 0.0) and body.physics_body.angularVelocity == 0.0
    assert world.models["spawned_chair"].pose.x == pytest.approx(5.0) and world.models["chair1"].pose.x == pytest.approx(-3.0)
    assert sorted(moved) == sorted(world.models)

    world.delete_spawned_models()
    assert set(world.models) == {"turtlebot1", "turtlebot2", "person1"}
    assert recorder.events == [("removed", "spawned_chair"), ("removed", "chair1")]


def test_worlds_loaded_one_after_another_do_not_pile_up() -> None:
    """A closed world's cycles go with the next load's collection (a world loaded later must not
    freeze the garbage of the one before; 3.7 MB a load stayed before)."""
    import weakref

    gone = []
    for _ in range(6):
        world = World.from_file(SIMPLE / "world.yaml")
        gone.append(weakref.ref(world))
        world.close()
        del world
    assert sum(ref() is not None for ref in gone[:-1]) == 0


def test_a_pile_of_spawned_models_is_refused(world: World) -> None:
    """Spawning one model onto another again and again stops (a clear RequestError, nothing
    made) before the pile's contacts slow every step; moving one onto the pile is refused and
    leaves it where it was."""
    spawned = 0
    with pytest.raises(RequestError, match=r'model "pile_\d+" would overlap .* more than the limit of 256'):
        for number in range(1000):
            world.spawn_model(SIMPLE / "turtlebot.model.yaml", f"pile_{number}", f"pile_{number}", Pose2D(20.0, 20.0, 0.0))
            spawned += 1
    assert 2 <= spawned < 40 and f"pile_{spawned}" not in world.models
    world.spawn_model(SIMPLE / "turtlebot.model.yaml", "free", "free", Pose2D(-20.0, -20.0, 0.0))
    body = world.models["free"].first_body.physics_body
    body.linearVelocity = (0.5, 0.25)
    before = (tuple(body.position), body.angle, tuple(body.linearVelocity))
    with pytest.raises(RequestError, match="free"):
        world.move_model("free", Pose2D(20.0, 20.0, 1.0))
    assert (tuple(body.position), body.angle, tuple(body.linearVelocity)) == before
    with pytest.raises(RequestError, match="free"):
        world.set_model_state("free", Pose2D(20.0, 20.0, 1.0), 0.0, 0.0, 0.0)
    assert (tuple(body.position), body.angle, tuple(body.linearVelocity)) == before
    world.move_model("free", Pose2D(-25.0, -20.0, 0.0))  # a free place is fine
    world.step(2)


def test_objects_shared_per_world_are_made_once_and_dropped_on_close() -> None:
    world = World.from_file(SIMPLE / "world.yaml", step_size=0.01)
    made = []
    first = world.shared("test.key", lambda: made.append(1) or object())
    assert world.shared("test.key", lambda: made.append(2) or object()) is first and made == [1]
    world.close()
    assert world.shared("test.key", lambda: made.append(3) or object()) is not first and made == [1, 3]


def test_level_models_are_the_file_s_models_that_levels_stream(tmp_path: Path) -> None:
    (tmp_path / "box.model.yaml").write_text(
        "bodies:\n  - name: base\n    type: static\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
    )
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: a, model: box.model.yaml}\n"
        "  - {name: b, model: box.model.yaml, pose: [30, 0, 0]}\n"
        "levels:\n  - {name: L, pose: [30, 0], size: [4, 4], buffer: 1, refs: [b]}\n"
    )
    for enabled, expected in ((True, ["b"]), (False, [])):
        world = World.from_file(tmp_path / "world.yaml", enable_levels=enabled)
        models = world.level_models()
        assert [entry.name for entry, _ in models] == expected
        assert all(spec is world.file_model(entry.model_path) for entry, spec in models)
        world.close()


def test_the_core_draws_no_pictures_and_says_where_they_are_drawn_now(world: World) -> None:
    with pytest.raises(AttributeError, match=r"sim_server\.rendering\.render\(world"):
        world.render()


def protocol_members(protocol: type) -> dict[str, object]:
    """A protocol's members (properties and methods, its bases' too) by name."""
    members: dict[str, object] = {}
    for base in reversed(protocol.__mro__):
        if getattr(base, "_is_protocol", False) and base.__module__.startswith("sim_server"):
            members.update((name, value) for name, value in vars(base).items() if not name.startswith("_"))
    return members


@pytest.mark.parametrize(
    "protocol",
    ["sim_server.core.physics.world_view:WorldView", "sim_server.core.plugins.api:PluginWorld",
     "sim_server.core.levels:LevelHost"],
)
def test_the_world_fulfils_the_protocols_its_parts_name(world: World, protocol: str) -> None:
    """Plugins, levels, lasers and pictures name a protocol, not the World class: the world must
    keep every member of each (inherited ones too), methods with the same parameters."""
    import importlib
    import inspect

    module, name = protocol.split(":")
    members = protocol_members(getattr(importlib.import_module(module), name))
    assert members
    for member, declared in members.items():
        assert hasattr(world, member), f"World lacks {member} of {name}"
        if isinstance(declared, property):
            assert not inspect.ismethod(getattr(world, member)), f"{name}.{member} is a value, World's a method"
        else:
            wanted = list(inspect.signature(declared).parameters)[1:]
            assert list(inspect.signature(getattr(world, member)).parameters) == wanted, f"{name}.{member}"


@pytest.mark.parametrize("seed", [-1, -(2**70), 2**63, 1.5, True, "7", [1]])
def test_a_seed_numpy_cannot_take_is_refused_in_one_line(seed) -> None:
    with pytest.raises(ValueError, match=r"seed must be None or a whole number from 0 to 9223372036854775807, got "):
        World.from_file(SIMPLE / "world.yaml", seed=seed)


@pytest.mark.parametrize("seed", [None, 0, 2**63 - 1])
def test_every_seed_in_range_seeds_the_world(seed) -> None:
    import numpy as np

    for given in (seed, None if seed is None else np.int64(seed)):
        world = World.from_file(SIMPLE / "world.yaml", seed=given)
        assert world.seed == seed and (seed is None or type(world.seed) is int)
        world.step(3)
        world.close()
