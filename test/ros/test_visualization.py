"""Debug markers: the all-layers and all-models topics, frame-locked markers, line width, deletes."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import Pose2D, Vector3
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.srv import DeleteModel, MoveModel, SetPerformer, SpawnModel
from sim_server.ros.parameter_spec import DEFAULT_MARKER_LINE_WIDTH
from sim_server.ros.visualization import VIZ_FRAME, Wire, wire
from test.conftest import DATA_DIR, LOAD_WORLD_TESTS
from test.ros.conftest import Harness
from test.ros.test_server_node import LATCHED

LAYERS = "/sim_server/debug/layers"
MODELS = "/sim_server/debug/models"
LINES = (Marker.LINE_LIST, Marker.LINE_STRIP)


class Collector:
    """Every MarkerArray received on the topics subscribed through it, by topic."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.messages: dict[str, list[MarkerArray]] = defaultdict(list)

    def watch(self, *topics: str) -> "Collector":
        for topic in topics:
            self.harness.client.create_subscription(MarkerArray, topic, self.messages[topic].append, LATCHED)
        return self

    def last(self, topic: str) -> MarkerArray:
        return self.messages[topic][-1]

    def wait(self, topic: str, condition=lambda array: True, what: str = "markers") -> MarkerArray:
        """Run the server until the newest message on ``topic`` satisfies ``condition``."""
        self.harness.run_until(lambda: bool(self.messages[topic]) and condition(self.messages[topic][-1]), what)
        return self.messages[topic][-1]

    def all_markers(self):
        for arrays in self.messages.values():
            for array in arrays:
                yield from array.markers


def added(array: MarkerArray) -> dict[str, list[Marker]]:
    """The ADD markers of an array by namespace."""
    result: dict[str, list[Marker]] = defaultdict(list)
    for marker in array.markers:
        if marker.action == Marker.ADD:
            result[marker.ns].append(marker)
    return result


def deleted(array: MarkerArray) -> dict[str, set[int]]:
    result: dict[str, set[int]] = defaultdict(set)
    for marker in array.markers:
        if marker.action == Marker.DELETE:
            result[marker.ns].add(marker.id)
    return result


def check_array(array: MarkerArray) -> None:
    """What RViz needs of a MarkerArray: unique (ns, id), no empty or odd line lists, unit quaternions."""
    keys = [(marker.ns, marker.id) for marker in array.markers if marker.action in (Marker.ADD, Marker.DELETE)]
    assert len(keys) == len(set(keys)), "duplicate (ns, id)"
    for marker in array.markers:
        if marker.action != Marker.ADD:
            continue
        if marker.type in LINES:
            assert len(marker.points) >= 2
        if marker.type == Marker.LINE_LIST:
            assert len(marker.points) % 2 == 0
        q = marker.pose.orientation
        assert q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w == pytest.approx(1.0)


def count_rounds(harness: Harness) -> list[int]:
    """Count the refresh rounds of the server's markers (wraps publish_models)."""
    visualization = harness.server.visualization
    rounds = [0]
    original = visualization.publish_models

    def counted() -> None:
        original()
        rounds[0] += 1

    visualization.publish_models = counted
    return rounds


# ---------------------------------------------------------------------------------- wire format
def test_joined_marker_bytes_deserialize_to_the_markers() -> None:
    Wire().self_check()
    codec = wire()
    rng = random.Random(5)
    for _ in range(30):
        made, expected = [], []
        for index in range(rng.randint(0, 6)):
            frame = "".join(rng.choice("ab_ü") for _ in range(rng.randint(0, 9)))
            namespace = "".join(rng.choice("xy/地") for _ in range(rng.randint(0, 9)))
            marker = Marker(ns=namespace, id=index, type=rng.choice([Marker.CYLINDER, Marker.LINE_STRIP, Marker.LINE_LIST]))
            marker.header.frame_id = frame
            marker.header.stamp.sec, marker.header.stamp.nanosec = rng.randint(0, 99), rng.randint(0, 999)
            marker.frame_locked = rng.random() < 0.5
            marker.scale.x = rng.choice([0.05, 0.1, 0.25])
            marker.color.r, marker.color.a = 0.5, 1.0
            marker.pose.position.x, marker.pose.orientation.w = rng.uniform(-5, 5), 1.0
            points = np.array([[rng.uniform(-9, 9), rng.uniform(-9, 9), 0.0] for _ in range(rng.choice([2, 4, 5]))])
            copy = deserialize_message(serialize_message(marker), Marker)
            copy.points = [type(copy.pose.position)(x=p[0], y=p[1], z=p[2]) for p in points]
            expected.append(copy)
            made.append(codec.marker(marker, points=points))
        joined = codec.message(made)
        assert deserialize_message(joined, MarkerArray) == MarkerArray(markers=expected)


# ---------------------------------------------------------------------------------- content
def test_all_topics_hold_every_layer_and_model_with_the_line_width(ros_context) -> None:
    harness = Harness(ros_context, LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", show_viz=True, marker_line_width=0.25)
    try:
        markers = Collector(harness).watch(LAYERS, MODELS, "/sim_server/debug/model/turtlebot1", "/sim_server/debug/layer/lines")
        layers = markers.wait(LAYERS)
        models = markers.wait(MODELS)
        world = harness.server.world
        # Layers: one line list per layer with walls, a DELETE for the one without a map.
        assert {m.ns for m in layers.markers} == {layer.name for layer in world.layers}
        by_ns = {m.ns: m for m in layers.markers}
        assert by_ns["robot"].action == Marker.DELETE
        for name in ("2d", "3d", "lines"):
            marker = by_ns[name]
            assert marker.action == Marker.ADD and marker.type == Marker.LINE_LIST and marker.id == 0
            assert marker.header.frame_id == VIZ_FRAME and marker.scale.x == 0.25
            assert len(marker.points) == 2 * len(world.layer(name).loaded_edges())
        # Models: one namespace per model, ids 0..n-1, the same markers as on the model's own topic.
        namespaces = added(models)
        assert set(namespaces) == set(world.models)
        for name, items in namespaces.items():
            assert sorted(m.id for m in items) == list(range(len(items)))
        own = markers.wait("/sim_server/debug/model/turtlebot1")
        assert [(m.id, m.type, m.header.frame_id, m.points) for m in own.markers] == [
            (m.id, m.type, m.header.frame_id, m.points) for m in namespaces["turtlebot1"]
        ]
        markers.wait("/sim_server/debug/layer/lines")
        for array in (layers, models, own, markers.last("/sim_server/debug/layer/lines")):
            check_array(array)
        lines = [m for m in markers.all_markers() if m.action == Marker.ADD and m.type in LINES]
        assert lines and all(m.scale.x == 0.25 for m in lines)  # layers, outlines and joints
        assert {m.type for m in lines} == {Marker.LINE_LIST, Marker.LINE_STRIP}
    finally:
        harness.close()


def test_latecomer_gets_the_current_state_in_one_message(ros_context) -> None:
    harness = Harness(ros_context, LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", show_viz=True)
    try:
        early = Collector(harness).watch(MODELS)
        early.wait(MODELS)
        assert harness.call(DeleteModel, "/delete_model", DeleteModel.Request(name="chair1")).success
        spawned = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="person.model.yaml", name="late1"))
        assert spawned.success, spawned.message
        early.wait(MODELS, lambda a: "late1" in added(a) and "chair1" not in added(a), "the spawn and delete")
        harness.server.visualization.publish_models = lambda: None  # nothing new after this point
        late = Collector(harness).watch(MODELS)
        first = late.wait(MODELS)
        expected = set(harness.server.world.models)
        assert set(added(first)) == expected and "late1" in expected and "chair1" not in expected
        assert not any(m.action == Marker.DELETEALL for m in first.markers)
        assert len(late.messages[MODELS]) == 1  # depth 1: the state, not a history
        lines = [m for m in first.markers if m.action == Marker.ADD and m.type in LINES]
        assert lines and all(m.scale.x == DEFAULT_MARKER_LINE_WIDTH for m in lines)
        check_array(first)
    finally:
        harness.close()


def test_delete_removes_only_that_models_markers(ros_context) -> None:
    harness = Harness(ros_context, LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", show_viz=True)
    try:
        markers = Collector(harness).watch(MODELS, "/sim_server/debug/model/turtlebot2")
        before = added(markers.wait(MODELS))
        count = len(before["turtlebot2"])
        assert count > 2
        assert harness.call(DeleteModel, "/delete_model", DeleteModel.Request(name="turtlebot2")).success
        after = markers.wait(MODELS, lambda a: "turtlebot2" not in added(a), "the delete")
        assert deleted(after) == {"turtlebot2": set(range(count))}
        assert not any(m.action == Marker.DELETEALL for m in after.markers)
        assert set(added(after)) == set(before) - {"turtlebot2"}
        own = markers.wait("/sim_server/debug/model/turtlebot2", lambda a: a.markers[0].action == Marker.DELETEALL)
        assert len(own.markers) == 1
        # Back by the same name with fewer markers: its ids drawn again, the others still deleted.
        spawned = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="person.model.yaml", name="turtlebot2"))
        assert spawned.success, spawned.message
        again = markers.wait(MODELS, lambda a: "turtlebot2" in added(a), "the model back")
        drawn = {m.id for m in added(again)["turtlebot2"]}
        assert drawn == set(range(len(drawn))) and len(drawn) < count
        assert deleted(again) == {"turtlebot2": set(range(len(drawn), count))}
        check_array(again)
    finally:
        harness.close()


# ---------------------------------------------------------------------------------- frame lock
def _write_tf_world(folder: Path) -> Path:
    (folder / "arm.model.yaml").write_text(
        """
bodies:
  - name: base
    footprints:
      - {type: polygon, points: [[-0.5, -0.3], [0.5, -0.3], [0.5, 0.3], [-0.5, 0.3]], density: 1}
  - name: arm
    pose: [0.8, 0, 0]
    footprints:
      - {type: circle, radius: 0.2, center: [0.1, 0], density: 1}
joints:
  - type: revolute
    name: hinge
    bodies:
      - {name: base, anchor: [0.5, 0]}
      - {name: arm, anchor: [-0.3, 0]}
plugins:
  - {type: ModelTfPublisher, name: tf, publish_tf_world: true}
"""
    )
    (folder / "rover.model.yaml").write_text(
        """
bodies:
  - name: base
    footprints:
      - {type: circle, radius: 0.3, density: 1}
plugins:
  - {type: DiffDrive, name: drive, body: base}
  - {type: ModelTfPublisher, name: tf}
"""
    )
    (folder / "blind.model.yaml").write_text(
        """
bodies:
  - name: base
    footprints:
      - {type: circle, radius: 0.3, density: 1}
plugins:
  - {type: DiffDrive, name: drive, body: base, enable_odom_tf_pub: false}
"""
    )
    (folder / "world.yaml").write_text(
        """
properties: {}
layers:
  - {name: walls}
models:
  - {name: armed, model: arm.model.yaml, namespace: tb, pose: [0, 0, 0]}
  - {name: rover, model: rover.model.yaml, namespace: ob, pose: [3, 0, 0]}
  - {name: blind, model: blind.model.yaml, pose: [6, 0, 0]}
  - {name: twin1, model: arm.model.yaml, pose: [0, 5, 0]}
  - {name: twin2, model: arm.model.yaml, pose: [3, 5, 0]}
"""
    )
    return folder / "world.yaml"


def _frames(array: MarkerArray, model: str) -> set[tuple[str, bool]]:
    return {(m.header.frame_id, m.frame_locked) for m in added(array)[model]}


def test_markers_of_bodies_on_tf_are_frame_locked_in_the_body_frames(ros_context, tmp_path) -> None:
    harness = Harness(ros_context, _write_tf_world(tmp_path), show_viz=True)
    try:
        markers = Collector(harness).watch(MODELS, "/sim_server/debug/model/armed")
        state = markers.wait(MODELS)
        # map -> tb_base -> tb_arm from the ModelTfPublisher: footprints and the joint's two lines locked.
        armed = added(state)["armed"]
        assert _frames(state, "armed") == {("tb_base", True), ("tb_arm", True)}
        by_type = defaultdict(list)
        for marker in armed:
            by_type[marker.type].append(marker)
        circle = by_type[Marker.CYLINDER][0]
        assert circle.header.frame_id == "tb_arm" and (circle.pose.position.x, circle.pose.position.y) == (0.1, 0.0)
        assert sorted(m.header.frame_id for m in by_type[Marker.LINE_LIST]) == ["tb_arm", "tb_base"]
        # map -> ob_odom (static) -> ob_base from the DiffDrive.
        assert _frames(state, "rover") == {("ob_base", True)}
        # No TF, or two models sending the same frames (no namespaces): drawn in map.
        for model in ("blind", "twin1", "twin2"):
            assert _frames(state, model) == {(VIZ_FRAME, False)}
        assert [m.frame_locked for m in markers.wait("/sim_server/debug/model/armed").markers] == [True] * len(armed)
        # One twin gone: the other's frames have one sender again and its markers lock on them.
        assert harness.call(DeleteModel, "/delete_model", DeleteModel.Request(name="twin2")).success
        state = markers.wait(MODELS, lambda a: _frames(a, "twin1") != {(VIZ_FRAME, False)}, "twin1 to lock")
        assert _frames(state, "twin1") == {("base", True), ("arm", True)}
        check_array(state)
        # A model spawned with the same frames: twin1 goes back to map.
        spawned = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="arm.model.yaml", name="twin3"))
        assert spawned.success, spawned.message
        state = markers.wait(MODELS, lambda a: "twin3" in added(a) and _frames(a, "twin1") == {(VIZ_FRAME, False)},
                             "twin1 to unlock")
        assert _frames(state, "twin3") == {(VIZ_FRAME, False)}
        check_array(state)
    finally:
        harness.close()


def test_frame_locked_markers_are_not_sent_again_while_robots_move(ros_context, tmp_path) -> None:
    harness = Harness(ros_context, _write_tf_world(tmp_path), show_viz=True)
    try:
        world = harness.server.world
        for name in ("twin1", "twin2", "blind"):
            world.delete_model(name)
        drive = world.plugins.find(world.models["rover"], "drive")
        drive.command.linear, drive.command.angular = 1.0, 0.5
        markers = Collector(harness).watch(MODELS)
        first = markers.wait(MODELS, lambda a: set(added(a)) == {"armed", "rover"}, "the state")
        rounds = count_rounds(harness)
        start = world.models["rover"].pose
        harness.run_until(lambda: rounds[0] >= 5, "five refresh rounds")
        assert world.models["rover"].pose != start
        assert markers.last(MODELS) is first  # nothing to send: RViz moves them with TF
        # A robot without TF moves its markers in map, refreshed every round.
        spawned = harness.call(SpawnModel, "/spawn_model", SpawnModel.Request(yaml_path="blind.model.yaml", name="blind"))
        assert spawned.success
        blind = world.plugins.find(world.models["blind"], "drive")
        blind.command.linear = 1.0
        state = markers.wait(MODELS, lambda a: "blind" in added(a), "the blind robot")
        x = added(state)["blind"][0].pose.position.x
        markers.wait(MODELS, lambda a: added(a)["blind"][0].pose.position.x > x + 0.01, "its markers to follow")
    finally:
        harness.close()


# ---------------------------------------------------------------------------------- levels
def test_layers_and_levels_never_send_empty_line_lists(ros_context) -> None:
    harness = Harness(ros_context, DATA_DIR / "levels" / "world.yaml", show_viz=True, enable_levels=True, step_size=0.01)
    try:
        markers = Collector(harness).watch(LAYERS, MODELS, "/sim_server/debug/layer/walls2")
        state = markers.wait(LAYERS)
        # walls2 belongs to level L2, not loaded: a DELETE, and on its own topic only a DELETEALL.
        assert {m.ns: m.action for m in state.markers} == {"ground": Marker.ADD, "walls2": Marker.DELETE}
        own = markers.wait("/sim_server/debug/layer/walls2")
        assert [m.action for m in own.markers] == [Marker.DELETEALL]
        assert harness.call(MoveModel, "/move_model", MoveModel.Request(name="R2", pose=Pose2D(x=20.0, y=0.0))).success
        assert harness.call(SetPerformer, "/set_performer", SetPerformer.Request(name="R2", size=Vector3())).success
        state = markers.wait(LAYERS, lambda a: {m.ns: m.action for m in a.markers}["walls2"] == Marker.ADD, "L2 to load")
        assert len({m.ns: m for m in state.markers}["walls2"].points) > 0
        markers.wait(MODELS, lambda a: "M3" in added(a), "the level's models")
        assert harness.call(MoveModel, "/move_model", MoveModel.Request(name="R2", pose=Pose2D(x=-20.0, y=10.0))).success
        markers.wait(LAYERS, lambda a: {m.ns: m.action for m in a.markers}["walls2"] == Marker.DELETE, "L2 to unload")
        gone = markers.wait(MODELS, lambda a: "M3" not in added(a), "the level's models to go")
        assert "M3" in deleted(gone)
        for arrays in markers.messages.values():
            for array in arrays:
                check_array(array)
    finally:
        harness.close()


def test_markers_of_a_static_model_follow_move_model(ros_context) -> None:
    harness = Harness(ros_context, DATA_DIR / "levels" / "world.yaml", show_viz=True)
    try:
        markers = Collector(harness).watch(MODELS)
        before = added(markers.wait(MODELS, lambda a: "M4" in added(a)))["M4"][0]
        assert before.header.frame_id == VIZ_FRAME and not before.frame_locked
        rounds = count_rounds(harness)
        harness.run_until(lambda: rounds[0] >= 3, "three refresh rounds")  # static: nothing read
        moved = harness.call(MoveModel, "/move_model", MoveModel.Request(name="M4", pose=Pose2D(x=31.5, y=12.0)))
        assert moved.success
        after = markers.wait(MODELS, lambda a: added(a)["M4"][0].pose.position.x != before.pose.position.x, "M4 moved")
        marker = added(after)["M4"][0]
        assert (marker.pose.position.x, marker.pose.position.y) == pytest.approx(
            (before.pose.position.x + 1.5, before.pose.position.y + 2.0)
        )
    finally:
        harness.close()
