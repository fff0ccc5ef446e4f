"""The debug marker topics: every layer and model with the line width, full state for latecomers,
deletes, levels streaming layers and models in and out, moved static models."""

from __future__ import annotations

import pytest
from geometry_msgs.msg import Pose2D, Vector3
from visualization_msgs.msg import Marker

from sim_msgs.srv import DeleteModel, MoveModel, SetPerformer, SpawnModel
from sim_server.ros.parameter_spec import DEFAULT_MARKER_LINE_WIDTH
from sim_server.ros.visualization.messages import VIZ_FRAME
from test.conftest import DATA_DIR, LOAD_WORLD_TESTS
from test.ros.conftest import Harness
from test.ros.visualization.conftest import (
    LAYERS,
    LINES,
    MODELS,
    Collector,
    added,
    check_array,
    count_rounds,
    deleted,
)


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
