"""The helpers the plugins share, through the plugins that use them: ``layers`` read into
collision bits (every layer by default, those named otherwise; an unknown one is one line naming
the key)."""

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
