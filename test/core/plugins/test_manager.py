"""The plugin system: plugins from a third-party package, failures, the update timer, contacts.

A throwaway distribution (``test_thirdparty_plugins``, with a dist-info declaring entry points)
is written to a temporary folder put on ``sys.path``: exactly what ``pip install`` of a
third-party package leaves behind, so plugins load through the real entry-point discovery.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from sim_server.core import ConfigError, Pose2D, World
from sim_server.core.plugins.api import MODEL_PLUGIN_GROUP, WORLD_PLUGIN_GROUP, UpdateTimer
from sim_server.core.timing.timekeeper import TimeKeeper
from test.conftest import PLUGIN_MANAGER_TESTS, install_throwaway_plugins, plugin

PLUGIN_MODULE = '''
from sim_server.core.plugins.api import ModelPlugin, UpdateTimer


class DummyModelPlugin(ModelPlugin):
    """The reference's dummy plugin: checks its three parameters."""

    def on_initialize(self, config):
        self.value_float = config.get_float("dummy_param_float")
        self.value_int = config.get_int("dummy_param_int")
        self.value_string = config.get_str("dummy_param_string")
        if self.value_string != "dummy_test_123456":
            raise ValueError(
                f'dummy_param_float must be dummy_test_123456, instead it was "{self.value_string}"'
            )


class CountingPlugin(ModelPlugin):
    """Counts timer firings and every hook call."""

    def on_initialize(self, config):
        self.timer = UpdateTimer(float(config.get_any("rate")))
        self.fired = 0
        self.calls = {"before": 0, "after": 0, "begin": 0, "end": 0, "pre": 0, "post": 0}
        self.others = []

    def before_physics_step(self, time):
        self.calls["before"] += 1
        if self.timer.check(time):
            self.fired += 1

    def after_physics_step(self, time):
        self.calls["after"] += 1

    def begin_contact(self, contact):
        self.calls["begin"] += 1
        own, other = self.split_contact(contact)
        self.others.append(other.body.userData.entity.name)

    def end_contact(self, contact):
        self.calls["end"] += 1

    def pre_solve(self, contact, manifold):
        self.calls["pre"] += 1

    def post_solve(self, contact, impulse):
        self.calls["post"] += 1


class FailingPlugin(ModelPlugin):
    """Raises in its step hook after a few steps."""

    def on_initialize(self, config):
        self.steps = 0

    def after_physics_step(self, time):
        self.steps += 1
        if self.steps == 3:
            raise RuntimeError("sensor broke")


class ExitingPlugin(FailingPlugin):
    """Calls sys.exit() in its step hook after a few steps."""

    def after_physics_step(self, time):
        self.steps += 1
        if self.steps == 3:
            raise SystemExit(3)


SHUT_DOWN = []


class Holding(ModelPlugin):
    """Takes a resource in on_initialize (then maybe fails) and gives it back in on_shutdown."""

    def on_initialize(self, config):
        self.resource = object()
        if config.get_bool("fail", False):
            raise RuntimeError("failed after taking a resource")

    def on_shutdown(self):
        SHUT_DOWN.append(self.resource)


class FailingEarly(ModelPlugin):
    """Fails before taking anything, and its on_shutdown trips over that."""

    def on_initialize(self, config):
        raise RuntimeError("failed at once")

    def on_shutdown(self):
        SHUT_DOWN.append(self.resource)


class OldPlugin(ModelPlugin):
    api_version = 0


class Batched(ModelPlugin):
    """Records each step's batch; the one named "bad" raises from its third step on."""

    batches = []

    def on_initialize(self, config):
        self.steps = 0

    def before_physics_step(self, time):
        self.steps += 1
        if self.context.name == "bad" and self.steps >= 3:
            raise RuntimeError("batched sensor broke")

    @classmethod
    def before_physics_step_batch(cls, plugins, time):
        # Recorded from the batch's cache, which must follow the members.
        cls.batches.append(list(plugins.cache.setdefault("names", [p.context.model.name for p in plugins])))
        for plugin in plugins:
            plugin.before_physics_step(time)


class Prepared(ModelPlugin):
    """Counts its class's preparations and the instances made after them."""

    prepared = []

    @classmethod
    def prepare(cls):
        cls.prepared.append(len(cls.prepared))

    def on_initialize(self, config):
        self.preparations_before = len(self.prepared)


class Unpreparable(ModelPlugin):
    """Its class cannot be made ready."""

    @classmethod
    def prepare(cls):
        raise RuntimeError("no compiler\\nfor this")


from sim_server.core.plugins.api import WorldPlugin


class Census(WorldPlugin):
    """A world plugin following the models that come and go."""

    def on_initialize(self, config):
        self.label = config.get_str("label")
        self.events = []
        self.phases = []
        self.steps = 0

    def on_model_added(self, model):
        self.events.append(("added", model.name))

    def on_model_removed(self, model):
        self.events.append(("removed", model.name))

    def before_physics_step(self, time):
        self.steps += 1

    def pre_update(self, info):
        self.phases.append(("pre", info.sim_time_ns, info.step_size, info.iterations, info.paused))

    def post_update(self, info):
        self.phases.append(("post", info.sim_time_ns, info.step_size, info.iterations, info.paused))
'''


@pytest.fixture
def thirdparty(tmp_path: Path, monkeypatch) -> Path:
    """Install the throwaway plugin distribution on sys.path."""
    entries = {
        "DummyModelPlugin": "DummyModelPlugin",
        "Counting": "CountingPlugin",
        "Failing": "FailingPlugin",
        "Exiting": "ExitingPlugin",
        "Old": "OldPlugin",
        "Batched": "Batched",
        "Broken": "NoSuchClass",
        "Holding": "Holding",
        "FailingEarly": "FailingEarly",
        "Prepared": "Prepared",
        "Unpreparable": "Unpreparable",
    }
    install_throwaway_plugins(tmp_path, monkeypatch, "test_thirdparty_plugins", PLUGIN_MODULE,
                              {MODEL_PLUGIN_GROUP: entries, WORLD_PLUGIN_GROUP: {"Census": "Census"}})
    yield tmp_path
    sys.modules.pop("test_thirdparty_plugins", None)


def world_with(tmp_path: Path, plugins: str, step_size: float = 0.01, extra_models: str = "") -> World:
    (tmp_path / "bot.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n" + plugins
    )
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: bot, model: bot.model.yaml}\n" + extra_models
    )
    return World.from_file(tmp_path / "world.yaml", step_size=step_size)


def test_load_dummy_plugin_from_thirdparty_package(thirdparty: Path) -> None:
    world = World.from_file(PLUGIN_MANAGER_TESTS / "load_dummy_test" / "world.yaml")
    dummy = plugin(world, "turtlebot1", "dummy_test_plugin")
    assert type(dummy).__name__ == "DummyModelPlugin" and dummy.context.type_name == "DummyModelPlugin"
    assert (dummy.value_float, dummy.value_int, dummy.value_string) == (0.123456, 123456, "dummy_test_123456")
    world.close()


@pytest.mark.parametrize(
    ("case", "facts"),
    [
        ("plugin_throws_exception", ['plugin "dummy_test_plugin"', 'type "DummyModelPlugin"', 'model "turtlebot1"',
                                     'instead it was "wrong_message"']),
        ("nonexistent_plugin", ['type "RandomPlugin"', 'model "turtlebot1"', "no such plugin type is installed"]),
        ("invalid_plugin_yaml", ["turtlebot.model.yaml", "plugins[0]", 'key "name" is missing']),
        ("duplicate_plugin", ["turtlebot.model.yaml", 'key "plugins"', 'plugin named "dummy_test_plugin"']),
    ],
)
def test_reference_plugin_failures(thirdparty: Path, case: str, facts: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        World.from_file(PLUGIN_MANAGER_TESTS / case / "world.yaml")
    for fact in facts:
        assert fact in str(info.value), f"{fact!r} not in {info.value}"


@pytest.mark.parametrize(
    ("type_name", "fact"),
    [("Old", "plugin API version 0"), ("Broken", "cannot be imported")],
)
def test_unusable_plugin_classes(thirdparty: Path, tmp_path: Path, type_name: str, fact: str) -> None:
    with pytest.raises(ConfigError, match=fact):
        world_with(tmp_path, f"plugins:\n  - {{name: p, type: {type_name}}}\n")


def test_a_type_name_two_packages_register_is_refused_naming_both(
    thirdparty: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two installed packages registering one type name: which one a model means cannot be told,
    so loading it fails in one line naming both packages and targets (never the last one found,
    silently); the names only one of them registers still load."""
    install_throwaway_plugins(
        tmp_path / "other", monkeypatch, "test_other_plugins",
        "from test_thirdparty_plugins import CountingPlugin as Lookalike\n",
        {MODEL_PLUGIN_GROUP: {"Counting": "Lookalike", "OtherCounting": "Lookalike"}},
    )
    try:
        with pytest.raises(ConfigError) as info:
            world_with(tmp_path, "plugins:\n  - {name: p, type: Counting, rate: 10}\n")
        message = str(info.value)
        assert "\n" not in message and "'Counting'" in message and "more than one installed package" in message
        assert "test-thirdparty-plugins (test_thirdparty_plugins:CountingPlugin)" in message, message
        assert "test-other-plugins (test_other_plugins:Lookalike)" in message, message
        world = world_with(tmp_path, "plugins:\n  - {name: p, type: OtherCounting, rate: 10}\n")
        assert type(plugin(world, "bot", "p")).__name__ == "CountingPlugin"
        world.close()
    finally:
        sys.modules.pop("test_other_plugins", None)


def test_a_class_is_prepared_once_before_its_first_instance(thirdparty: Path, tmp_path: Path) -> None:
    world = world_with(tmp_path, "plugins:\n  - {name: p, type: Prepared}\n")
    prepared = type(plugin(world, "bot", "p"))
    assert prepared.prepared == [0] and plugin(world, "bot", "p").preparations_before == 1
    world.spawn_model("bot.model.yaml", "bot2")
    world.reset()
    assert prepared.prepared == [0]  # once per process, however many instances
    world.close()


def test_a_class_that_cannot_be_prepared_fails_its_model_in_one_line(thirdparty: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        world_with(tmp_path, "plugins:\n  - {name: p, type: Unpreparable}\n")
    message = str(info.value)
    assert "\n" not in message and "world.yaml" in message and 'plugin "p" (type "Unpreparable") of model "bot"' in message
    assert "cannot be prepared: RuntimeError: no compiler for this" in message


def test_plugins_of_models_that_levels_bring_are_prepared_as_the_world_loads(thirdparty: Path, tmp_path: Path) -> None:
    """A model that a level loads arrives inside a step: its plugin classes were made ready
    when the world loaded (the laser's compiled ray caster, say), before any instance."""
    (tmp_path / "bot.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
    )
    (tmp_path / "far.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
        "plugins:\n  - {name: p, type: Prepared}\n"
    )
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nmodels:\n  - {name: bot, model: bot.model.yaml}\n"
        "  - {name: far, model: far.model.yaml, pose: [50, 0, 0]}\n"
        "levels:\n  - {name: L, pose: [50, 0], size: [10, 10], buffer: 1, refs: [far]}\n"
        "performers:\n  - {name: perf, ref: bot, size: [2, 2]}\n"
    )
    world = World.from_file(tmp_path / "world.yaml", step_size=0.01, enable_levels=True)
    assert "far" not in world.models
    prepared = sys.modules["test_thirdparty_plugins"].Prepared
    assert prepared.prepared == [0]
    world.move_model("bot", Pose2D(48.0, 0.0, 0.0))
    world.step()
    assert "far" in world.models and plugin(world, "far", "p").preparations_before == 1
    world.close()


def test_unknown_plugin_keys_are_errors(thirdparty: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'plugins\[0\] \("p"\): unrecognized key\(s\) "colour"'):
        world_with(tmp_path, "plugins:\n  - {name: p, type: Counting, rate: 10, colour: red}\n")


def test_failed_plugin_spawn_leaves_nothing(thirdparty: Path, tmp_path: Path) -> None:
    world = world_with(tmp_path, "")
    bodies = world.physics.bodyCount
    (tmp_path / "bad.model.yaml").write_text(
        "bodies:\n  - name: b\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
        "plugins:\n  - {name: ok, type: Counting, rate: 1}\n  - {name: bad, type: DummyModelPlugin, "
        "dummy_param_float: 1, dummy_param_int: 1, dummy_param_string: nope}\n"
    )
    with pytest.raises(ConfigError, match='instead it was "nope"'):
        world.spawn_model("bad.model.yaml", "bad")
    assert world.physics.bodyCount == bodies and "bad" not in world.models
    world.step(3)
    world.close()


@pytest.mark.parametrize(
    ("config", "fact"),
    [("fail: true", "failed after taking a resource"), ("colour: red", 'unrecognized key(s) "colour"')],
)
def test_plugin_failing_to_initialise_gives_back_what_it_took(
    thirdparty: Path, tmp_path: Path, config: str, fact: str
) -> None:
    world = world_with(tmp_path, "")
    (tmp_path / "bad.model.yaml").write_text(
        "bodies:\n  - name: b\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
        f"plugins:\n  - {{name: h, type: Holding, {config}}}\n"
    )
    import test_thirdparty_plugins

    with pytest.raises(ConfigError) as info:
        world.spawn_model("bad.model.yaml", "bad")
    assert fact in str(info.value)
    assert len(test_thirdparty_plugins.SHUT_DOWN) == 1
    world.close()


def test_on_shutdown_tripping_after_a_failed_initialisation_is_not_reported(
    thirdparty: Path, tmp_path: Path, caplog
) -> None:
    world = world_with(tmp_path, "")
    (tmp_path / "bad.model.yaml").write_text(
        "bodies:\n  - name: b\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
        "plugins:\n  - {name: e, type: FailingEarly}\n"
    )
    with caplog.at_level("INFO"), pytest.raises(ConfigError, match="failed at once"):
        world.spawn_model("bad.model.yaml", "bad")
    assert not [record for record in caplog.records if record.levelname in ("WARNING", "ERROR")]
    world.close()


@pytest.mark.parametrize("kind", ["Failing", "Exiting"])
def test_plugin_raising_at_run_time_is_disabled(thirdparty: Path, tmp_path: Path, caplog, kind: str) -> None:
    world = world_with(tmp_path, f"plugins:\n  - {{name: f, type: {kind}}}\n  - {{name: c, type: Counting, rate: .inf}}\n")
    failing = plugin(world, "bot", "f")
    world.step(10)
    assert failing.steps == 3
    assert plugin(world, "bot", "c").calls["after"] == 10
    assert any(f'plugin "f" (type "{kind}") of model "bot" raised in after_physics_step' in r.message for r in caplog.records)
    world.close()


def test_batched_hooks_run_once_for_all_instances(thirdparty: Path, tmp_path: Path) -> None:
    """One call per step for every instance of a batched class, in load order, following models."""
    extra = "".join(f"  - {{name: b{i}, model: bot.model.yaml, pose: [{3 * i + 3}, 0, 0]}}\n" for i in range(3))
    world = world_with(tmp_path, "plugins:\n  - {name: p, type: Batched}\n  - {name: c, type: Counting, rate: .inf}\n", extra_models=extra)
    batches = type(plugin(world, "bot", "p")).batches
    batches.clear()
    world.step(2)
    assert batches == [["bot", "b0", "b1", "b2"]] * 2
    assert all(plugin(world, name, "c").calls["before"] == 2 for name in ("bot", "b0", "b1", "b2"))
    world.delete_model("b1")
    world.step()
    assert batches[-1] == ["bot", "b0", "b2"]
    world.spawn_model(tmp_path / "bot.model.yaml", "b3", pose=Pose2D(20.0, 0.0, 0.0))
    world.step()
    assert batches[-1] == ["bot", "b0", "b2", "b3"]
    world.delete_model("b3")
    for name in ("bot", "b0", "b2"):
        world.delete_model(name)
    batches.clear()
    world.step()
    assert batches == []  # an empty batch is not called
    world.close()


def test_batch_that_raises_is_split_and_the_faulty_plugin_disabled(thirdparty: Path, tmp_path: Path, caplog) -> None:
    (tmp_path / "bad.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
        "plugins:\n  - {name: bad, type: Batched}\n"
    )
    extra = "  - {name: worse, model: bad.model.yaml, pose: [3, 0, 0]}\n  - {name: b2, model: bot.model.yaml, pose: [6, 0, 0]}\n"
    world = world_with(tmp_path, "plugins:\n  - {name: p, type: Batched}\n", extra_models=extra)
    batches = type(plugin(world, "bot", "p")).batches
    faulty = plugin(world, "worse", "bad")
    batches.clear()
    world.step(10)
    assert len(batches) == 3  # the third batch raised; the plugins then ran one by one
    # The step whose batch raised is cut short for the plugins after the faulty one.
    assert (plugin(world, "bot", "p").steps, plugin(world, "b2", "p").steps) == (10, 9)
    assert faulty.steps == 4  # raised in the batch, then once more on its own, and was disabled
    assert world.plugins.plugins_of(world.models["worse"]) == []
    messages = [record.message for record in caplog.records]
    assert any("batched before_physics_step of 3 plugin(s) of type Batched raised" in m for m in messages)
    assert any('plugin "bad" (type "Batched") of model "worse" raised in before_physics_step' in m for m in messages)
    world.close()


@pytest.mark.parametrize(
    ("rate", "step", "seconds"),
    [(141.56, 1 / 333, 2.0), (564.56, 1 / 1234, 1.0), (47.4, 0.01, 2.0), (math.inf, 0.01, 1.0)],
)
def test_update_timer_rates(thirdparty: Path, tmp_path: Path, rate: float, step: float, seconds: float) -> None:
    world = world_with(tmp_path, f"plugins:\n  - {{name: c, type: Counting, rate: {'.inf' if math.isinf(rate) else rate}}}\n", step)
    steps = round(seconds / step)
    world.step(steps)
    achieved = plugin(world, "bot", "c").fired / world.time.sim_time
    assert achieved == pytest.approx(100.0 if math.isinf(rate) else rate, abs=1.0)
    world.close()


def test_update_timer_zero_fires_only_at_start() -> None:
    timer = UpdateTimer(0.0)
    time = TimeKeeper(0.01)
    fired = []
    for _ in range(300):
        fired.append(timer.check(time))
        time.advance()
    assert fired[0] and not any(fired[1:])


def test_contacts_with_layer_and_models(thirdparty: Path, tmp_path: Path) -> None:
    (tmp_path / "lines.dat").write_text("-5 0 5 0\n")
    (tmp_path / "lines.yaml").write_text("type: line_segments\ndata: lines.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "other.model.yaml").write_text(
        "bodies:\n  - name: o\n    type: static\n    footprints: [{type: circle, radius: 0.5, density: 1}]\n"
    )
    world = world_with(
        tmp_path,
        "plugins:\n  - {name: c, type: Counting, rate: 1}\n",
        step_size=0.01,
        extra_models="  - {name: other, model: other.model.yaml, pose: [3, 0.2, 0]}\n"
        "layers:\n  - {name: wall, map: lines.yaml}\n",
    )
    counter = plugin(world, "bot", "c")
    world.step(2)
    assert counter.calls["begin"] == 1 and counter.others == ["wall"]
    assert counter.calls["pre"] > 0 and counter.calls["post"] > 0
    world.move_model("bot", Pose2D(0.0, 5.0, 0.0))
    world.step(2)
    assert counter.calls["end"] == 1
    world.move_model("bot", Pose2D(2.5, 0.8, 0.0))
    world.step(2)
    assert counter.others[-1] == "other"
    world.delete_model("other")
    assert counter.calls["end"] == 2
    world.close()


def test_world_plugins_follow_models(thirdparty: Path, tmp_path: Path) -> None:
    world = world_with(tmp_path, "", extra_models="plugins:\n  - {name: census, type: Census, label: all}\n")
    (census,) = world.plugins.world_plugins
    assert census.label == "all" and census.events == []
    world.spawn_model("bot.model.yaml", "second")
    world.step(3)
    world.delete_model("second")
    assert census.events == [("added", "second"), ("removed", "second")] and census.steps == 3
    world.close()


def test_world_plugin_errors_name_the_plugin(thirdparty: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'plugin "census" \(type "Census"\) \(world plugin\).*key "label" is missing'):
        world_with(tmp_path, "", extra_models="plugins:\n  - {name: census, type: Census}\n")


def test_world_plugin_phases_get_update_info(thirdparty: Path, tmp_path: Path) -> None:
    world = world_with(tmp_path, "", step_size=0.01, extra_models="plugins:\n  - {name: census, type: Census, label: x}\n")
    (census,) = world.plugins.world_plugins
    world.step(2)
    world.time.paused = True
    world.idle()
    assert census.phases == [
        ("pre", 10_000_000, 0.01, 1, False), ("post", 10_000_000, 0.01, 1, False),
        ("pre", 20_000_000, 0.01, 2, False), ("post", 20_000_000, 0.01, 2, False),
        ("pre", 20_000_000, 0.0, 2, True), ("post", 20_000_000, 0.0, 2, True),
    ]
    world.close()
