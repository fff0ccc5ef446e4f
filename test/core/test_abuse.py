"""Generated broken inputs: every one ends in one clear line naming the file, or in a world
that steps with finite poses. Nothing else: no other exception, no hang, no unbounded read.

Variants are made from every bundled world and the reference's load tests: each number, string,
list and mapping of the world, model and map files replaced by hostile values (wrong types,
non-finite and huge numbers), keys removed and added; plus hand-made bombs (aliases, nesting,
includes, endless or greedy Lua, devices, FIFOs, huge images and maps).
"""

from __future__ import annotations

import copy
import math
import os
import random
import shutil
import struct
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from sim_server.core import limits
from sim_server.core.errors import ConfigError
from sim_server.core.world import World
from test.conftest import LOAD_WORLD_TESTS, REPO_ROOT

WORLD_FOLDERS = [
    REPO_ROOT / "config" / "worlds" / "demo",
    REPO_ROOT / "config" / "worlds" / "levels",
    REPO_ROOT / "config" / "worlds" / "tunnel",
    REPO_ROOT / "config" / "worlds" / "crowd",
    REPO_ROOT / "config" / "worlds" / "pedsim",
    REPO_ROOT / "config" / "worlds" / "vehicles",
    LOAD_WORLD_TESTS / "simple_test_A",
]
#: Values put in place of a leaf (or a whole entry) of a file.
HOSTILE_VALUES: list[Any] = [
    math.nan, math.inf, -math.inf, 1e30, -1e30, 1e308, -1e308, 10**40, 0, -1, 1e-300,
    "abc", "", True, None, [], {}, [1, 2, 3], {"x": 1}, "x" * 5000,
]
#: Variants tried per world folder (chosen with a fixed seed among all possible ones).
VARIANTS_PER_WORLD = 150
STEPS_AFTER_LOAD = 5


def _paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path (tuple of keys and indices) to a node of a parsed YAML document."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


def _replace(document: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    result = copy.deepcopy(document)
    parent = result
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return result


def _remove(document: Any, path: tuple) -> Any:
    result = copy.deepcopy(document)
    parent = result
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return result


def _variants(folder: Path) -> list[tuple[str, str, Any]]:
    """(file name, description, new document) for every mutation of every YAML file of ``folder``."""
    variants = []
    for file in sorted(folder.glob("*.yaml")):
        document = yaml.safe_load(file.read_text())
        for path in _paths(document):
            for value in HOSTILE_VALUES:
                variants.append((file.name, f"{file.name}:{list(path)} = {value!r:.40}", _replace(document, path, value)))
            if path:
                variants.append((file.name, f"{file.name}:{list(path)} removed", _remove(document, path)))
            if path and isinstance(_get(document, path), dict):
                extra = _replace(document, path, {**_get(document, path), "unexpected_key": 1})
                variants.append((file.name, f"{file.name}:{list(path)} + unexpected_key", extra))
    return variants


def _get(document: Any, path: tuple) -> Any:
    for key in path:
        document = document[key]
    return document


def _cases() -> list[Any]:
    cases = []
    for folder in WORLD_FOLDERS:
        variants = _variants(folder)
        chosen = random.Random(f"abuse:{folder.name}").sample(variants, min(VARIANTS_PER_WORLD, len(variants)))
        cases += [pytest.param(folder, name, document, id=description) for name, description, document in chosen]
    return cases


def assert_clean_outcome(world_path: Path, enable_levels: bool = False) -> World | None:
    """Load ``world_path``: either a ConfigError of one line naming a file, or a world whose
    bodies stay finite for a few steps. Returns the world (closed) or None."""
    try:
        world = World.from_file(world_path, enable_levels=enable_levels)
    except ConfigError as exc:
        message = str(exc)
        assert "\n" not in message, message
        assert ".yaml" in message or ".dat" in message or ".png" in message, message
        assert len(message) < 2000, message
        return None
    try:
        world.step(STEPS_AFTER_LOAD)
        for body in world.physics.bodies:
            assert math.isfinite(body.position[0]) and math.isfinite(body.position[1]) and math.isfinite(body.angle)
    finally:
        world.close()
    return world


@pytest.mark.parametrize(("folder", "file_name", "document"), _cases())
def test_mutated_files_load_cleanly_or_fail_in_one_line(tmp_path: Path, folder: Path, file_name: str, document: Any) -> None:
    copy_of = tmp_path / folder.name
    shutil.copytree(folder, copy_of)
    if folder.name in ("crowd", "vehicles", "pedsim"):  # their map or robot are the demo's
        shutil.copytree(folder.parent / "demo", tmp_path / "demo")
    (copy_of / file_name).write_text(yaml.safe_dump(document, default_flow_style=True, width=1 << 30))
    assert_clean_outcome(copy_of / "world.yaml", enable_levels=folder.name == "levels")


# ------------------------------------------------------------------------------------ bombs
def _world_with_model(tmp_path: Path, model_text: str, world_extra: str = "") -> Path:
    (tmp_path / "m.model.yaml").write_text(model_text)
    world = tmp_path / "world.yaml"
    world.write_text(
        "properties: {}\nlayers: []\nmodels:\n  - {name: m, model: m.model.yaml}\n" + world_extra
    )
    return world


BODY = "bodies:\n  - name: base\n    footprints:\n      - {type: circle, radius: 0.2, density: 1}\n"
#: A body whose radius is ``{radius}`` in block style (so that $eval code may hold commas).
BLOCK_BODY = "bodies:\n  - name: base\n    footprints:\n      - type: circle\n        density: 1\n        radius: {radius}\n"


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels (with no pixel data)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


def _map_world(tmp_path: Path, map_text: str, streaming: str = "") -> Path:
    (tmp_path / "map.yaml").write_text(map_text)
    world = tmp_path / "world.yaml"
    world.write_text(f"properties: {{}}\nlayers:\n  - {{name: walls, map: map.yaml{streaming}}}\nmodels: []\n")
    return world


def _bombs() -> list[Any]:
    laughs = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join(["*" + chr(97 + i)] * 9) + "]\n" for i in range(8)
    )
    return [
        pytest.param("model", laughs + BODY, "alias bomb", "aliases expanded", id="billion-laughs"),
        pytest.param("model", "a: " + "[" * 10000 + "]" * 10000 + "\n" + BODY, "nested", "nested deeper", id="deep-list"),
        pytest.param("model", BODY + "x: {}\n", "", "unrecognized", id="extra-key"),
        pytest.param("model", "a: 1\x00\n" + BODY, "", "#x0000", id="nul-byte"),
        pytest.param("model", BODY.replace("0.2", "$eval while true do end"), "", "$eval", id="lua-syntax"),
        pytest.param("model", BODY.replace("0.2", "$eval (function() while true do end end)()"), "", "Lua instructions", id="lua-endless"),
        pytest.param("model", BLOCK_BODY.format(radius="$eval (function() local t = {} for i = 1, 1e9 do t[i] = i end end)()"), "", "MiB of Lua memory", id="lua-memory"),
        pytest.param("model", BODY.replace("0.2", "$eval os.exit(3)"), "", "attempt to call a nil value", id="lua-os-exit"),
        pytest.param("model", BODY.replace("0.2", "$eval io.open('/etc/passwd')"), "", "global 'io'", id="lua-io"),
        pytest.param("model", BODY.replace("0.2", "$eval python.eval('1')"), "", "global 'python'", id="lua-python"),
        pytest.param("model", BLOCK_BODY.format(radius="$eval string.rep('a', 1999):find(string.rep('a*', 20) .. 'b')"), "", "at most 1 time", id="lua-pattern"),
        pytest.param("model", BODY.replace("0.2", "1e30"), "", 'key "radius"', id="radius-1e30"),
        pytest.param("model", BODY.replace("circle, radius: 0.2", "circle, center: [50, 0], radius: 0.001"), "", "too small for their distance", id="inertia-lost"),
        pytest.param("model", BODY.replace("{type: circle, radius: 0.2, density: 1}", "{type: polygon, points: [[0, 0], [1e30, 0], [0, 1]], density: 1}"), "", 'key "points"', id="polygon-1e30"),
        pytest.param("model", BODY + "plugins:\n  - {name: l, type: Laser, body: base, range: 5, angle: {min: -3, max: 3, increment: 1e-9}}\n", "", "beams are more than", id="laser-beams"),
        pytest.param("world", BODY, "properties: {velocity_iterations: 1000000000000}\n", 'key "velocity_iterations"', id="iterations-1e12"),
        pytest.param("world", BODY, "x: 1\n", '"x"', id="world-extra-key"),
    ]


@pytest.mark.parametrize(("target", "model_text", "world_extra", "fact"), _bombs())
def test_bombs_fail_in_one_line(tmp_path: Path, target: str, model_text: str, world_extra: str, fact: str) -> None:
    if target == "world":
        (tmp_path / "m.model.yaml").write_text(model_text)
        world = tmp_path / "world.yaml"
        base = "layers: []\nmodels:\n  - {name: m, model: m.model.yaml}\n"
        world.write_text(base + world_extra if "properties" in world_extra else "properties: {}\n" + base + world_extra)
    else:
        world = _world_with_model(tmp_path, model_text)
    with pytest.raises(ConfigError) as info:
        World.from_file(world)
    message = str(info.value)
    assert "\n" not in message and fact in message, message


def test_includes_are_bounded(tmp_path: Path) -> None:
    depth = 2000
    for level in range(depth):
        (tmp_path / f"inc{level}.yaml").write_text(f"a: $include inc{level + 1}.yaml\n")
    (tmp_path / f"inc{depth}.yaml").write_text("1\n")
    world = _world_with_model(tmp_path, BODY + "extra: $include inc0.yaml\n")
    with pytest.raises(ConfigError, match=f"deeper than the limit of {limits.MAX_INCLUDE_DEPTH}"):
        World.from_file(world)
    # Fan-out: each file includes the next one twice, 2^30 reads without a budget.
    for level in range(30):
        (tmp_path / f"fan{level}.yaml").write_text(f"[$include fan{level + 1}.yaml, $include fan{level + 1}.yaml]\n")
    (tmp_path / "fan30.yaml").write_text("1\n")
    world = _world_with_model(tmp_path, BODY + "extra: $include fan0.yaml\n")
    with pytest.raises(ConfigError, match=f"limit of {limits.MAX_INCLUDED_FILES} included files"):
        World.from_file(world)


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "fifo", "directory", "huge", "binary"])
def test_special_files_are_refused_before_reading(tmp_path: Path, special: str) -> None:
    if special == "fifo":
        target = tmp_path / "pipe.yaml"
        os.mkfifo(target)
    elif special == "directory":
        target = tmp_path / "folder.yaml"
        target.mkdir()
    elif special == "huge":
        target = tmp_path / "huge.yaml"
        with open(target, "wb") as stream:
            stream.truncate(limits.MAX_YAML_BYTES + 1)  # sparse: no disk used
    elif special == "binary":
        target = tmp_path / "binary.yaml"
        target.write_bytes(bytes(range(256)) * 10)
    else:
        target = Path(special)
    expected = {"fifo": "a FIFO", "directory": "a directory", "huge": "more than the limit", "binary": "not UTF-8"}
    fact = expected.get(special, "a device")
    with pytest.raises(ConfigError, match=fact):  # as an included file
        World.from_file(_world_with_model(tmp_path, BODY.replace("0.2", f"$include {target}")))
    world = tmp_path / "world.yaml"  # as a model file
    world.write_text(f"properties: {{}}\nlayers: []\nmodels:\n  - {{name: m, model: {target}}}\n")
    with pytest.raises(ConfigError, match=fact):
        World.from_file(world)
    with pytest.raises(ConfigError, match=fact):
        World.from_file(target)


def test_maps_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(_png_header(100_000, 100_000))
    world = _map_world(tmp_path, "image: big.png\nresolution: 0.05\norigin: [0, 0, 0]\noccupied_thresh: 0.65\n")
    with pytest.raises(ConfigError, match=f"more than the limit of {limits.MAX_MAP_PIXELS} pixels") as info:
        World.from_file(world)
    assert 'layers[0] ("walls")' in str(info.value)
    (tmp_path / "small.png").write_bytes(_png_header(10, 10))
    world = _map_world(tmp_path, "image: small.png\nresolution: 0.05\norigin: [0, 0, 0]\noccupied_thresh: 1e30\n")
    with pytest.raises(ConfigError, match='key "occupied_thresh"'):
        World.from_file(world)
    world = _map_world(tmp_path, "image: missing.png\nresolution: 0.05\norigin: [0, 0, 0]\noccupied_thresh: 0.6\n")
    with pytest.raises(ConfigError, match=r'world.yaml: layers\[0\] \("walls"\): .*map.yaml: key "image".*does not exist'):
        World.from_file(world)
    (tmp_path / "walls.dat").write_text("0 0 100 0\n0 0 0 100\n")
    streamed = _map_world(tmp_path, "type: line_segments\ndata: walls.dat\nscale: 1\norigin: [0, 0, 0]\n", ", streaming: {tile_size: 1e-6}")
    with pytest.raises(ConfigError, match="tile_size"):
        World.from_file(streamed)
    (tmp_path / "walls.dat").write_text("0 0 1e30 0\n")
    with pytest.raises(ConfigError, match="walls.dat: line 1"):
        World.from_file(_map_world(tmp_path, "type: line_segments\ndata: walls.dat\nscale: 1\norigin: [0, 0, 0]\n"))


def test_names_are_checked_before_anything_is_built(tmp_path: Path) -> None:
    world = _world_with_model(tmp_path, BODY)
    for name in ("x" * (limits.MAX_NAME_LENGTH + 1), "x" * 5000, "a b", "a/b", ""):
        world.write_text(f"properties: {{}}\nlayers: []\nmodels:\n  - {{name: {name!r}, model: m.model.yaml}}\n")
        with pytest.raises(ConfigError, match='key "name"'):
            World.from_file(world)
    world.write_text("properties: {}\nlayers: []\nmodels:\n  - {name: m, model: m.model.yaml, namespace: '1bad'}\n")
    with pytest.raises(ConfigError, match='key "namespace"'):
        World.from_file(world)
