"""The live view: a client of the protocol sees the world (walls, models, people, scans,
transforms, sim time); nothing is built for nobody; the same channels go to an MCAP file; bad
arguments are refused with a message."""

from __future__ import annotations

import logging
import math
import time
from importlib import import_module
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader

from sim_server.core import World
from sim_server.live import LiveView
from sim_server.live import scene as scene_module
from test.conftest import REPO_ROOT
from test.live.client import Client, message_class

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"
STEP = 0.005


@pytest.fixture
def world() -> World:
    made = World.from_file(CROWD_WORLD, step_size=STEP)
    yield made
    made.close()


def test_a_client_sees_walls_models_people_scans_transforms_and_time(world: World) -> None:
    with LiveView(world, port=0) as view:
        client = Client(view.url)
        try:
            assert "time" in client.server_info["capabilities"]
            topics = {"/scene", "/scene/static", "/tf", "/scan"}
            client.until(lambda: topics <= client.topics())
            client.subscribe(*topics)
            client.until(lambda: topics <= set(client.messages), between=lambda: world.step(10))
        finally:
            client.close()
    entities = {entity.id: entity for update in client.messages["/scene"] for entity in update.entities}
    still = {entity.id: entity for update in client.messages["/scene/static"] for entity in update.entities}
    assert set(still) == {"layer/2d"} and set(entities) == {"model/cleaner1", "crowd/people"}
    walls = still["layer/2d"]
    assert walls.frame_id == "map" and len(walls.lines[0].points) == 2 * len(world.layers[0].world_edges())
    assert entities["model/cleaner1"].lines  # its polygon footprints, outlined
    people = entities["crowd/people"].cylinders
    assert len(people) == world.crowds.named("people").people.count == 55
    transforms = client.messages["/tf"][-1].transforms
    tree = {t.child_frame_id: t.parent_frame_id for t in transforms}  # as the ROS node names the frames
    assert tree["base"] == "map" and tree["laser_front"] == "base"
    scan = client.messages["/scan"][-1]
    laser = world.plugins.find(world.models["cleaner1"], "laser_front") if _has(world, "laser_front") else _laser(world)
    assert len(scan.ranges) == laser.scanner.beam_count
    assert np.nanmin(np.array(scan.ranges)) > 0.0 and math.isclose(scan.end_angle - scan.start_angle, laser.angle_max - laser.angle_min)
    assert client.times and client.times[-1] <= world.time.time_ns  # sim time, never ahead


def test_a_client_sees_the_camera_s_pictures_and_the_odometry(world: World) -> None:
    camera = next(p for p in world.plugins.plugins_of(world.models["cleaner1"]) if hasattr(p, "last_image"))
    topics = ("/image_raw", "/odometry/filtered", "/odometry/ground_truth")
    with LiveView(world, port=0) as view:
        client = Client(view.url)
        try:
            client.until(lambda: set(topics) <= client.topics())
            client.subscribe(*topics)
            client.until(lambda: set(topics) <= set(client.messages), between=lambda: world.step(10))
        finally:
            client.close()
    image = client.messages["/image_raw"][-1]
    assert (image.height, image.width, image.encoding, image.frame_id) == (*camera.last_image.shape[:2], "rgb8", camera.frame_id)
    odometry = client.messages["/odometry/filtered"][-1]  # nav_msgs/Odometry (CDR): Foxglove draws it
    assert odometry.header.frame_id == "map" and odometry.child_frame_id == "base"  # the cleaner's odom_frame_id: map
    assert abs(odometry.pose.pose.position.x - 12.0) < 1.0


def _has(world: World, name: str) -> bool:
    return any(getattr(p, "scanner", None) is not None and p.context.name == name
               for p in world.plugins.plugins_of(world.models["cleaner1"]))


def _laser(world: World):
    return next(p for p in world.plugins.plugins_of(world.models["cleaner1"]) if hasattr(p, "scanner"))


def test_scans_are_the_lasers_own(world: World, tmp_path: Path) -> None:
    """The laser's own scans (its noise, its rate), in its body's frame at its origin, stamped
    when made."""
    path = tmp_path / "run.mcap"
    laser = _laser(world)
    with LiveView(world, port=None, record=path, rate=1000.0):
        world.step(1)
        made, expected = laser.last_scan_ns, laser.last_ranges.copy()
    with path.open("rb") as stream:
        schema, _, message = next(make_reader(stream).iter_messages(topics=["/scan"]))
        scan = message_class(schema.name, schema.data).FromString(message.data)
    assert np.array_equal(np.array(scan.ranges), expected.astype(np.float64), equal_nan=True)
    assert scan.frame_id == laser.frame_id == "laser_front"  # the laser's frame, as on ROS
    assert (scan.timestamp.seconds * 10**9 + scan.timestamp.nanos, message.log_time) == (made, made)
    assert scan.pose.position.x == 0.0


def test_nothing_is_built_for_nobody(world: World, monkeypatch) -> None:
    calls = []
    builders = {"feed": ("layer_entity", "model_entity", "crowd_entity", "frame_transforms"),
                "sensors": ("laser_scan", "odometry_cdr", "image_cdr")}
    for module, names in builders.items():
        for name in names:
            original = getattr(import_module(f"sim_server.live.{module}"), name)
            monkeypatch.setattr(f"sim_server.live.{module}.{name}",
                                lambda *a, _o=original, _n=name: calls.append(_n) or _o(*a))
    with LiveView(world, port=0):
        world.step(100)
    assert calls == []


def test_a_recording_holds_every_channel_and_replays_the_run(world: World, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    with LiveView(world, port=None, record=path, rate=20.0):
        world.step(200)  # 1 s of sim time: the start and 20 updates
    with path.open("rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        topics = {channel.topic for channel in summary.channels.values()}
        assert topics == {"/scene", "/scene/static", "/tf", "/scan", "/image_raw", "/odometry/filtered",
                          "/odometry/ground_truth"}
        counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
        assert counts["/tf"] == 21 and counts["/scan"] == 40  # every scan of the 40 Hz laser
        times = [message.log_time for _, _, message in reader.iter_messages(topics=["/tf"])]
    assert times == list(range(0, 1_000_000_001, 50_000_000))  # sim time (ns): the start, then every 1/20 s


def test_a_recording_ended_before_any_step_holds_the_world_as_it_began(world: World, tmp_path: Path) -> None:
    """A run stopped at once (a stop signal as the server starts, a paused world) still leaves
    a whole recording: the scene and the tree at the start time."""
    path = tmp_path / "run.mcap"
    world.time.paused = True
    with LiveView(world, port=None, record=path) as view:
        assert view.updates == 1
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/scene"] == counts["/scene/static"] == counts["/tf"] == 1
    assert summary.statistics.message_start_time == summary.statistics.message_end_time == 0


def test_a_view_that_cannot_start_leaves_the_recording_s_name_as_it_was(world: World, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    path.write_bytes(b"what was there")
    with LiveView(world, port=0) as first:
        with pytest.raises(ValueError, match="cannot serve on"):
            LiveView(world, port=first.port, record=path)
    assert path.read_bytes() == b"what was there" and [p.name for p in tmp_path.iterdir()] == ["run.mcap"]


def test_a_recording_in_ros2_encoding_is_what_ros_tools_read(world: World, tmp_path: Path) -> None:
    """``record_encoding="ros2"``: /tf, /clock and the scans are ROS 2 messages (CDR, ros2msg
    schemas) that mcap-ros2-support decodes: every scan as the laser made it, in its frame, the
    tree as the ROS node names it; the scene stays Foxglove's."""
    from mcap_ros2.decoder import DecoderFactory

    path = tmp_path / "run.mcap"
    laser = _laser(world)
    made = []
    with LiveView(world, port=None, record=path, rate=20.0, record_encoding="ros2"):
        for _ in range(200):
            world.step()
            if laser.last_scan_ns >= 0 and (not made or made[-1][0] != laser.last_scan_ns):
                made.append((laser.last_scan_ns, laser.last_ranges.copy()))
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        channels = {c.topic: (c.message_encoding, reader.get_summary().schemas[c.schema_id].name)
                    for c in reader.get_summary().channels.values()}
        assert channels == {"/scene": ("protobuf", "foxglove.SceneUpdate"), "/scene/static": ("protobuf", "foxglove.SceneUpdate"),
                            "/tf": ("cdr", "tf2_msgs/msg/TFMessage"),
                            "/clock": ("cdr", "rosgraph_msgs/msg/Clock"), "/scan": ("cdr", "sensor_msgs/msg/LaserScan"),
                            "/image_raw": ("cdr", "sensor_msgs/msg/Image"),
                            "/odometry/filtered": ("cdr", "nav_msgs/msg/Odometry"),
                            "/odometry/ground_truth": ("cdr", "nav_msgs/msg/Odometry")}
        decoded = {topic: [(m.log_time, d) for _, _, m, d in reader.iter_decoded_messages(topics=[topic])]
                   for topic in ("/tf", "/clock", "/scan", "/image_raw", "/odometry/ground_truth")}
    assert len(decoded["/scan"]) == len(made) == 40
    for (log_time, scan), (made_ns, ranges) in zip(decoded["/scan"], made):
        assert log_time == made_ns == scan.header.stamp.sec * 10**9 + scan.header.stamp.nanosec
        assert scan.header.frame_id == "laser_front" and scan.angle_min == pytest.approx(laser.angle_min)
        assert np.array_equal(np.array(scan.ranges, dtype=np.float32), ranges, equal_nan=True)
    tree = {t.child_frame_id: t.header.frame_id for t in decoded["/tf"][-1][1].transforms}
    assert (tree["base"], tree["laser_front"]) == ("map", "base") and set(tree.values()) == {"map", "base"}
    assert [t for t, _ in decoded["/clock"]] == [m.clock.sec * 10**9 + m.clock.nanosec for _, m in decoded["/clock"]]
    camera = next(p for p in world.plugins.plugins_of(world.models["cleaner1"]) if hasattr(p, "last_image"))
    image = decoded["/image_raw"][-1][1]
    assert (image.height, image.width, image.encoding) == (*camera.last_image.shape[:2], "rgb8")
    assert bytes(image.data) == camera.last_image.tobytes() and image.header.frame_id == camera.frame_id
    truth = decoded["/odometry/ground_truth"][-1][1]
    assert truth.header.frame_id == "map" and truth.child_frame_id == "base"
    assert truth.pose.pose.position.x == pytest.approx(world.models["cleaner1"].pose.x, abs=0.05)


def _scene_updates(path: Path, topic: str = "/scene") -> list:
    with path.open("rb") as stream:
        return [message_class(schema.name, schema.data).FromString(message.data)
                for schema, _, message in make_reader(stream).iter_messages(topics=[topic], log_time_order=False)]


def test_each_scene_message_is_the_whole_scene_so_a_model_that_leaves_is_gone(world: World, tmp_path: Path) -> None:
    """Every message of either scene topic deletes what its topic showed and holds all of its
    part: the newest alone is the scene (for a new subscriber, or a player seeking in a file)."""
    path = tmp_path / "run.mcap"
    with LiveView(world, port=None, record=path):
        world.step(20)
        world.delete_model("cleaner1")
        world.step(20)
    updates = _scene_updates(path)
    assert all([d.type for d in update.deletions] == [1] for update in updates)  # ALL, first
    ids = [{e.id for e in update.entities} for update in updates]
    assert ids[0] == {"model/cleaner1", "crowd/people"} and ids[-1] == {"crowd/people"}
    still = _scene_updates(path, "/scene/static")
    assert len(still) == 1 and {e.id for e in still[0].entities} == {"layer/2d"}


def test_closing_leaves_the_step_loop_and_may_be_repeated(world: World) -> None:
    hooks = list(world.after_step_hooks)
    view = LiveView(world, port=0)
    assert len(world.after_step_hooks) == len(hooks) + 1
    view.close()
    view.close()
    assert world.after_step_hooks == hooks and view.url is None
    world.step(10)


@pytest.mark.parametrize(
    ("arguments", "fault"),
    [
        ({"port": -1}, "port"), ({"port": 70000}, "port"), ({"port": "8765"}, "port"), ({"port": True}, "port"),
        ({"rate": 0.0}, "rate"), ({"rate": math.inf}, "rate"), ({"rate": math.nan}, "rate"), ({"rate": "fast"}, "rate"),
        ({"host": ""}, "host"), ({"host": None}, "host"), ({"host": "x" * 300}, "host"),
        ({"port": None}, "port to serve on"), ({"host": "256.1.1.1", "port": 0}, "cannot serve"),
        ({"port": None, "record": "never-made.mcap", "record_encoding": "cdr"}, "record_encoding"),
    ],
)
def test_bad_arguments_are_refused_naming_them(world: World, arguments: dict, fault: str) -> None:
    hooks = list(world.after_step_hooks)
    with pytest.raises(ValueError, match=fault):
        LiveView(world, **arguments)
    assert world.after_step_hooks == hooks


def test_a_port_in_use_is_refused(world: World) -> None:
    with LiveView(world, port=0) as first:
        with pytest.raises(ValueError, match=f"cannot serve on 127.0.0.1:{first.port}"):
            LiveView(world, port=first.port)


def test_the_record_program_writes_an_mcap_log(tmp_path: Path) -> None:
    from sim_server.record import main

    out = tmp_path / "run.mcap"
    assert main([str(CROWD_WORLD), "--seconds", "0.5", "--out", str(out), "--fps", "20"]) == 0
    with out.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/tf"] == 11 and counts["/scene"] == 11  # at the start, then every 0.05 s of sim time
    assert not list(tmp_path.glob(".run.partial-*"))


@pytest.mark.parametrize(
    ("arguments", "fault"),
    [(["--seconds", "-1"], "seconds"), (["--fps", "0"], "rate"), (["--out", "/nonexistent/run.mcap"], "folder")],
)
def test_bad_mcap_recordings_are_refused_in_one_line(tmp_path: Path, capsys, arguments: list, fault: str) -> None:
    from sim_server.record import main

    out = ["--out", str(tmp_path / "run.mcap")] if "--out" not in arguments else []
    assert main([str(CROWD_WORLD), "--seconds", "0.1", *out, *arguments]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and fault in error[0] and "Traceback" not in error[0]
    assert not (tmp_path / "run.mcap").exists()


def test_another_world_replaces_the_first_in_the_view(world: World, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    other = World.from_file(REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml", step_size=STEP)
    try:
        with LiveView(world, port=None, record=path) as view:
            world.step(20)
            view.use_world(other)
            assert view.world is other and view._after_step in other.after_step_hooks
            assert view._after_step not in world.after_step_hooks
            other.step(20)
    finally:
        other.close()
    # (in the order written: the new world's sim time starts again at 0)
    moving = [{e.id for e in update.entities} for update in _scene_updates(path)]
    still = [{e.id for e in update.entities} for update in _scene_updates(path, "/scene/static")]
    assert "crowd/people" in moving[0] and "crowd/people" not in moving[-1] and moving[-1]
    assert len(still) == 2 and still[0] != still[-1] and any(i.startswith("layer/") for i in still[-1])


def test_a_model_spawned_later_brings_its_laser_s_channel(world: World, tmp_path: Path) -> None:
    from sim_server.core import Pose2D

    path = tmp_path / "run.mcap"
    model_file = world.models["cleaner1"].spec.path
    with LiveView(world, port=None, record=path):
        world.step(20)
        world.spawn_model(model_file, "second", "second", Pose2D(2.0, 2.0, 0.0))
        world.step(40)
    with path.open("rb") as stream:
        summary = make_reader(stream).get_summary()
    counts = {summary.channels[c].topic: n for c, n in summary.statistics.channel_message_counts.items()}
    assert counts["/second/scan"] >= 5 and counts["/scan"] >= 10


def test_a_long_recording_is_cut_into_files_and_only_the_newest_are_kept(world: World, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    with LiveView(world, port=None, record=path, record_max_bytes=2**20, record_keep=3) as view:
        world.step(8000)  # 40 s of sim time: about 7 MiB, compressed
        numbers = [number for number, _ in view.record_files]
    assert len(numbers) == 3 and numbers[0] >= 3 and numbers == list(range(numbers[0], numbers[0] + 3))
    kept = sorted(tmp_path.glob("*.mcap"))
    assert kept == sorted(tmp_path / f"run.{n}.mcap" for n in numbers)  # run.mcap and the older ones are gone
    for file in kept:
        assert file.stat().st_size < 2**20 + 2**20  # about the limit: one chunk at most beyond it
        with file.open("rb") as stream:
            reader = make_reader(stream)
            first = next(reader.iter_messages(topics=["/scene/static"], log_time_order=False))
            update = message_class(first[0].name, first[0].data).FromString(first[2].data)
        assert "layer/2d" in {entity.id for entity in update.entities}  # each file replays alone


@pytest.mark.parametrize(("arguments", "fault"), [
    ({"record_max_bytes": 1000}, "size"), ({"record_max_bytes": 2.5e6}, "size"), ({"record_keep": 0}, "kept"),
])
def test_bad_recording_bounds_are_refused(world: World, tmp_path: Path, arguments: dict, fault: str) -> None:
    with pytest.raises(ValueError, match=fault):
        LiveView(world, port=None, record=tmp_path / "run.mcap", **arguments)
    assert not list(tmp_path.iterdir())


def test_the_record_program_cuts_long_runs_into_files(tmp_path: Path, capsys) -> None:
    from sim_server.record import main

    out = tmp_path / "run.mcap"
    assert main([str(CROWD_WORLD), "--seconds", "40", "--out", str(out), "--max-mib", "1", "--keep", "2"]) == 0
    kept = sorted(path.name for path in tmp_path.glob("*.mcap"))
    assert len(kept) == 2 and "run.mcap" not in kept
    printed = capsys.readouterr().out
    assert all(name in printed for name in kept), printed
    assert not list(tmp_path.glob(".run.partial-*"))


def test_a_client_that_comes_while_the_world_is_paused_gets_everything_once(world: World) -> None:
    """Paused: a new subscriber gets the scene and each sensor's newest data; the same scene is
    not sent again and again (about once a wall second at most, besides changes)."""
    topics = ("/scene", "/scene/static", "/tf", "/scan", "/image_raw", "/odometry/ground_truth")
    with LiveView(world, port=0) as view:
        world.step(50)  # scans, pictures and odometry exist
        world.time.paused = True
        client = Client(view.url)
        try:
            client.until(lambda: set(topics) <= client.topics(), between=view.serve)
            client.subscribe(*topics)
            client.until(lambda: set(topics) <= set(client.messages), between=view.serve)
            counted = len(client.messages["/scene"])
            deadline = time.monotonic() + 1.5
            client.until(lambda: time.monotonic() > deadline, between=view.serve)
        finally:
            client.close()
    assert world.time.iterations == 50
    assert len(client.messages["/scene"]) - counted <= 3


def test_models_that_would_share_frame_names_get_their_own(tmp_path: Path) -> None:
    """Four robots without a namespace (the learning crowd world) would all name their frames
    ``base`` and ``laser``: each model's frames are prefixed with its name, scans included, so
    every robot and scan shows where it is."""
    crowd = World.from_file(REPO_ROOT / "config" / "worlds" / "learning" / "crowd.yaml")
    path = tmp_path / "run.mcap"
    try:
        with LiveView(crowd, port=None, record=path):
            crowd.step(20)
        names = sorted(crowd.models)
    finally:
        crowd.close()
    with path.open("rb") as stream:
        reader = make_reader(stream)
        decoded = {}
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            if schema.encoding == "protobuf":
                decoded.setdefault(channel.topic, []).append(message_class(schema.name, schema.data).FromString(message.data))
    children = [t.child_frame_id for t in decoded["/tf"][-1].transforms]
    assert len(children) == len(set(children))  # every frame once
    assert {f"{name}/{frame}" for name in names for frame in ("base", "laser")} <= set(children)
    scan_frames = {scan.frame_id for topic, messages in decoded.items() if topic.endswith("scan") for scan in messages}
    assert scan_frames and scan_frames <= set(children)


def test_a_learning_vector_environment_is_watched_whole() -> None:
    """``LiveView(envs.unwrapped.world)``: every copy of the vector environment, each robot's
    frames its own (the copies' models have no namespace)."""
    import gymnasium

    import sim_server.learning  # noqa: F401 - registers the environments

    envs = gymnasium.make_vec("sim_server.learning:sim_server/Navigation-v0", num_envs=3)
    try:
        envs.reset(seed=1)
        world = envs.unwrapped.world
        with LiveView(world, port=0) as view:
            client = Client(view.url)
            try:
                client.until(lambda: {"/tf", "/scene"} <= client.topics())
                assert not view._live.has_sinks()  # noqa: SLF001 - what the benchmark waits on
                client.subscribe("/tf", "/scene")
                client.until(lambda: {"/tf", "/scene"} <= set(client.messages),
                             between=lambda: envs.step(envs.action_space.sample()))
                assert view._live.has_sinks()  # noqa: SLF001
            finally:
                client.close()
        robots = [name for name in world.models]
    finally:
        envs.close()
    children = [t.child_frame_id for t in client.messages["/tf"][-1].transforms]
    assert len(robots) == 3 and len(children) == len(set(children))
    assert {entity.id for entity in client.messages["/scene"][-1].entities} >= {f"model/{name}" for name in robots}


# ---------------------------------------------------------------------------------- a recording that fails
def test_a_full_disk_stops_only_the_recording_and_the_view_serves_on(
        world: World, tmp_path: Path, monkeypatch, caplog) -> None:
    """As on the ROS node (foxglove_record): the recording stops at the first write that fails,
    one error line goes through the sim_server logger, nothing more is written, and clients are
    served as before."""
    from test.live.full_files import NO_SPACE, fill_up_after, hidden_files

    path = tmp_path / "run.mcap"
    path.write_bytes(b"old")
    made = fill_up_after(monkeypatch, 200_000)
    caplog.set_level(logging.DEBUG)
    with LiveView(world, port=0, record=path) as view:
        client = Client(view.url)
        try:
            client.until(lambda: "/scene" in client.topics())
            client.subscribe("/scene")
            for _ in range(20_000):
                world.step()
                if view.record_error is not None:
                    break
            assert str(view.record_error) == f"cannot write {path}: {NO_SPACE}"
            assert not hidden_files(tmp_path) and path.read_bytes() == b"old"  # at once, not at the close
            seen = len(client.messages.get("/scene", []))
            client.until(lambda: len(client.messages.get("/scene", [])) > seen + 3, between=lambda: world.step(10))
            world.step(400)
        finally:
            client.close()
    assert made[0].failed_writes == 1 and len(made) == 1  # nothing tried after the first refusal
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [(r.name, r.getMessage()) for r in errors] == [
        ("sim_server.live.view", f"live view: the recording stopped: cannot write {path}: {NO_SPACE}")]
    assert path.read_bytes() == b"old" and not hidden_files(tmp_path)


def test_run_ends_at_the_failed_write_when_asked_and_the_error_is_told_once(world: World, tmp_path: Path, monkeypatch) -> None:
    """``serve --record``'s way: ``on_record_error`` hears it once; ``run`` stopped by it steps
    no more."""
    from test.live.full_files import fill_up_after

    made = fill_up_after(monkeypatch, 200_000)
    told = []
    steps_after = []
    # (this hook runs before the view's: in the step whose write fails it sees no failure yet)
    world.after_step_hooks.append(lambda time: steps_after.append(1) if made[0].failed_writes else None)
    with LiveView(world, port=None, record=tmp_path / "run.mcap", on_record_error=told.append) as view:
        view.run(seconds=600.0, speed=0.0, stop=lambda: view.record_error is not None)
    assert len(told) == 1 and told[0] is view.record_error and made[0].failed_writes == 1
    assert not steps_after  # no step after the one whose write failed
    assert world.time.sim_time < 60.0


def test_a_recording_is_put_in_place_when_the_view_closes(world: World, tmp_path: Path) -> None:
    """The old file stays until the new one is complete (``serve --record`` over an old run)."""
    path = tmp_path / "run.mcap"
    path.write_bytes(b"old")
    with LiveView(world, port=None, record=path) as view:
        world.step(100)
        assert path.read_bytes() == b"old" and view.record_files == [(0, path)]
    assert path.stat().st_size > 10_000 and [p.name for p in tmp_path.iterdir()] == ["run.mcap"]


def test_a_discarded_recording_leaves_what_was_there(world: World, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    path.write_bytes(b"old")
    with LiveView(world, port=None, record=path, record_at_close=True) as view:
        world.step(100)
        view.discard_recording()
        world.step(100)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["run.mcap"]
    assert view.record_error is None and view.record_files == []
