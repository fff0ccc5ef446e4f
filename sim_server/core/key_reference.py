"""The key reference's content: files that use every key the readers accept, loaded while every
reader is recorded (:func:`recording_all`), merged into a catalogue (:func:`reference_catalog`,
which the docs build writes as the page ``keys``).

The recording itself is :mod:`sim_server.core.format.key_catalog`'s; here, above the world and the
plugin manager, the plugins' readers are recorded too (each scope named after the plugin type
being initialised), and the exemplars are loaded into a world.

The exemplars take every branch of the readers: image and line-segment maps (one streamed in
tiles), circle and polygon footprints, revolute (with limits) and weld joints, crowds of both
models (social force and ORCA, with all their parameters) and of a pedsim_ros scenario, agents
starting at points and in regions, walking waypoints or goals, spawners, levels, performers,
named poses, description and tags; and every bundled plugin (:data:`PLUGIN_ENTRIES`), loaded
twice on a small tricycle model, under two names and with its bodies in two orders, so that
defaults that depend on where a key is read show up as such. The crowd parameters are those the crowd reader reads, taken from its
dataclasses, so a new parameter comes into the reference by itself.
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterator

import yaml

from sim_server.core.format import crowd_file
from sim_server.core.format.key_catalog import Catalog, KeyRecorder, build_catalog, reader_class, recording
from sim_server.core.format.map_file import load_map_file
from sim_server.core.format.model_file import load_model_file
from sim_server.core.format.world_file import load_world_file
from sim_server.core.plugins import manager
from sim_server.core.world import World

#: An entry of every bundled plugin type (``sim_server.model_plugins`` of ``sim_plugins``) with
#: the keys it demands, by type: the rest of its keys have defaults. A bundled plugin without
#: one here is missed by the reference (test/core/format/test_key_catalog.py checks).
PLUGIN_ENTRIES: dict[str, dict[str, Any]] = {
    "DiffDrive": {"body": "chassis"},
    "TricycleDrive": {"body": "chassis", "front_wheel_joint": "steer", "rear_left_wheel_joint": "left",
                      "rear_right_wheel_joint": "right"},
    "AckermannDrive": {"body": "chassis", "wheelbase": 0.8},
    "OmniDrive": {"body": "chassis"},
    "Laser": {"body": "chassis", "range": 8.0, "angle": {"min": -1.5, "max": 1.5, "increment": 0.1}},
    "Bumper": {},
    "BoolSensor": {},
    "Gps": {"body": "chassis"},
    "Camera": {"body": "chassis", "pixels": [4, 4]},
    "Tween": {"body": "chassis"},
    "ModelTfPublisher": {},
    "Imu": {"body": "chassis"},
    "Range": {"body": "chassis"},
}

#: The model the plugins are loaded on: a chassis, a steered front wheel and two rear wheels.
PLUGIN_MODEL = {
    "bodies": [
        {"name": "chassis", "footprints": [{"type": "polygon", "density": 5.0,
                                            "points": [[-0.6, -0.3], [0.4, -0.3], [0.4, 0.3], [-0.6, 0.3]]}]},
        {"name": "front", "footprints": [{"type": "circle", "radius": 0.05, "density": 1.0}]},
        {"name": "rear_left", "footprints": [{"type": "circle", "radius": 0.05, "density": 1.0}]},
        {"name": "rear_right", "footprints": [{"type": "circle", "radius": 0.05, "density": 1.0}]},
    ],
    "joints": [
        {"type": "revolute", "name": "steer", "bodies": [{"name": "front", "anchor": [0, 0]},
                                                         {"name": "chassis", "anchor": [0, 0]}]},
        {"type": "weld", "name": "left", "bodies": [{"name": "rear_left", "anchor": [0, 0]},
                                                    {"name": "chassis", "anchor": [-0.5, 0.25]}]},
        {"type": "weld", "name": "right", "bodies": [{"name": "rear_right", "anchor": [0, 0]},
                                                     {"name": "chassis", "anchor": [-0.5, -0.25]}]},
    ],
}

#: A model of every body, footprint and joint key (read, not built: the plugins' model is).
FULL_MODEL = {
    "bodies": [
        {"name": "base", "type": "dynamic", "pose": [0.1, 0.0, 0.0], "color": [0.2, 0.2, 0.8, 1.0],
         "linear_damping": 0.1, "angular_damping": 0.1, "enabled": True,
         "footprints": [
             {"type": "circle", "center": [0.0, 0.0], "radius": 0.3, "density": 2.0, "friction": 0.5,
              "restitution": 0.1, "sensor": False, "layers": ["all"], "collision": True},
             {"type": "polygon", "points": [[0.0, 0.0], [0.2, 0.0], [0.0, 0.2]], "density": 1.0},
         ]},
        {"name": "arm", "footprints": [{"type": "circle", "radius": 0.1, "density": 1.0}]},
        {"name": "tool", "footprints": [{"type": "circle", "radius": 0.05, "density": 1.0}]},
    ],
    "joints": [
        {"type": "revolute", "name": "shoulder", "limits": [-1.0, 1.0], "collide_connected": False,
         "color": [1.0, 1.0, 1.0, 0.5], "enabled": True,
         "bodies": [{"name": "base", "anchor": [0, 0], "enabled": True}, {"name": "arm", "anchor": [0, 0]}]},
        {"type": "weld", "name": "grip", "angle": 0.0, "frequency": 5.0, "damping": 0.5,
         "bodies": [{"name": "arm", "anchor": [0.1, 0]}, {"name": "tool", "anchor": [0, 0]}]},
    ],
    "plugins": [{"name": "drive", "type": "DiffDrive", "body": "base", "enabled": True}],
}

#: A pedsim_ros scenario: a box of walls, a stop, a cluster of people walking to it, a robot agent.
SCENARIO = """<?xml version="1.0" encoding="UTF-8"?>
<scenario>
  <obstacle x1="0" y1="0" x2="10" y2="0"/>
  <obstacle x1="10" y1="0" x2="10" y2="10"/>
  <waypoint id="stop" x="5" y="5" r="1"/>
  <agent x="2" y="2" n="2" dx="1" dy="1" type="0">
    <addwaypoint id="stop"/>
  </agent>
  <agent x="8" y="8" n="1" type="2"/>
</scenario>
"""


def _parameters(model: str) -> dict[str, Any]:
    """Every parameter the crowd reader reads of ``model``, at its default."""
    defaults = crowd_file.MODELS[model]()
    readable = set(crowd_file.PARAMETER_RANGES) | set(crowd_file.WHOLE_PARAMETER_RANGES)
    return {item.name: getattr(defaults, item.name) for item in fields(defaults) if item.name in readable}


def _crowd(model: str, speed: Any) -> dict[str, Any]:
    """A crowd of ``model`` using every crowd, agent and spawner key."""
    return {
        "name": f"{model}_crowd", "model": model, "parameters": _parameters(model), "radius": 0.3, "speed": speed,
        "update_rate": 20, "layers": ["walls"], "seed": 7, "robot_visible": True, "goals_per_region": 8,
        "navigation_cell": 0.25, "regions": {"yard": [1, 1, 9, 9]},
        "agents": [
            {"count": 2, "start": "yard", "goals": "yard", "wait": [0, 2], "group": True, "speed": 1.2},
            {"start": [2, 2], "waypoints": [[3, 3], [6, 6]], "loop": False, "wait": 1, "speed": [1.0, 1.4]},
        ],
        "spawners": [
            {"at": [1.5, 1.5], "rate": 0.5, "limit": 4, "total": 10, "size": 2, "waypoints": [[8, 8]], "speed": 1.1,
             "wait": [0, 1]},
            {"at": "yard", "rate": 0.2, "limit": 2, "goals": "yard", "loop": True, "wait": 1},
        ],
    }


def _scenario_crowd(model: str) -> dict[str, Any]:
    return {"name": f"{model}_station", "model": model, "pedsim_scenario": "scenario.xml", "pedsim_walls": True,
            "pedsim_robot": f"{model}_robot"}


def _dump(path: Path, data: Any) -> Path:
    path.write_text(yaml.safe_dump(data, default_flow_style=None, sort_keys=False))
    return path


def write_exemplars(folder: Path) -> dict[str, Path]:
    """Write the exemplar files into ``folder``; their paths by role (``world``, ``model``,
    ``image_map``, ``line_map``, ``plugin_world``)."""
    from PIL import Image

    image = Image.new("L", (8, 8), 255)
    image.putpixel((2, 2), 0)
    image.save(folder / "room.png")
    (folder / "walls.txt").write_text("0 0 10 0\n10 0 10 10\n10 10 0 10\n0 10 0 0\n")
    (folder / "scenario.xml").write_text(SCENARIO)
    paths = {
        "image_map": _dump(folder / "room.yaml", {"image": "room.png", "resolution": 0.5, "origin": [0, 0, 0],
                                                 "occupied_thresh": 0.65, "free_thresh": 0.2, "negate": 0,
                                                 "mode": "trinary"}),
        "line_map": _dump(folder / "walls.yaml", {"type": "line_segments", "data": "walls.txt", "scale": 1.0,
                                                  "origin": [0, 0, 0]}),
        "model": _dump(folder / "full.model.yaml", FULL_MODEL),
    }
    _dump(folder / "vehicle.model.yaml", PLUGIN_MODEL)
    paths["world"] = _dump(folder / "world.yaml", {
        "properties": {"velocity_iterations": 10, "position_iterations": 10},
        "description": "every key of the readers", "tags": ["exemplar"],
        "layers": [
            {"name": ["walls", "walls_too"], "map": "walls.yaml", "color": [0.5, 0.5, 0.5, 1.0],
             "streaming": {"tile_size": 5.0, "buffer": 1.0}},
            {"name": "room", "map": "room.yaml"},
        ],
        "models": [{"name": "robot", "model": "full.model.yaml", "namespace": "robot", "pose": [5, 5, 0]}],
        "plugins": [{"name": "clock", "type": "SomeWorldPlugin", "enabled": True, "rate": 1}],
        "levels": [{"name": "west", "pose": [2.5, 5], "size": [5, 10], "buffer": 1.0, "refs": ["robot", "room"]}],
        "performers": [{"name": "robot_box", "ref": "robot", "size": [2, 2]}],
        "named_poses": [{"name": "dock", "pose": [1, 1, 0], "description": "the charger", "tags": ["spawn"],
                         "radius": 0.5}],
        "pedestrians": [_crowd("social_force", [1.0, 1.5]), _crowd("orca", 1.3),
                        _scenario_crowd("social_force"), _scenario_crowd("orca")],
    })
    paths["plugin_world"] = _dump(folder / "plugin_world.yaml", {
        "properties": {}, "layers": [{"name": "walls", "map": "walls.yaml"}], "models": [],
    })
    return paths


@contextlib.contextmanager
def recording_all(recorder: KeyRecorder | None = None) -> Iterator[KeyRecorder]:
    """Record every key that the world, model and map readers and the plugins read while the
    block runs (:func:`~sim_server.core.format.key_catalog.recording`, and the plugin manager's
    readers, scoped ``plugin TYPE``); everything is restored after it. For one thread."""
    instantiate = manager.PluginManager._instantiate
    saved = manager.YamlReader
    with recording(recorder) as recorder:

        @functools.wraps(instantiate)
        def instantiate_recorded(self: Any, spec: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.plugin_type = spec.plugin_type
            try:
                return instantiate(self, spec, *args, **kwargs)
            finally:
                recorder.plugin_type = ""

        try:
            manager.YamlReader = reader_class(recorder, "plugin")  # type: ignore[attr-defined]
            manager.PluginManager._instantiate = instantiate_recorded  # type: ignore[method-assign]
            yield recorder
        finally:
            manager.YamlReader = saved  # type: ignore[attr-defined]
            manager.PluginManager._instantiate = instantiate  # type: ignore[method-assign]


def record_exemplars(folder: Path, recorder: KeyRecorder | None = None) -> KeyRecorder:
    """Write the exemplars into ``folder`` and load them all while recording the keys read."""
    paths = write_exemplars(folder)
    with recording_all(recorder) as recorder:
        load_world_file(paths["world"])
        load_model_file(paths["model"])
        for role in ("image_map", "line_map"):
            load_map_file(paths[role], role)
        world = World.from_file(paths["plugin_world"], step_size=0.01, seed=1)
        try:
            for plugin_type, config in PLUGIN_ENTRIES.items():
                for copy, namespace in (("a", "first"), ("b", "")):
                    name = f"{copy}_{plugin_type.lower()}"
                    bodies = PLUGIN_MODEL["bodies"] if copy == "a" else PLUGIN_MODEL["bodies"][::-1]
                    model = dict(PLUGIN_MODEL, bodies=bodies, plugins=[{"name": name, "type": plugin_type, **config}])
                    world.spawn_model(_dump(folder / f"{name}.model.yaml", model), name, namespace)
                    world.delete_model(name)
        finally:
            world.close()
    return recorder


def reference_catalog() -> Catalog:
    """The catalogue of every key of the exemplars (the reference page's content)."""
    with tempfile.TemporaryDirectory(prefix="sim_server_keys_") as folder:
        recorder = record_exemplars(Path(folder))
    return build_catalog(recorder.reads)
