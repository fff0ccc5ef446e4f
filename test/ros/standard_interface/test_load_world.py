"""The standard interface's load_world: another world replaces the loaded one while every
service stays; a world that cannot be loaded leaves the loaded one as it was, and nothing of the
attempt stays on the node."""

from __future__ import annotations

from pathlib import Path

import pytest
from simulation_interfaces.msg import Result, SimulationState
from simulation_interfaces.srv import GetEntities, GetSimulationState, LoadWorld, StepSimulation

from test.conftest import LOAD_WORLD_TESTS, REPO_ROOT
from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import DISC, WORLD, pose, request, spawn

TUNNEL = REPO_ROOT / "config" / "worlds" / "tunnel" / "world.yaml"
CODES = LoadWorld.Response
#: A world of one layer (a map image) and one person, as text (its files are the loaded world's).
TEXT_WORLD = (
    "properties: {}\nlayers:\n  - {name: 2d, map: map.yaml}\n"
    "models:\n  - {name: walker, model: person.model.yaml, pose: [1, 2, 0]}\n"
)


@pytest.fixture
def harness(ros_context):
    h = Harness(ros_context, WORLD, show_viz=True, state_pub_rate=10.0)
    yield h
    h.close()


def load(harness: Harness, **fields) -> LoadWorld.Response:
    return harness.call(LoadWorld, "/sim_server/load_world", request(LoadWorld.Request, **fields))


def node_entities(harness: Harness) -> tuple[int, int, int]:
    server = harness.server
    return len(list(server.publishers)), len(list(server.subscriptions)), len(list(server.services))


def entities(harness: Harness) -> list[str]:
    return list(harness.call(GetEntities, "/sim_server/get_entities", GetEntities.Request()).entities)


def test_a_world_by_uri_replaces_the_loaded_one_stopped(harness) -> None:
    old = harness.server.world
    harness.run_until(lambda: old.time.iterations > 5, "steps")
    done = load(harness, uri=str(TUNNEL))
    assert done.result.result == Result.RESULT_OK, done.result
    assert done.world.name == "tunnel" and done.world.world_resource.uri == str(TUNNEL)
    world = harness.server.world
    assert world is not old and world.spec.path == TUNNEL and not old.models
    assert entities(harness) == ["scout", "hauler"]
    assert world.time.paused and world.time.iterations == 0
    state = harness.call(GetSimulationState, "/sim_server/get_simulation_state", GetSimulationState.Request())
    assert state.state.state == SimulationState.STATE_STOPPED
    # Every service acts on the new world: stepping, spawning, the levels, the markers, the datapacks.
    stepped = harness.call(StepSimulation, "/sim_server/step_simulation", StepSimulation.Request(steps=7))
    assert stepped.result.result == Result.RESULT_OK and world.time.iterations == 7
    assert spawn(harness, name="ball", resource_string=DISC, initial_pose=pose(20.0, 0.0)).result.result == Result.RESULT_OK
    assert "ball" in world.models
    assert harness.server.levels._world is world and harness.server.state_datapacks._world is world
    topics = harness.server.visualization.topics
    assert "/sim_server/debug/layer/tunnel" in topics and not any(t.endswith("/layer/layer_2d") for t in topics)
    assert harness.server.standard_interface.worlds._world is world


def test_a_world_as_text_resolves_its_files_against_the_loaded_worlds_folder(harness) -> None:
    done = load(harness, resource_string=TEXT_WORLD)
    assert done.result.result == Result.RESULT_OK, done.result
    assert entities(harness) == ["walker"] and [layer.name for layer in harness.server.world.layers] == ["2d"]
    assert harness.server.world.spec.path == WORLD.parent / "resource_string"


def test_loading_again_and_again_leaves_nothing_behind(harness) -> None:
    """The node's entities stay as many (its /tf and /tf_static publishers come with the first
    robot that sends TF and stay), and no TF frame of a world outlives it."""
    from sim_server.ros.tf_broadcast import existing_broadcaster

    assert load(harness, uri=str(TUNNEL)).result.result == Result.RESULT_OK
    assert any("scout" in frame for frame in existing_broadcaster(harness.server).claimed_frames)
    assert load(harness, uri=str(WORLD)).result.result == Result.RESULT_OK
    before = node_entities(harness)
    for _ in range(4):
        assert load(harness, uri=str(TUNNEL)).result.result == Result.RESULT_OK
        assert load(harness, uri=str(WORLD)).result.result == Result.RESULT_OK
    assert node_entities(harness) == before
    assert not any("scout" in frame or "hauler" in frame for frame in existing_broadcaster(harness.server).claimed_frames)
    # Nor do the worlds themselves stay: at most the last one replaced awaits the collector.
    import weakref

    replaced = []
    for _ in range(5):
        replaced.append(weakref.ref(harness.server.world))
        assert load(harness, uri=str(TUNNEL)).result.result == Result.RESULT_OK
    assert sum(ref() is not None for ref in replaced) <= 1


def bad_worlds() -> list[Path]:
    """Every invalid world of the reference's tests (broken world, map and model files)."""
    return sorted(path / "world.yaml" for path in LOAD_WORLD_TESTS.iterdir() if "invalid" in path.name)


@pytest.mark.parametrize(
    "fields, code, fact",
    [
        ({}, CODES.NO_RESOURCE, "give the world file"),
        ({"uri": "no_such_world.yaml"}, CODES.NO_RESOURCE, "does not exist"),
        ({"uri": "world.sdf"}, CODES.UNSUPPORTED_FORMAT, "format yaml"),
        ({"uri": "https://example.com/world.yaml"}, CODES.UNSUPPORTED_FORMAT, "scheme"),
        ({"resource_string": "layers: ["}, CODES.RESOURCE_PARSE_ERROR, "resource_string"),
        ({"resource_string": "properties: {}\nlayers: []\nmodels:\n  - {name: m, model: nowhere.model.yaml}\n"},
         CODES.RESOURCE_PARSE_ERROR, "nowhere.model.yaml"),
    ] + [({"uri": str(path)}, CODES.RESOURCE_PARSE_ERROR, path.parent.name) for path in bad_worlds()],
)
def test_refusals_leave_the_loaded_world_as_it_was(harness, tmp_path, fields, code, fact) -> None:
    world = harness.server.world
    harness.run_until(lambda: world.time.iterations > 3, "steps")
    world.time.paused = True
    models, iterations, counts = list(world.models), world.time.iterations, node_entities(harness)
    refused = load(harness, **fields)
    assert refused.result.result == code and fact in refused.result.error_message, refused.result
    assert harness.server.world is world and list(world.models) == models and world.time.iterations == iterations
    assert node_entities(harness) == counts
    assert entities(harness) == models


def test_a_broken_plugin_takes_back_the_whole_world(harness, tmp_path) -> None:
    """The first robot's plugins (a drive: a subscription, publishers, TF) are made before the
    second robot's plugin fails; all of it goes again."""
    good, bad = tmp_path / "good.model.yaml", tmp_path / "bad.model.yaml"
    good.write_text(DISC + "plugins:\n  - {type: DiffDrive, name: drive, body: base}\n")
    bad.write_text(DISC + "plugins:\n  - {type: DiffDrive, name: drive, body: no_such_body}\n")
    from sim_server.ros.tf_broadcast import broadcaster_for

    broadcaster_for(harness.server)  # the shared /tf and /tf_static publishers: made once, kept
    counts = node_entities(harness)
    text = (f"properties: {{}}\nlayers: []\nmodels:\n  - {{name: first, model: {good}, namespace: first}}\n"
            f"  - {{name: second, model: {bad}, namespace: second}}\n")
    refused = load(harness, resource_string=text)
    assert refused.result.result == CODES.RESOURCE_PARSE_ERROR and "no_such_body" in refused.result.error_message
    assert node_entities(harness) == counts and "turtlebot1" in harness.server.world.models
    assert load(harness, resource_string=text.replace(str(bad), str(good))).result.result == Result.RESULT_OK
    assert node_entities(harness) != counts  # the drives' topics: the broken load had made them too


def test_steps_queued_for_the_old_world_are_answered(harness) -> None:
    harness.server.world.time.paused = True
    client = harness.client.create_client(StepSimulation, "/sim_server/step_simulation")
    harness.run_until(client.service_is_ready, "step_simulation")
    pending = client.call_async(StepSimulation.Request(steps=10_000_000))
    harness.run_until(lambda: harness.server.world.time.iterations > 0, "the first steps")
    assert load(harness, uri=str(TUNNEL)).result.result == Result.RESULT_OK
    harness.run_until(pending.done, "the step request's answer")
    answer = pending.result().result
    assert answer.result == Result.RESULT_OPERATION_FAILED and "the world was replaced" in answer.error_message
    assert harness.server.world.time.iterations == 0


def test_unloading_leaves_no_world_until_one_is_loaded(harness) -> None:
    """After unload_world: the state is NO_WORLD, there are no entities, and spawning,
    stepping, playing and resetting (through either interface) are refused with the reason;
    load_world brings a world back."""
    from std_srvs.srv import Empty
    from sim_msgs.srv import SpawnModel, StepWorld
    from simulation_interfaces.srv import GetCurrentWorld, ResetSimulation, SetSimulationState, UnloadWorld

    def call(service_type, name: str, request=None):
        return harness.call(service_type, f"/sim_server/{name}", request or service_type.Request())

    old = harness.server.world
    done = call(UnloadWorld, "unload_world")
    assert done.result.result == Result.RESULT_OK and not old.models
    world = harness.server.world
    assert world is not old and not world.models and not world.layers and world.time.paused
    state = call(GetSimulationState, "get_simulation_state").state.state
    assert state == SimulationState.STATE_NO_WORLD
    assert entities(harness) == []
    again = call(UnloadWorld, "unload_world").result
    assert again.result == UnloadWorld.Response.NO_WORLD_LOADED
    current = call(GetCurrentWorld, "get_current_world").result
    assert current.result == GetCurrentWorld.Response.NO_WORLD_LOADED and "load_world" in current.error_message
    refusals = [
        spawn(harness, name="ball", resource_string=DISC).result,
        call(StepSimulation, "step_simulation", StepSimulation.Request(steps=1)).result,
        call(ResetSimulation, "reset_simulation").result,
    ] + [
        call(SetSimulationState, "set_simulation_state", SetSimulationState.Request(state=SimulationState(state=value))).result
        for value in (SimulationState.STATE_PLAYING, SimulationState.STATE_PAUSED, SimulationState.STATE_STOPPED)
    ]
    codes = [r.result for r in refusals]
    assert codes == [Result.RESULT_INCORRECT_STATE, Result.RESULT_OPERATION_FAILED, Result.RESULT_OPERATION_FAILED] + [
        SetSimulationState.Response.INCORRECT_TRANSITION] * 3, refusals
    assert all("load_world" in r.error_message for r in refusals), refusals
    flatland_spawn = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="chair.model.yaml", name="c"))
    assert not flatland_spawn.success and "load_world" in flatland_spawn.message
    stepped = harness.call(StepWorld, "/step_world", StepWorld.Request(steps=1))
    assert not stepped.success and "load_world" in stepped.message
    harness.call(Empty, "/resume", Empty.Request())
    harness.call(Empty, "/toggle_pause", Empty.Request())
    assert harness.server.world.time.paused and world.time.iterations == 0 and not world.models
    # A world again: everything works.
    assert load(harness, uri="world.yaml").result.result == Result.RESULT_OK  # relative to the unloaded one's folder
    assert call(GetSimulationState, "get_simulation_state").state.state == SimulationState.STATE_STOPPED
    assert spawn(harness, name="ball", resource_string=DISC).result.result == Result.RESULT_OK
