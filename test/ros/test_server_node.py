"""The server node in-process: /clock, pause/resume, services and debug markers."""

from __future__ import annotations

import pytest
from geometry_msgs.msg import Pose2D
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Empty
from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.msg import DebugTopicList
from sim_msgs.srv import DeleteModel, MoveModel, SpawnModel
from sim_server.core.errors import ConfigError
from test.conftest import LOAD_WORLD_TESTS
from test.ros.conftest import Harness, make_server

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


def clock_ns(msg: Clock) -> int:
    return msg.clock.sec * 1_000_000_000 + msg.clock.nanosec


def test_clock_advances_by_step_size(harness: Harness) -> None:
    received: list[int] = []
    harness.client.create_subscription(Clock, "/clock", lambda m: received.append(clock_ns(m)), 100)
    harness.run_until(lambda: len(received) >= 20, "20 clock messages")
    step_ns = 5_000_000
    assert all(t % step_ns == 0 for t in received)
    assert received == sorted(received) and len(set(received)) == len(received)
    assert harness.server.world.time.time_ns >= received[-1]


def test_pause_stops_time_and_services_still_answer(harness: Harness) -> None:
    harness.run_ticks(10)
    harness.call(Empty, "/pause", Empty.Request())
    assert harness.server.paused
    frozen = harness.server.world.time.time_ns
    harness.run_ticks(20)
    assert harness.server.world.time.time_ns == frozen
    response = harness.call(MoveModel, "/move_model", MoveModel.Request(name="turtlebot1", pose=Pose2D(x=1.0)))
    assert response.success
    assert harness.server.world.time.time_ns == frozen
    harness.call(Empty, "/resume", Empty.Request())
    harness.run_ticks(5)
    assert harness.server.world.time.time_ns > frozen
    harness.call(Empty, "/toggle_pause", Empty.Request())
    assert harness.server.paused
    harness.call(Empty, "/toggle_pause", Empty.Request())
    assert not harness.server.paused


def test_spawn_model_service(harness: Harness) -> None:
    request = SpawnModel.Request(
        yaml_path="person.model.yaml", name="spawned", ns="robot123", pose=Pose2D(x=101.1, y=102.1, theta=0.23)
    )
    response = harness.call(SpawnModel, "/spawn_model", request)
    assert response.success, response.message
    pose = harness.server.world.models["spawned"].pose
    assert (pose.x, pose.y, pose.theta) == pytest.approx((101.1, 102.1, 0.23), abs=1e-5)
    assert harness.server.world.models["spawned"].namespace == "robot123"


def test_spawn_failures_answer_false_and_server_runs_on(harness: Harness) -> None:
    missing = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="random_file.yaml", name="x"))
    assert not missing.success and "random_file.yaml" in missing.message and "does not exist" in missing.message
    duplicate = harness.call(
        SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="person.model.yaml", name="turtlebot1")
    )
    assert not duplicate.success and 'model with name "turtlebot1" already exists' in duplicate.message
    broken = harness.call(
        SpawnModel,
        "/spawn_model",
        SpawnModel.Request(yaml_path=str(LOAD_WORLD_TESTS / "model_invalid_B" / "turtlebot.model.yaml"), name="b"),
    )
    assert not broken.success and 'key "points"' in broken.message
    assert "x" not in harness.server.world.models and "b" not in harness.server.world.models
    before = harness.server.world.time.time_ns
    harness.run_ticks(5)
    assert harness.server.world.time.time_ns > before


def test_move_and_delete_services(harness: Harness) -> None:
    harness.call(Empty, "/pause", Empty.Request())  # so the overlapping test bodies stay where moved
    moved = harness.call(
        MoveModel, "/move_model", MoveModel.Request(name="turtlebot1", pose=Pose2D(x=5.5, y=9.9, theta=0.77))
    )
    assert moved.success
    pose = harness.server.world.models["turtlebot1"].pose
    assert (pose.x, pose.y, pose.theta) == pytest.approx((5.5, 9.9, 0.77), abs=1e-3)
    deleted = harness.call(DeleteModel, "/delete_model", DeleteModel.Request(name="turtlebot1"))
    assert deleted.success and "turtlebot1" not in harness.server.world.models
    for service_type, name in ((MoveModel, "/move_model"), (DeleteModel, "/delete_model")):
        response = harness.call(service_type, name, service_type.Request(name="turtlebot1"))
        assert not response.success
        assert 'model with name "turtlebot1" does not exist' in response.message


def test_move_with_nan_pose_is_refused(harness: Harness) -> None:
    response = harness.call(
        MoveModel, "/move_model", MoveModel.Request(name="turtlebot1", pose=Pose2D(x=float("nan")))
    )
    assert not response.success and "finite" in response.message


def test_debug_markers_follow_models(harness: Harness) -> None:
    topic_lists: list[list[str]] = []
    harness.client.create_subscription(DebugTopicList, "/sim_server/debug/topics", lambda m: topic_lists.append(list(m.topics)), LATCHED)
    harness.run_until(lambda: bool(topic_lists), "debug topic list")
    topics = topic_lists[-1]
    assert "/sim_server/debug/layer/layer_2d" in topics and "/sim_server/debug/layer/lines" in topics
    assert "/sim_server/debug/model/turtlebot1" in topics

    layer_arrays: list[MarkerArray] = []
    harness.client.create_subscription(MarkerArray, "/sim_server/debug/layer/layer_2d", layer_arrays.append, LATCHED)
    harness.run_until(lambda: bool(layer_arrays), "layer markers")
    clear, edges = layer_arrays[0].markers
    assert clear.action == Marker.DELETEALL and edges.type == Marker.LINE_LIST and edges.header.frame_id == "map" and len(edges.points) == 24

    model_arrays: list[MarkerArray] = []
    harness.client.create_subscription(MarkerArray, "/sim_server/debug/model/turtlebot1", model_arrays.append, LATCHED)
    harness.run_until(lambda: len(model_arrays) >= 2, "model markers")
    kinds = [marker.type for marker in model_arrays[-1].markers]
    assert kinds.count(Marker.CYLINDER) == 2 and kinds.count(Marker.LINE_STRIP) == 4 and kinds.count(Marker.LINE_LIST) == 4

    harness.call(DeleteModel, "/delete_model", DeleteModel.Request(name="turtlebot1"))
    harness.run_until(lambda: model_arrays[-1].markers[0].action == Marker.DELETEALL, "marker deletion")
    harness.run_until(lambda: "/sim_server/debug/model/turtlebot1" not in topic_lists[-1], "topic list update")

    # A model coming back by the same name draws on the same (kept) topic.
    publishers = len(list(harness.server.publishers))
    spawned = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="person.model.yaml", name="turtlebot1"))
    assert spawned.success, spawned.message
    harness.run_until(lambda: model_arrays[-1].markers[0].action == Marker.ADD, "markers of the model back")
    harness.run_until(lambda: "/sim_server/debug/model/turtlebot1" in topic_lists[-1], "topic list update")
    assert len(list(harness.server.publishers)) == publishers


def test_a_raising_callback_does_not_stop_the_server(harness: Harness) -> None:
    """A subscription callback that raises (a broken plugin's, say) is logged; the loop goes on."""
    from std_msgs.msg import Empty as EmptyMsg

    calls = []

    def broken(_message) -> None:
        calls.append(1)
        raise RuntimeError("plugin callback broke")

    harness.server.create_subscription(EmptyMsg, "/broken_input", broken, 10)
    publisher = harness.client.create_publisher(EmptyMsg, "/broken_input", 10)
    harness.run_until(lambda: publisher.get_subscription_count() > 0, "subscription match")
    publisher.publish(EmptyMsg())
    harness.run_until(lambda: len(calls) == 1, "the broken callback")
    steps = harness.server.world.time.iterations
    publisher.publish(EmptyMsg())
    harness.run_until(lambda: len(calls) == 2 and harness.server.world.time.iterations > steps + 10, "steps after it")


def test_world_path_is_required(ros_context) -> None:
    with pytest.raises(ConfigError, match='parameter "world_path" is required'):
        make_server(ros_context)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("update_rate", -1.0, 'parameter "update_rate" must be a finite number >= 0 and <= 1e.06 Hz, got -1.0'),
        ("step_size", 0.0, 'parameter "step_size" must be a finite number >= 1e-06 and <= 1 s, got 0.0'),
        ("step_size", 1e-12, 'parameter "step_size" must be a finite number >= 1e-06 and <= 1 s, got 1e-12'),
        ("viz_pub_rate", "fast", "parameter \"viz_pub_rate\" must be a finite number > 0 and <= 1e.06 Hz, got 'fast'"),
        ("seed", "abc", "parameter \"seed\" must be a whole number from 0 to 9223372036854775807, or -1 for none, got 'abc'"),
        ("seed", -2, "parameter \"seed\" must be a whole number from 0 to 9223372036854775807, or -1 for none, got -2"),
        ("enable_levels", "maybe", "parameter \"enable_levels\" must be true or false, got 'maybe'"),
        ("start_paused", 3, 'parameter "start_paused" must be true or false, got 3'),
        ("world_path", 3, 'parameter "world_path" must be the path of a world file, got 3'),
        ("resource_paths", 3, 'parameter "resource_paths" must be a string, got 3'),
        ("resource_paths", ["a", "b"], "parameter \"resource_paths\" must be a string, got \\['a', 'b'\\]"),
        ("world_path", ".", 'world file "." is a directory, not a regular file'),
    ],
)
def test_invalid_parameters(ros_context, name: str, value, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        make_server(ros_context, **{"world_path": str(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"), name: value})


def test_integer_parameters_are_accepted_and_described(ros_context) -> None:
    server = make_server(
        ros_context, world_path=str(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"), update_rate=100, show_viz=False
    )
    try:
        assert server.params.update_rate == 100.0 and server.visualization is None
        for name in ("world_path", "update_rate", "step_size", "show_viz", "viz_pub_rate"):
            descriptor = server.describe_parameter(name)
            assert descriptor.description, name
        assert "Hz" in server.describe_parameter("update_rate").description
        assert "seconds" in server.describe_parameter("step_size").description
    finally:
        server.destroy_node()


def test_param_in_world_files_reads_node_parameters(ros_context, tmp_path) -> None:
    world_file = tmp_path / "world.yaml"
    world_file.write_text(
        "properties:\n"
        "  velocity_iterations: $eval param('/sim/iterations', 3)\n"
        "  position_iterations: $eval param('/missing', 4)\n"
    )
    server = make_server(ros_context, world_path=str(world_file), **{"sim.iterations": 9})
    try:
        assert server.world.spec.velocity_iterations == 9
        assert server.world.spec.position_iterations == 4
    finally:
        server.destroy_node()
