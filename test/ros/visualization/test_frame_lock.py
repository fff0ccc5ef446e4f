"""Frame-locked markers: bodies on TF are drawn in their frames, others in map, decided again as
models come and go."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from visualization_msgs.msg import Marker, MarkerArray

from sim_msgs.srv import DeleteModel, SpawnModel
from sim_server.ros.visualization.messages import VIZ_FRAME
from test.ros.conftest import Harness
from test.ros.visualization.conftest import MODELS, Collector, added, check_array, count_rounds


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
