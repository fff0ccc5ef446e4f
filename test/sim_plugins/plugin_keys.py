"""What the generated plugin-key tests (test_plugin_key_abuse.py) know of the bundled plugins:
their entry points, a minimal valid entry of each, a model and world they all load on, and which
keys a plugin reads, with which reader method (:func:`reads_of`).

The keys are found, not listed: each plugin's ``on_initialize`` runs on its minimal entry with the
key catalogue's recording reader (:mod:`sim_server.core.format.key_catalog`, which the key
reference is made with) in place of the :class:`YamlReader` (every key read is logged as a
:class:`~sim_server.core.format.key_catalog.Read`, with its method and arguments: default,
range, choices), so a key added to a plugin is tested at once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sim_server.core import World
from sim_server.core.format.key_catalog import KeyRecorder, Read, reader_class
from sim_server.core.format.yaml_reader import YamlReader
from sim_server.core.plugins import manager
from test.conftest import REPO_ROOT

#: The model every plugin is tested on: a tricycle's four bodies (base, front wheel, two rear
#: wheels) and its joints (front, rear_left, rear_right), so that each plugin finds what it names.
MODEL_BODIES = """
bodies:
  - name: base
    type: dynamic
    footprints:
      - {type: polygon, density: 10, points: [[-1.03, -0.337], [0.08, -0.337], [0.3, -0.16], [0.3, 0.16], [0.08, 0.337], [-1.03, 0.337]]}
  - name: front_wheel
    footprints: [{type: polygon, density: 1, points: [[0.0875, -0.025], [0.0875, 0.025], [-0.0875, 0.025], [-0.0875, -0.025]]}]
  - name: rear_left_wheel
    footprints: [{type: polygon, density: 1, points: [[0.0875, -0.025], [0.0875, 0.025], [-0.0875, 0.025], [-0.0875, -0.025]]}]
  - name: rear_right_wheel
    footprints: [{type: polygon, density: 1, points: [[0.0875, -0.025], [0.0875, 0.025], [-0.0875, 0.025], [-0.0875, -0.025]]}]
joints:
  - {type: revolute, name: front, bodies: [{name: front_wheel, anchor: [0, 0]}, {name: base, anchor: [0, 0]}]}
  - {type: weld, name: rear_left, bodies: [{name: rear_left_wheel, anchor: [0, 0]}, {name: base, anchor: [-0.83, 0.29]}]}
  - {type: weld, name: rear_right, bodies: [{name: rear_right_wheel, anchor: [0, 0]}, {name: base, anchor: [-0.83, -0.29]}]}
"""
#: A minimal valid entry of every bundled plugin type (its required keys), by type. A plugin
#: registered in setup.py without an entry here fails the tests: add one.
MINIMAL: dict[str, dict[str, Any]] = {
    "DiffDrive": {"body": "base"},
    "TricycleDrive": {"body": "base", "front_wheel_joint": "front", "rear_left_wheel_joint": "rear_left",
                      "rear_right_wheel_joint": "rear_right"},
    "AckermannDrive": {"body": "base", "wheelbase": 1.0},
    "OmniDrive": {"body": "base"},
    "Laser": {"body": "base", "range": 5.0, "angle": {"min": -1.0, "max": 1.0, "increment": 0.5}},
    "Bumper": {},
    "BoolSensor": {},
    "Gps": {"body": "base"},
    "Camera": {"body": "base", "pixels": [8, 8]},
    "Tween": {"body": "base"},
    "ModelTfPublisher": {},
    "Imu": {"body": "base"},
    "Range": {"body": "base"},
}
#: The model's name and namespace, and the plugin's name, in every case.
MODEL_NAME, NAMESPACE, PLUGIN_NAME = "robot", "ns", "plugin"


def setup_entry_points() -> dict[str, str]:
    """``{type: "module:Class"}`` of the group ``sim_server.model_plugins`` as setup.py lists it."""
    text = (REPO_ROOT / "setup.py").read_text()
    block = re.search(r'"sim_server\.model_plugins":\s*\[(.*?)\]', text, re.S)
    assert block is not None, "setup.py lists no sim_server.model_plugins"
    return dict(re.findall(r'"\s*(\w+)\s*=\s*([\w.]+:\w+)\s*"', block.group(1)))


def write_world(folder: Path) -> Path:
    """A world of one layer ``walls`` (three walls round the origin, for the rays to hit) and no
    model, in ``folder``."""
    (folder / "walls.txt").write_text("-3 -3 -3 3\n5 -3 5 3\n-3 4 5 4\n")
    (folder / "walls.yaml").write_text("type: line_segments\ndata: walls.txt\nscale: 1.0\norigin: [0, 0, 0]\n")
    (folder / "world.yaml").write_text("properties: {}\nlayers:\n  - {name: walls, map: walls.yaml}\nmodels: []\n")
    return folder / "world.yaml"


def load_world(folder: Path) -> World:
    """:func:`write_world`, loaded (in-process, no ROS, seeded, steps of 0.01 s)."""
    return World.from_file(write_world(folder), step_size=0.01, seed=3)


def model_text(plugin_type: str, config: dict[str, Any]) -> str:
    """The YAML of the test model carrying one plugin ``plugin_type`` with the keys ``config``."""
    entry = {"type": plugin_type, "name": PLUGIN_NAME, **config}
    return MODEL_BODIES + yaml.safe_dump({"plugins": [entry]}, default_flow_style=None, width=1 << 20)


def recorded_reads(monkeypatch: pytest.MonkeyPatch, folder: Path, plugin_type: str) -> list[Read]:
    """The keys ``plugin_type`` reads on its minimal entry (loading it in a world in ``folder``),
    in the order read: the plugin manager's readers are the key catalogue's recording readers
    (:func:`~sim_server.core.format.key_catalog.reader_class`) meanwhile."""
    recorder = KeyRecorder()
    monkeypatch.setattr(manager, "YamlReader", reader_class(recorder, "plugin"))
    world = load_world(folder)
    try:
        (folder / "probe.model.yaml").write_text(model_text(plugin_type, MINIMAL[plugin_type]))
        world.spawn_model("probe.model.yaml", MODEL_NAME, NAMESPACE)
    finally:
        world.close()
        monkeypatch.setattr(manager, "YamlReader", YamlReader)
    return recorder.reads


#: ``{type: "module:Class"}`` of every bundled plugin (setup.py's entry points).
ENTRY_POINTS = setup_entry_points()
_READS: dict[str, list[Read]] = {}


def reads_of(plugin_type: str, folder: Path) -> list[Read]:
    """The keys ``plugin_type`` reads (:func:`recorded_reads`, found once per test run; ``folder``
    holds the world it is found in)."""
    if plugin_type not in _READS:
        with pytest.MonkeyPatch.context() as monkeypatch:
            _READS[plugin_type] = recorded_reads(monkeypatch, folder, plugin_type)
    return _READS[plugin_type]
