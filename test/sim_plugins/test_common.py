"""The helpers the plugins share, through the plugins that use them: ``layers`` read into
collision bits (every layer by default, those named otherwise; an unknown one is one line naming
the key); frames: a transform a plugin would publish from a frame to itself, or a body whose
name cannot be a frame, is one line naming the key, and a world frame's global ``/`` is dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim_server.core import ConfigError, World
from test.conftest import plugin

#: A plugin of each type that reads ``layers``, with its other required keys.
SENSORS = {
    "Laser": "range: 5, angle: {min: -1, max: 1, increment: 0.5}",
    "Range": "update_rate: 10",
}


def _world(folder: Path, plugin_type: str, keys: str) -> World:
    """A robot carrying one ``plugin_type`` named ``sensor``, in a world of the layers a, b and c."""
    (folder / "robot.model.yaml").write_text(
        "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.1, density: 1}]\n"
        f"plugins:\n  - {{type: {plugin_type}, name: sensor, body: base, {SENSORS[plugin_type]}{keys}}}\n"
    )
    (folder / "walls.txt").write_text("5 -1 5 1\n")
    (folder / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    layers = "".join(f"  - {{name: {name}, map: walls.yaml}}\n" for name in "abc")
    (folder / "world.yaml").write_text(
        f"properties: {{}}\nlayers:\n{layers}models:\n  - {{name: r, model: robot.model.yaml, pose: [0, 0, 0]}}\n"
    )
    return World.from_file(folder / "world.yaml")


@pytest.mark.parametrize("plugin_type", sorted(SENSORS))
@pytest.mark.parametrize(("keys", "expected"), [("", {"a", "b", "c"}), (", layers: [c, a]", {"a", "c"}),
                                                (", layers: [all]", {"a", "b", "c"}), (", layers: []", set())])
def test_layers_become_the_bits_of_the_layers_named(tmp_path: Path, plugin_type: str, keys: str, expected: set) -> None:
    world = _world(tmp_path, plugin_type, keys)
    try:
        wanted, _ = world.collision_filter.category_bits(sorted(expected))
        assert plugin(world, "r", "sensor").scanner.layer_bits == wanted and (wanted != 0) == bool(expected)
    finally:
        world.close()


@pytest.mark.parametrize("plugin_type", sorted(SENSORS))
@pytest.mark.parametrize(("keys", "fact"), [(", layers: [a, nope, b, gone]", "{nope,gone}"),
                                            (", layers: 3", "must be a list"), (", layers: [[a]]", "layers")])
def test_a_bad_layers_list_is_one_line_naming_the_key(tmp_path: Path, plugin_type: str, keys: str, fact: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _world(tmp_path, plugin_type, keys).close()
    message = str(raised.value)
    assert 'key "layers"' in message and fact in message and "\n" not in message


# ------------------------------------------------------------------------------------ frames
def _frames_world(folder: Path, entry: str, body: str = "base") -> World:
    """A model in no namespace (a frame is then the name itself) of the bodies ``body`` and
    ``wheel``, carrying the plugin ``entry`` (its keys, as a flow mapping's inside)."""
    (folder / "robot.model.yaml").write_text(
        f"bodies:\n  - name: {body!r}\n    footprints: [{{type: circle, radius: 0.1, density: 1}}]\n"
        "  - name: wheel\n    footprints: [{type: circle, radius: 0.05, density: 1}]\n"
        f"plugins:\n  - {{name: p, {entry}}}\n"
    )
    (folder / "world.yaml").write_text("properties: {}\nlayers: []\nmodels:\n  - {name: r, model: robot.model.yaml}\n")
    return World.from_file(folder / "world.yaml")


#: A plugin entry publishing a transform from the body to a frame named after it, and the key.
SELF_TRANSFORMS = [
    ("type: Laser, body: base, range: 5, angle: {min: -1, max: 1, increment: 1}, frame: base", "frame"),
    ("type: Range, body: base, frame: base", "frame"),
    ("type: Gps, body: base, frame: /base", "frame"),
    ("type: Camera, body: base, frame: base", "frame"),
    ("type: Imu, body: base, imu_frame_id: base", "imu_frame_id"),
    ("type: DiffDrive, body: base, odom_frame_id: base", "odom_frame_id"),
    ("type: ModelTfPublisher, reference: base, publish_tf_world: true, world_frame_id: /base", "world_frame_id"),
]


@pytest.mark.parametrize(("entry", "key"), SELF_TRANSFORMS)
def test_a_transform_from_a_frame_to_itself_is_one_line_naming_the_key(tmp_path: Path, entry: str, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _frames_world(tmp_path, entry).close()
    message = str(raised.value)
    assert f'key "{key}" makes frame' in message and "the child of itself" in message and "\n" not in message


@pytest.mark.parametrize("entry", [entry for entry, _ in SELF_TRANSFORMS[:5]])
def test_a_sensor_not_broadcasting_its_frame_may_use_its_body_s(tmp_path: Path, entry: str) -> None:
    _frames_world(tmp_path, entry + ", broadcast_tf: false").close()


@pytest.mark.parametrize(("entry", "key"), [
    ("type: Laser, body: 'my base', range: 5, angle: {min: -1, max: 1, increment: 1}", "body"),
    ("type: Imu, body: 'my base'", "body"),
    ("type: DiffDrive, body: 'my base'", "body"),
    ("type: ModelTfPublisher, reference: 'my base'", "reference"),
    ("type: ModelTfPublisher, reference: wheel", "exclude"),
])
def test_a_body_whose_name_cannot_be_a_frame_is_one_line_naming_the_key(tmp_path: Path, entry: str, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _frames_world(tmp_path, entry, body="my base").close()
    message = str(raised.value)
    assert f'key "{key}"' in message and "'my base', whose name cannot be a frame" in message and "whitespace" in message


def test_a_body_whose_name_cannot_be_a_frame_may_be_excluded(tmp_path: Path) -> None:
    world = _frames_world(tmp_path, "type: ModelTfPublisher, reference: wheel, exclude: ['my base']", body="my base")
    try:
        assert plugin(world, "r", "p").child_frames == []
    finally:
        world.close()


@pytest.mark.parametrize("entry", ["type: Bumper, world_frame_id: /map", "type: ModelTfPublisher, world_frame_id: /map"])
def test_the_world_s_frame_drops_the_global_slash(tmp_path: Path, entry: str) -> None:
    world = _frames_world(tmp_path, entry)
    try:
        assert plugin(world, "r", "p").world_frame_id == "map"
    finally:
        world.close()
