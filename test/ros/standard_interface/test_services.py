"""The standard interface's state and stepping services, in process (rclpy, one executor)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from simulation_interfaces.msg import Result, SimulationState, SimulatorFeatures
from simulation_interfaces.srv import GetSimulationState, GetSimulatorFeatures, SetSimulationState, StepSimulation

from sim_server.core import limits
from sim_server.ros.standard_interface.services import FEATURES
from test.conftest import LOAD_WORLD_TESTS
from test.ros.conftest import WAIT_LIMIT, Harness
from test.ros.standard_interface.conftest import DISC

WORLD = LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"
PLAYING, PAUSED, STOPPED = SimulationState.STATE_PLAYING, SimulationState.STATE_PAUSED, SimulationState.STATE_STOPPED


@pytest.fixture
def harness(ros_context):
    h = Harness(ros_context, WORLD)
    yield h
    h.close()


def state(harness: Harness) -> int:
    response = harness.call(GetSimulationState, "/sim_server/get_simulation_state", GetSimulationState.Request())
    assert response.result.result == Result.RESULT_OK
    return response.state.state


def set_state(harness: Harness, value: int) -> Result:
    return harness.call(
        SetSimulationState, "/sim_server/set_simulation_state", SetSimulationState.Request(state=SimulationState(state=value))
    ).result


def step(harness: Harness, steps: int) -> Result:
    return harness.call(StepSimulation, "/sim_server/step_simulation", StepSimulation.Request(steps=steps)).result


def test_features_list_what_is_offered(harness) -> None:
    features = harness.call(GetSimulatorFeatures, "/sim_server/get_simulator_features", GetSimulatorFeatures.Request()).features
    assert sorted(features.features) == sorted(FEATURES)
    assert set(features.features) == {
        SimulatorFeatures.SIMULATION_STATE_GETTING, SimulatorFeatures.SIMULATION_STATE_SETTING,
        SimulatorFeatures.SIMULATION_STATE_PAUSE, SimulatorFeatures.STEP_SIMULATION_SINGLE,
        SimulatorFeatures.STEP_SIMULATION_MULTIPLE, SimulatorFeatures.SIMULATION_RESET,
        SimulatorFeatures.SIMULATION_RESET_TIME, SimulatorFeatures.SIMULATION_RESET_STATE,
        SimulatorFeatures.SIMULATION_RESET_SPAWNED,
        SimulatorFeatures.SPAWNING, SimulatorFeatures.DELETING, SimulatorFeatures.SPAWNING_RESOURCE_STRING,
        SimulatorFeatures.ENTITY_STATE_GETTING, SimulatorFeatures.ENTITY_STATE_SETTING,
        SimulatorFeatures.ENTITY_INFO_GETTING, SimulatorFeatures.STEP_SIMULATION_ACTION,
        SimulatorFeatures.SPAWNING_ENTITIES, SimulatorFeatures.ENTITY_BOUNDS,
        SimulatorFeatures.ENTITY_BOUNDS_BOX, SimulatorFeatures.ENTITY_BOUNDS_CONVEX, SimulatorFeatures.ENTITY_CATEGORIES,
        SimulatorFeatures.ENTITY_TAGS, SimulatorFeatures.ENTITY_INFO_SETTING, SimulatorFeatures.SPAWNABLES,
        SimulatorFeatures.WORLD_INFO_GETTING, SimulatorFeatures.AVAILABLE_WORLDS, SimulatorFeatures.WORLD_LOADING,
        SimulatorFeatures.WORLD_RESOURCE_STRING, SimulatorFeatures.WORLD_TAGS, SimulatorFeatures.NAMED_POSES,
        SimulatorFeatures.POSE_BOUNDS, SimulatorFeatures.WORLD_UNLOADING,
    }  # each is exercised here and in the other test modules of this folder
    assert list(features.spawn_formats) == ["yaml"] and "sim_server" in features.custom_info
    names = ("get_simulator_features", "get_simulation_state", "set_simulation_state", "step_simulation",
             "reset_simulation", "spawn_entity", "delete_entity", "get_entity_state", "set_entity_state",
             "get_entity_info", "set_entity_info", "spawn_entities", "get_entity_bounds", "get_entities",
             "get_entities_states", "get_spawnables", "get_current_world", "get_available_worlds", "load_world", "get_named_poses",
             "get_named_pose_bounds", "unload_world")
    assert {f"/sim_server/{name}" for name in names} <= set(harness.server.service_names)


def test_transitions(harness) -> None:
    world = harness.server.world
    harness.run_until(lambda: world.time.iterations > 10, "steps")
    assert state(harness) == PLAYING
    assert set_state(harness, PAUSED).result == Result.RESULT_OK and world.time.paused
    assert state(harness) == PAUSED
    again = set_state(harness, PAUSED)
    assert again.result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE and "already PAUSED" in again.error_message
    assert set_state(harness, PLAYING).result == Result.RESULT_OK and not world.time.paused
    harness.run_until(lambda: world.time.iterations > 20, "more steps")
    assert set_state(harness, STOPPED).result == Result.RESULT_OK  # pause and reset
    assert world.time.paused and world.time.time_ns == 0 and state(harness) == STOPPED
    again = set_state(harness, STOPPED)
    assert again.result == SetSimulationState.Response.ALREADY_IN_TARGET_STATE and "already STOPPED" in again.error_message
    # "Stopped simulation can be played. It can also be paused, which means starting simulation in
    # a paused state immediately, without any time steps for physics or simulated clock ticks."
    assert set_state(harness, PAUSED).result == Result.RESULT_OK
    harness.run_ticks(20)
    assert state(harness) == PAUSED and world.time.iterations == 0 and world.time.time_ns == 0
    assert set_state(harness, STOPPED).result == Result.RESULT_OK and state(harness) == STOPPED
    assert set_state(harness, PLAYING).result == Result.RESULT_OK
    harness.run_until(lambda: world.time.iterations > 0, "playing again")
    assert state(harness) == PLAYING


def test_started_paused_is_paused(ros_context) -> None:
    """A user who launched with start_paused asked for a paused simulation (it was STOPPED once):
    PAUSED, steppable, and STOPPED only when asked for."""
    harness = Harness(ros_context, WORLD, start_paused=True)
    try:
        assert state(harness) == PAUSED and harness.server.world.time.iterations == 0
        assert step(harness, 3).result == Result.RESULT_OK
        assert harness.server.world.time.iterations == 3 and state(harness) == PAUSED
        assert set_state(harness, STOPPED).result == Result.RESULT_OK and state(harness) == STOPPED
        assert step(harness, 1).result == Result.RESULT_OK and state(harness) == PAUSED  # a step leaves STOPPED
    finally:
        harness.close()


def test_stopped_leaves_for_paused_by_a_pause_and_returns_by_a_reset_of_time(harness) -> None:
    """STOPPED is paused and reset with nothing since: the Flatland-style pause makes it PAUSED as
    set_simulation_state PAUSED does; a reset of time while paused makes it STOPPED again, and a
    reset of the state alone does not."""
    from simulation_interfaces.srv import ResetSimulation
    from std_srvs.srv import Empty

    assert set_state(harness, STOPPED).result == Result.RESULT_OK
    harness.call(Empty, "/pause", Empty.Request())
    assert state(harness) == PAUSED
    reset = ResetSimulation.Request
    assert harness.call(ResetSimulation, "/sim_server/reset_simulation", reset(scope=reset.SCOPE_STATE)).result.result == Result.RESULT_OK
    assert state(harness) == PAUSED
    assert harness.call(ResetSimulation, "/sim_server/reset_simulation", reset(scope=reset.SCOPE_TIME)).result.result == Result.RESULT_OK
    assert state(harness) == STOPPED
    harness.call(Empty, "/resume", Empty.Request())
    assert state(harness) == PLAYING


def test_every_requested_state_gets_an_answer(harness) -> None:
    """All 256 values of the uint8 (but QUITTING: see below): each is carried out or refused with
    the standard's code; the server runs on and its state is always one of the three it can be in."""
    world = harness.server.world
    for value in range(256):
        if value == SimulationState.STATE_QUITTING:
            continue
        result = set_state(harness, value)
        assert result.result in (Result.RESULT_OK, *range(Result.RESULT_FEATURE_UNSUPPORTED, 5), 101, 103)
        if value > SimulationState.STATE_LOADING_WORLD:
            assert result.result == Result.RESULT_OPERATION_FAILED and f"unknown state {value}" in result.error_message
        if value in (SimulationState.STATE_NO_WORLD, SimulationState.STATE_LOADING_WORLD):
            assert result.result == Result.RESULT_FEATURE_UNSUPPORTED
        assert state(harness) in (PLAYING, PAUSED, STOPPED)
    assert (state(harness) == PLAYING) == (not world.time.paused)


def test_stepping(harness) -> None:
    world = harness.server.world
    playing = step(harness, 1)
    assert playing.result == Result.RESULT_OPERATION_FAILED and "pause it" in playing.error_message
    assert set_state(harness, PAUSED).result == Result.RESULT_OK
    before = world.time.iterations
    assert step(harness, 1).result == Result.RESULT_OK and world.time.iterations == before + 1
    assert step(harness, 250).result == Result.RESULT_OK and world.time.iterations == before + 251
    rng = np.random.default_rng(0)
    for steps in [0, limits.MAX_STEPS_PER_REQUEST + 1, 2**64 - 1, *rng.integers(limits.MAX_STEPS_PER_REQUEST + 1, 2**63, 5)]:
        refused = step(harness, int(steps))
        assert refused.result == Result.RESULT_OPERATION_FAILED and "steps must be" in refused.error_message
    assert world.time.iterations == before + 251 and world.time.paused


def test_quitting_ends_the_loop_after_answering(harness) -> None:
    client = harness.client.create_client(SetSimulationState, "/sim_server/set_simulation_state")
    harness.run_until(client.service_is_ready, "the service")
    future = client.call_async(SetSimulationState.Request(state=SimulationState(state=SimulationState.STATE_QUITTING)))
    deadline = time.monotonic() + WAIT_LIMIT
    harness.server.run(harness.executor, stop=lambda: time.monotonic() > deadline)  # returns as the server quits
    assert harness.server._stop_requested  # noqa: SLF001 - the loop ended because it was asked to
    harness.executor.spin_until_future_complete(future, timeout_sec=WAIT_LIMIT)
    assert future.done() and future.result().result.result == Result.RESULT_OK
    assert harness.server.world.time.paused and harness.server.world.time.time_ns == 0  # stopped first


def test_reset_scopes(harness) -> None:
    """Every scope value: its bits reset time, state (poses, at rest) and spawned entities, each
    alone or together; 0 and 255 are all three; undefined bits are refused and change nothing."""
    from simulation_interfaces.srv import ResetSimulation

    from sim_server.core.format.model_file import load_model_text
    from sim_server.core.geometry import Pose2D

    world = harness.server.world
    disc = load_model_text(DISC, WORLD.parent / "disc.model.yaml")
    Scope = ResetSimulation.Request
    for scope in range(256):
        if "extra" not in world.models:
            world.add_model(disc, "extra", pose=Pose2D(5.0, 5.0, 0.0))
        world.move_model("extra", Pose2D(6.0, 5.0, 1.0))
        world.move_model("chair1", Pose2D(-4.0, -4.0, 0.5))  # from the world file, at (1.2, 3.5, 2.123)
        world.models["turtlebot1"].set_twist(0.3, 0.0, 0.0)
        harness.run_until(lambda: world.time.iterations > 3, "steps")
        chair = world.models["chair1"]
        result = harness.call(ResetSimulation, "/sim_server/reset_simulation", ResetSimulation.Request(scope=scope)).result
        bits = Scope.SCOPE_TIME | Scope.SCOPE_STATE | Scope.SCOPE_SPAWNED if scope in (0, 255) else scope
        if bits & ~7:
            assert result.result == Result.RESULT_FEATURE_UNSUPPORTED and f"scope {scope}" in result.error_message
            assert world.time.iterations > 3 and "extra" in world.models and world.models["chair1"].pose.x == pytest.approx(-4.0)
            continue
        assert result.result == Result.RESULT_OK, (scope, result)
        assert (world.time.iterations == 0) == bool(bits & Scope.SCOPE_TIME), scope
        assert ("extra" not in world.models) == bool(bits & Scope.SCOPE_SPAWNED), scope
        assert (world.models["chair1"] is not chair) == (bits == 7), scope  # only a full reset makes it anew
        restored = bool(bits & Scope.SCOPE_STATE)
        pose = world.models["chair1"].pose
        assert ((pose.x, pose.y, pose.theta) == pytest.approx((1.2, 3.5, 2.123), abs=1e-5)) == restored, (scope, pose)
        speed = world.models["turtlebot1"].first_body.physics_body.linearVelocity.x
        assert (speed == 0.0) == restored, (scope, speed)
        if "extra" in world.models:
            pose = world.models["extra"].pose
            assert ((pose.x, pose.y, pose.theta) == pytest.approx((5.0, 5.0, 0.0), abs=1e-5)) == restored, (scope, pose)


def action_graph(harness: Harness) -> str:
    """What the client node sees of the simulate_steps action in the ROS graph: for each of its
    services the request readers and reply writers (node, gid), for its topics the publishers."""
    node, base = harness.client, "sim_server/simulate_steps/_action/"
    seen = []

    def endpoints(infos) -> str:
        return "[" + ", ".join(f"{i.node_namespace.rstrip('/')}/{i.node_name}:{bytes(i.endpoint_gid[8:16]).hex()}" for i in infos) + "]"

    for name in ("send_goal", "cancel_goal", "get_result"):
        readers = node.get_subscriptions_info_by_topic(f"rq/{base}{name}Request", no_mangle=True)
        writers = node.get_publishers_info_by_topic(f"rr/{base}{name}Reply", no_mangle=True)
        seen.append(f"{name}: request readers {endpoints(readers)}, reply writers {endpoints(writers)}")
    for name in ("feedback", "status"):
        seen.append(f"{name}: publishers {endpoints(node.get_publishers_info_by_topic('/' + base + name))}")
    return "; ".join(seen)


def send_goal(harness: Harness, steps: int, cancel_after: int | None = None):
    """Send a SimulateSteps goal; returns (status, result, feedback received)."""
    from rclpy.action import ActionClient
    from simulation_interfaces.action import SimulateSteps

    client = ActionClient(harness.client, SimulateSteps, "/sim_server/simulate_steps")
    try:
        harness.run_until(client.server_is_ready, "the action server")
    except AssertionError as exc:  # say what the client saw of the server (a rare failure in long runs)
        client.destroy()
        raise AssertionError(f"{exc}; {action_graph(harness)}") from None
    feedback = []
    sent = client.send_goal_async(SimulateSteps.Goal(steps=steps), feedback_callback=lambda m: feedback.append(m.feedback))
    harness.run_until(sent.done, "the goal's acceptance")
    goal = sent.result()
    assert goal.accepted
    if cancel_after is not None:
        harness.run_until(lambda: len(feedback) >= cancel_after, "feedback before cancelling")
        cancelling = goal.cancel_goal_async()
        harness.run_until(cancelling.done, "the cancel's answer")
    result = goal.get_result_async()
    harness.run_until(result.done, "the goal's result")
    client.destroy()
    return result.result().status, result.result().result.result, feedback


def test_simulate_steps_action(harness) -> None:
    from action_msgs.msg import GoalStatus

    world = harness.server.world
    status, result, _ = send_goal(harness, 5)
    assert status == GoalStatus.STATUS_ABORTED and result.result == Result.RESULT_OPERATION_FAILED  # playing
    assert "pause it" in result.error_message
    assert set_state(harness, PAUSED).result == Result.RESULT_OK
    before = world.time.iterations
    status, result, feedback = send_goal(harness, 40)
    assert status == GoalStatus.STATUS_SUCCEEDED and result.result == Result.RESULT_OK
    assert world.time.iterations == before + 40
    # Feedback after each step: the feedback topic keeps the last 10 (the action's default QoS),
    # so a client reading after many steps gets the latest of them, in order, ending at the last.
    received = [(f.completed_steps, f.remaining_steps) for f in feedback]
    first = received[0][0]
    assert received == [(n, 40 - n) for n in range(first, 41)] and len(received) >= 10
    for steps in (0, limits.MAX_STEPS_PER_REQUEST + 1, 2**64 - 1):
        status, result, _ = send_goal(harness, steps)
        assert status == GoalStatus.STATUS_ABORTED and "steps must be" in result.error_message
    assert world.time.iterations == before + 40


def test_simulate_steps_cancelled(harness) -> None:
    from action_msgs.msg import GoalStatus

    world = harness.server.world
    assert set_state(harness, PAUSED).result == Result.RESULT_OK
    before = world.time.iterations
    status, result, feedback = send_goal(harness, limits.MAX_STEPS_PER_REQUEST, cancel_after=3)
    assert status == GoalStatus.STATUS_CANCELED and "cancelled" in result.error_message
    done = world.time.iterations - before
    assert 3 <= done < limits.MAX_STEPS_PER_REQUEST and f"stopped after {done} of" in result.error_message
    assert feedback[-1].completed_steps <= done


def test_destroyed_node_leaves_no_action_server(ros_context) -> None:
    """rclpy's destroy_node leaves action servers to the garbage collector; the server's own
    destroy_node takes its simulate_steps action server (and its DDS endpoints) down at once."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from test.ros.conftest import make_server

    status = "/sim_server/simulate_steps/_action/status"
    server = make_server(ros_context, world_path=str(WORLD), update_rate=0.0, show_viz=False)
    probe = Node("probe", context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(probe)

    def wait_for(count: int) -> int:
        deadline = time.monotonic() + WAIT_LIMIT
        while probe.count_publishers(status) != count and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        return probe.count_publishers(status)

    try:
        assert wait_for(1) == 1
        server.destroy_node()
        assert wait_for(0) == 0, "the destroyed server's action server is still in the graph"
    finally:
        executor.shutdown(timeout_sec=0)
        probe.destroy_node()
