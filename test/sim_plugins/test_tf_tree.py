"""One parent per TF frame: the bundled worlds and models publish a tree, and a frame given two
parents (or sent by two plugins on /tf) is reported once, naming the frame, both parents and both
plugins, however many steps run; a deleted model's frames do not make its successor warn."""

from __future__ import annotations

import logging
from collections import defaultdict
from pathlib import Path
from typing import Iterator

import pytest
from geometry_msgs.msg import Pose2D
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from sim_msgs.srv import DeleteModel, SpawnModel
from sim_server.ros.tf_broadcast import TfBroadcaster, broadcaster_for
from test.conftest import REPO_ROOT
from test.ros.conftest import Harness

TF_STATIC_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
BUNDLED_WORLDS = sorted((REPO_ROOT / "config" / "worlds").glob("*/world.yaml"))
BUNDLED_MODELS = sorted((REPO_ROOT / "config" / "worlds").glob("*/*.model.yaml"))
#: Worlds whose comments say to run them with levels (their models, layers and tiles stream).
LEVEL_WORLDS = {"levels", "tunnel"}
#: Plugins that publish TF: a model with one of them must show every body under map.
TF_PLUGINS = {"DiffDrive", "ModelTfPublisher"}
#: Steps every world runs with a /tf listener before its transforms are judged.
STEPS = 30

#: A robot whose base gets two parents: the drive's odom -> base and the ModelTfPublisher's
#: map -> base (the bundled robots before they were fixed).
TWO_PARENTS_MODEL = """
bodies:
  - name: base
    footprints:
      - {type: circle, radius: 0.3, density: 10}
plugins:
  - {type: DiffDrive, name: drive, body: base}
  - {type: ModelTfPublisher, name: tf, publish_tf_world: true}
"""

#: A robot with one parent per frame: two bodies, drive, laser, GPS and body TF.
TREE_MODEL = """
bodies:
  - name: base
    footprints:
      - {type: circle, radius: 0.3, density: 10}
  - name: mast
    footprints:
      - {type: circle, radius: 0.05, density: 1}
joints:
  - {type: weld, name: mast_weld, bodies: [{name: base, anchor: [0, 0]}, {name: mast, anchor: [0, 0]}]}
plugins:
  - {type: DiffDrive, name: drive, body: base}
  - {type: Laser, name: laser, body: mast, range: 5, angle: {min: -1, max: 1, increment: 0.5}}
  - {type: Gps, name: gps, body: base}
  - {type: ModelTfPublisher, name: tf}
"""

#: A laser whose frame is also a body published by the ModelTfPublisher, under another parent.
LASER_CLASH_MODEL = """
bodies:
  - name: base
    footprints:
      - {type: circle, radius: 0.3, density: 10}
  - name: head
    footprints:
      - {type: circle, radius: 0.05, density: 1}
joints:
  - {type: weld, name: head_weld, bodies: [{name: base, anchor: [0, 0]}, {name: head, anchor: [0, 0]}]}
plugins:
  - {type: ModelTfPublisher, name: tf, reference: base}
  - {type: Laser, name: laser, body: base, frame: mast, range: 5, angle: {min: -1, max: 1, increment: 0.5}}
  - {type: Gps, name: gps, body: head, frame: mast}
"""


class TfRecorder:
    """Every transform sent on /tf and /tf_static, as (child -> {parent}, child -> {topic})."""

    def __init__(self, client: Node) -> None:
        self.parents: dict[str, set[str]] = defaultdict(set)
        self.topics: dict[str, set[str]] = defaultdict(set)
        self.dynamic_messages = 0
        client.create_subscription(TFMessage, "/tf", lambda m: self._record(m, "/tf"), 1000)
        client.create_subscription(TFMessage, "/tf_static", lambda m: self._record(m, "/tf_static"), TF_STATIC_QOS)

    def _record(self, message: TFMessage, topic: str) -> None:
        if topic == "/tf":
            self.dynamic_messages += 1
        for item in message.transforms:
            self.parents[item.child_frame_id].add(item.header.frame_id)
            self.topics[item.child_frame_id].add(topic)

    def root_of(self, frame: str) -> str:
        """Follow the (single) parents up from ``frame`` to the root."""
        seen = {frame}
        while self.parents.get(frame):
            (frame,) = self.parents[frame]
            assert frame not in seen, f"TF loop through {frame}"
            seen.add(frame)
        return frame


class TfWarnings(logging.Handler):
    """The warnings of the TF broadcaster (through the "sim_server" logger, whatever its routing)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.module == "tf_broadcast":
            self.messages.append(record.getMessage())


@pytest.fixture
def tf_warnings() -> Iterator[TfWarnings]:
    handler = TfWarnings()
    logger = logging.getLogger("sim_server")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def world_of(folder: Path, models: list[tuple[str, Path, str]]) -> Path:
    """A world file in ``folder`` with (name, model file, namespace) entries, 3 m apart."""
    lines = ["properties: {}", "models:"]
    for index, (name, model, namespace) in enumerate(models):
        lines.append(f"  - {{name: {name}, model: '{model}', namespace: '{namespace}', pose: [{3 * index}, 0, 0]}}")
    (folder / "world.yaml").write_text("\n".join(lines) + "\n")
    return folder / "world.yaml"


def run_steps(harness: Harness, recorder: TfRecorder, steps: int) -> None:
    """Run until ``steps`` more steps were taken and at least one /tf message arrived after them
    (when the world sends any)."""
    target = harness.server.world.time.iterations + steps
    before = recorder.dynamic_messages
    broadcaster = broadcaster_for(harness.server)
    dynamic = any(
        not static for frame in broadcaster.claimed_frames for _, static in broadcaster.claims_of(frame).values()
    )
    harness.run_until(
        lambda: harness.server.world.time.iterations >= target and (not dynamic or recorder.dynamic_messages > before),
        f"{steps} steps with /tf",
    )


def assert_one_parent_each(harness: Harness, recorder: TfRecorder) -> None:
    """Every frame sent has one parent on one topic, every claimed frame was seen, and every body of
    every model that publishes TF hangs under map."""
    broadcaster = broadcaster_for(harness.server)
    harness.run_until(lambda: set(broadcaster.claimed_frames) <= set(recorder.parents), "every claimed frame on TF")
    several = {child: parents for child, parents in recorder.parents.items() if len(parents) != 1}
    assert not several, f"frames with several parents: {several}"
    both = [child for child, topics in recorder.topics.items() if len(topics) != 1]
    assert not both, f"frames on both /tf and /tf_static: {both}"
    for child in broadcaster.claimed_frames:
        claims = broadcaster.claims_of(child)
        dynamic = [owner for owner, (_, static) in claims.items() if not static]
        assert len({parent for parent, _ in claims.values()}) == 1 and len(dynamic) <= 1, (child, claims)
        assert not (dynamic and len(claims) > 1), (child, claims)
    for model in harness.server.world.models.values():
        types = {plugin.context.type_name for plugin in harness.server.world.plugins.plugins_of(model)}
        if not types & TF_PLUGINS:
            continue
        namespace = model.namespace.strip("/")
        for body in model.bodies:
            frame = f"{namespace}_{body}" if namespace else body
            assert frame in recorder.parents, f"body {body} of {model.name}: no TF for {frame}"
            assert recorder.root_of(frame) == "map", f"{frame} of {model.name} is not under map"


# ------------------------------------------------------------------------------ bundled worlds
@pytest.mark.parametrize("world_path", BUNDLED_WORLDS, ids=[path.parent.name for path in BUNDLED_WORLDS])
def test_bundled_world_has_one_parent_per_frame(ros_context, tf_warnings: TfWarnings, world_path: Path) -> None:
    levels = world_path.parent.name in LEVEL_WORLDS
    harness = Harness(ros_context, world_path, enable_levels=levels)
    try:
        recorder = TfRecorder(harness.client)
        run_steps(harness, recorder, STEPS)
        assert_one_parent_each(harness, recorder)
        assert recorder.parents, "the world sends no TF at all"
        assert tf_warnings.messages == []
    finally:
        harness.close()


def test_every_bundled_model_has_one_parent_per_frame(ros_context, tf_warnings: TfWarnings, tmp_path: Path) -> None:
    """Each bundled model file (also those no bundled world uses, as the demo's turtlebot), in a
    namespace of its own."""
    models = [(f"m{index}", path, f"m{index}") for index, path in enumerate(BUNDLED_MODELS)]
    harness = Harness(ros_context, world_of(tmp_path, models))
    try:
        recorder = TfRecorder(harness.client)
        run_steps(harness, recorder, STEPS)
        assert_one_parent_each(harness, recorder)
        namespace = {f"{path.parent.name}/{path.name}": name for name, path, _ in models}
        # The demo's turtlebot: odom_frame_id map, namespaced as <ns>_map -> base (DiffDrive).
        turtlebot = namespace["demo/turtlebot.model.yaml"]
        assert recorder.parents[f"{turtlebot}_base"] == {f"{turtlebot}_map"}
        assert recorder.parents[f"{turtlebot}_map"] == {"map"}
        assert recorder.parents[f"{turtlebot}_imu"] == {f"{turtlebot}_base"}  # its Imu
        # The demo's cleaner: base under map, the wheels under base (ModelTfPublisher).
        cleaner = namespace["demo/cleaner.model.yaml"]
        assert recorder.parents[f"{cleaner}_base"] == {"map"}
        assert recorder.parents[f"{cleaner}_front_wheel"] == {f"{cleaner}_base"}
        # The levels and tunnel robots: map -> odom -> base (DiffDrive) -> laser (REP 105).
        for path in ("levels/robot.model.yaml", "tunnel/robot.model.yaml"):
            robot = namespace[path]
            assert recorder.parents[f"{robot}_base"] == {f"{robot}_odom"}
            assert recorder.parents[f"{robot}_odom"] == {"map"}
            assert recorder.parents[f"{robot}_laser"] == {f"{robot}_base"}
        assert tf_warnings.messages == []
    finally:
        harness.close()


# ------------------------------------------------------------------------------ detection
def test_a_frame_with_two_parents_is_reported_once(ros_context, tf_warnings: TfWarnings, tmp_path: Path) -> None:
    (tmp_path / "bot.model.yaml").write_text(TWO_PARENTS_MODEL)
    harness = Harness(ros_context, world_of(tmp_path, [("bot", tmp_path / "bot.model.yaml", "bot")]))
    try:
        recorder = TfRecorder(harness.client)
        for _ in range(5):
            run_steps(harness, recorder, 20)
        assert recorder.parents["bot_base"] == {"bot_odom", "map"}  # the conflict is real on the wire
        assert len(tf_warnings.messages) == 1, tf_warnings.messages
        (message,) = tf_warnings.messages
        for fact in ('"bot_base"', '"bot_odom"', '"map"', 'plugin "drive" (type "DiffDrive") of model "bot"',
                     'plugin "tf" (type "ModelTfPublisher") of model "bot"', "two parents"):
            assert fact in message, (fact, message)
        claims = broadcaster_for(harness.server).claims_of("bot_base")
        assert {parent for parent, _ in claims.values()} == {"bot_odom", "map"}
    finally:
        harness.close()


def test_a_laser_frame_clashing_with_a_body_is_reported_naming_the_laser(
    ros_context, tf_warnings: TfWarnings, tmp_path: Path
) -> None:
    """The laser (which latches without naming itself: the broadcaster finds the calling plugin)
    and the GPS give their frame "mast" to two bodies, base and head: one warning naming both
    parents and both plugins."""
    (tmp_path / "bot.model.yaml").write_text(LASER_CLASH_MODEL)
    harness = Harness(ros_context, world_of(tmp_path, [("bot", tmp_path / "bot.model.yaml", "bot")]))
    try:
        recorder = TfRecorder(harness.client)
        run_steps(harness, recorder, 10)
        assert len(tf_warnings.messages) == 1, tf_warnings.messages
        message = tf_warnings.messages[0]
        for fact in ('"bot_mast"', '"bot_base"', '"bot_head"', 'plugin "laser" (type "Laser") of model "bot"',
                     'plugin "gps" (type "Gps") of model "bot"', "/tf_static"):
            assert fact in message, (fact, message)
    finally:
        harness.close()


def test_delete_and_respawn_do_not_warn_falsely(ros_context, tf_warnings: TfWarnings, tmp_path: Path) -> None:
    (tmp_path / "tree.model.yaml").write_text(TREE_MODEL)
    (tmp_path / "clash.model.yaml").write_text(TWO_PARENTS_MODEL)
    harness = Harness(ros_context, world_of(tmp_path, [("bot", tmp_path / "tree.model.yaml", "bot")]))
    broadcaster = broadcaster_for(harness.server)

    def spawn(model: str, name: str = "bot", namespace: str = "bot") -> None:
        request = SpawnModel.Request(yaml_path=str(tmp_path / model), name=name, ns=namespace, pose=Pose2D(x=1.0))
        response = harness.call(SpawnModel, "/spawn_model", request)
        assert response.success, response.message

    def delete(name: str = "bot") -> None:
        response = harness.call(DeleteModel, "/delete_model", DeleteModel.Request(name=name))
        assert response.success, response.message

    try:
        recorder = TfRecorder(harness.client)
        run_steps(harness, recorder, 5)
        frames = {"bot_base", "bot_odom", "bot_mast", "bot_laser", "bot_gps"}
        assert set(broadcaster.claimed_frames) == frames
        for _ in range(3):  # the same model under the same name again and again
            delete()
            assert broadcaster.claimed_frames == []
            spawn("tree.model.yaml")
            run_steps(harness, recorder, 5)
        assert set(broadcaster.claimed_frames) == frames
        # A model with a clash, replaced by a clean one of the same name: one warning, for the
        # clash only.
        delete()
        spawn("clash.model.yaml")
        assert len(tf_warnings.messages) == 1 and '"bot_base"' in tf_warnings.messages[0]
        delete()
        spawn("tree.model.yaml")
        run_steps(harness, recorder, 5)
        assert len(tf_warnings.messages) == 1
        # A second robot in another namespace, deleted and spawned again: still no new warning.
        for _ in range(2):
            spawn("tree.model.yaml", "other", "other")
            run_steps(harness, recorder, 5)
            delete("other")
        assert len(tf_warnings.messages) == 1
        assert set(broadcaster.claimed_frames) == frames
    finally:
        harness.close()


# ------------------------------------------------------------------------------ the claim API
@pytest.fixture
def broadcaster(ros_context) -> Iterator[TfBroadcaster]:
    node = Node("tf_claims", context=ros_context)
    yield TfBroadcaster(node)
    node.destroy_node()


def test_claims_report_each_conflicting_frame_once(broadcaster: TfBroadcaster, tf_warnings: TfWarnings) -> None:
    broadcaster.claim("a_base", "a_odom", "drive of a")
    broadcaster.claim("a_base", "a_odom", "drive of a")  # claiming again is no conflict
    broadcaster.claim("a_laser", "a_base", "laser of a", static=True)
    assert tf_warnings.messages == []
    broadcaster.claim("a_base", "map", "tf of a")
    broadcaster.claim("a_base", "world", "third of a")
    broadcaster.claim("a_base", "map", "tf of a")
    assert len(tf_warnings.messages) == 1
    assert all(word in tf_warnings.messages[0] for word in ('"a_base"', '"a_odom"', '"map"', "drive of a", "tf of a"))
    # One parent left: a later conflict on the frame is a new one.
    broadcaster.release("tf of a")
    broadcaster.release("third of a")
    assert broadcaster.claims_of("a_base") == {"drive of a": ("a_odom", False)}
    broadcaster.claim("a_base", "map", "tf of a")
    assert len(tf_warnings.messages) == 2


def test_shared_static_frames_are_no_conflict_but_two_senders_on_tf_are(
    broadcaster: TfBroadcaster, tf_warnings: TfWarnings
) -> None:
    # Two robots without namespace: the identity map -> odom of each is the same transform.
    broadcaster.claim("odom", "map", "drive of a", static=True)
    broadcaster.claim("odom", "map", "drive of b", static=True)
    assert tf_warnings.messages == []
    # ... but their bases are two bodies under one name.
    broadcaster.claim("base", "odom", "drive of a")
    broadcaster.claim("base", "odom", "drive of b")
    assert len(tf_warnings.messages) == 1
    assert "sent by two plugins" in tf_warnings.messages[0] and "drive of b" in tf_warnings.messages[0]
    # A static and a moving transform of one frame conflict too, even with the same parent.
    broadcaster.claim("arm", "base", "tf of a")
    broadcaster.claim("arm", "base", "laser of a", static=True)
    assert len(tf_warnings.messages) == 2 and "/tf_static" in tf_warnings.messages[1]


def test_release_forgets_only_the_owner(broadcaster: TfBroadcaster, tf_warnings: TfWarnings) -> None:
    broadcaster.claim("odom", "map", "drive of a", static=True)
    broadcaster.claim("odom", "map", "drive of b", static=True)
    broadcaster.claim("a_base", "odom", "drive of a")
    broadcaster.release("drive of a", ["a_base"])
    assert set(broadcaster.claimed_frames) == {"odom"}
    broadcaster.release("drive of a")
    assert broadcaster.claims_of("odom") == {"drive of b": ("map", True)}
    broadcaster.release("drive of b")
    broadcaster.release("nobody")
    assert broadcaster.claimed_frames == [] and tf_warnings.messages == []
