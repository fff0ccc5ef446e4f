"""Conformance of world loading with the reference's load_world_tests (see EXPECTED.md)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from Box2D import b2

from sim_server.core import ConfigError, World
from test.conftest import LOAD_WORLD_TESTS


def _edges(layer) -> set[tuple[float, ...]]:
    return {tuple(round(v, 6) for v in edge) for edge in layer.edges.tolist()}


@pytest.fixture(scope="module")
def simple_world() -> World:
    world = World.from_file(LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml")
    yield world
    world.close()


def test_properties(simple_world: World) -> None:
    assert simple_world.spec.velocity_iterations == 11
    assert simple_world.spec.position_iterations == 12


def test_layers_names_bits_and_edge_counts(simple_world: World) -> None:
    layers = simple_world.layers
    assert [layer.names for layer in layers] == [("2d",), ("3d", "4d", "5d"), ("lines",), ("robot",)]
    assert [layer.category_bits for layer in layers] == [0b1, 0b1110, 0b10000, 0b100000]
    assert [len(layer.edges) for layer in layers] == [12, 16, 3, 0]
    # The multi-name layer shares one body whose fixtures carry all three bits.
    assert {f.filterData.categoryBits for f in layers[1].body.fixtures} == {0b1110}
    assert {f.filterData.maskBits for f in layers[1].body.fixtures} == {0b1110}
    assert layers[3].body is None


def test_image_layer_geometry(simple_world: World) -> None:
    layer = simple_world.layers[0]
    body = layer.body
    assert body.position.x == pytest.approx(0.05) and body.position.y == pytest.approx(-0.05)
    assert body.angle == pytest.approx(1.57)
    assert (0.0, 0.25, 0.25, 0.25) in _edges(layer)
    assert (0.0, 0.0, 0.25, 0.0) in _edges(layer)
    assert all(f.shape.type == b2.edgeShape.e_edge for f in body.fixtures)


def test_line_segment_layer_scaled(simple_world: World) -> None:
    layer = simple_world.layers[2]
    assert layer.edges.round(6).tolist() == [
        [0.1, 0.2, 0.3, 0.4],
        [-0.1, -0.2, -0.3, -0.4],
        [0.01, 0.02, 0.03, 0.04],
    ]
    assert layer.body.position.x == pytest.approx(-1.2)
    assert layer.body.angle == pytest.approx(1.23)


def test_models_bodies_and_joints(simple_world: World) -> None:
    models = simple_world.models
    assert list(models) == ["turtlebot1", "turtlebot2", "chair1", "person1"]
    assert sum(len(m.bodies) for m in models.values()) == 5 + 5 + 1 + 1
    bot = models["turtlebot1"]
    assert list(bot.bodies) == ["base", "left_wheel", "right_wheel", "tail", "antenna"]
    assert list(bot.joints) == ["left_wheel_weld", "right_wheel_weld", "tail_revolute", "antenna_revolute"]
    base = bot.bodies["base"].physics_body
    assert base.linearDamping == pytest.approx(0.1) and base.angularDamping == pytest.approx(0.125)
    circle, polygon = base.fixtures
    assert circle.shape.radius == pytest.approx(1.777)
    assert polygon.density == pytest.approx(982.24, rel=1e-6)
    assert polygon.friction == pytest.approx(0.59) and polygon.restitution == pytest.approx(0.234)
    all_bits = 0b111111
    assert circle.filterData.categoryBits == all_bits and circle.filterData.maskBits == all_bits
    left = bot.bodies["left_wheel"].physics_body.fixtures[0]
    assert left.sensor and left.filterData.categoryBits == 0b1
    assert bot.bodies["tail"].physics_body.fixtures[0].filterData.categoryBits == 0b10
    antenna = bot.bodies["antenna"].physics_body.fixtures[0]
    assert antenna.filterData.categoryBits == 0 and antenna.filterData.maskBits == 0
    assert tuple(antenna.shape.pos) == pytest.approx((0.01, 0.02))


def test_joint_parameters(simple_world: World) -> None:
    joints = simple_world.models["turtlebot1"].joints
    weld = joints["left_wheel_weld"].physics_joint
    assert isinstance(weld, b2.weldJoint)
    assert weld.collideConnected
    assert weld.GetFrequency() == pytest.approx(10) and weld.GetDampingRatio() == pytest.approx(0.5)
    assert not joints["right_wheel_weld"].physics_joint.collideConnected
    antenna = joints["antenna_revolute"].physics_joint
    assert isinstance(antenna, b2.revoluteJoint) and antenna.limitEnabled
    assert antenna.lowerLimit == pytest.approx(-0.002) and antenna.upperLimit == pytest.approx(3.735)
    assert not joints["tail_revolute"].physics_joint.limitEnabled


def test_model_poses_types_and_namespaces(simple_world: World) -> None:
    models = simple_world.models
    second = models["turtlebot2"]
    assert second.namespace == "robot2"
    pose = second.pose
    assert (pose.x, pose.y, pose.theta) == pytest.approx((3.0, 4.5, 3.14159), abs=1e-5)
    # The left wheel sits 1 m behind the base in the model frame, which is turned by ~pi.
    wheel = second.bodies["left_wheel"].pose
    assert (wheel.x, wheel.y) == pytest.approx((4.0, 4.5), abs=1e-4)
    tail = second.bodies["tail"].pose
    assert tail.theta == pytest.approx(3.14159 + 0.52, abs=1e-5)
    assert models["chair1"].bodies["chair"].physics_body.type == b2.staticBody
    assert models["person1"].bodies["body"].physics_body.type == b2.kinematicBody
    assert models["turtlebot1"].namespace == ""


# Each invalid case: the facts the error must carry (file, entry, key, value).
INVALID_CASES = {
    "world_invalid_A": ["world_invalid_A/world.yaml", 'key "properties" is missing'],
    "world_invalid_B": ["world_invalid_B/world.yaml", 'layers[0] ("2d")', 'key "color"', "4 numbers", "1234"],
    "world_invalid_C": [
        "world_invalid_C/world.yaml",
        'layers[0] ("2d")',
        'unrecognized key(s) "random_param_1", "random_param_2", "random_param_3"',
    ],
    "world_invalid_D": ["world_invalid_D/world.yaml", 'layers[1] ("layer")', 'layer "layer"', "already exists"],
    "world_invalid_E": ["world_invalid_E/world.yaml", 'models[1] ("turtlebot")', "already exists"],
    "world_invalid_F": [
        "world_invalid_F/world.yaml",
        "Unable to add 3 additional layer(s) {layer_15,layer_16,layer_17}, current layers count is 14, "
        "max allowed is 16",
    ],
    "map_invalid_A": ["map_invalid_A/map.yaml", 'key "origin" is missing'],
    "map_invalid_B": ["map_invalid_B/map.yaml", 'key "image"', "random_map.png", "does not exist"],
    "map_invalid_C": ["map_invalid_C/map_lines.yaml", 'key "data"', "random_file.dat", "does not exist"],
    "map_invalid_D": ["map_invalid_D/map_lines.dat", "line 6"],
    "map_invalid_E": ["map_invalid_E/map_lines.yaml", 'key "scale" is missing'],
    "model_invalid_A": ["model_invalid_A/turtlebot.model.yaml", 'key "bodies" must be a list'],
    "model_invalid_B": ["turtlebot.model.yaml", 'bodies[0] ("base").footprints[1]', 'key "points"', "got 2"],
    "model_invalid_C": ["turtlebot.model.yaml", 'joints[1] ("right_wheel_weld")', 'key "anchor"', "[0, 0, 3]"],
    "model_invalid_D": ["turtlebot.model.yaml", 'joints[0] ("left_wheel_weld")', '"left_wheel_123"'],
    "model_invalid_E": ["turtlebot.model.yaml", 'bodies[1] ("left_wheel")', 'key "layers"', "random_layer"],
    "model_invalid_F": ["turtlebot.model.yaml", "footprints[0]", 'unrecognized key(s) "random_paramter"'],
    "model_invalid_G": ["turtlebot.model.yaml", 'bodies[0] ("base")', 'unrecognized key(s) "random_paramter"'],
    "model_invalid_H": ["turtlebot.model.yaml", 'key "bodies"', 'body named "base"'],
    "model_invalid_I": ["turtlebot.model.yaml", 'key "joints"', 'joint named "wheel_weld"'],
    "model_invalid_J": ["turtlebot.model.yaml", 'bodies[0] ("base").footprints[1]', 'key "points"', "got 9"],
}


@pytest.mark.parametrize("case", sorted(INVALID_CASES))
def test_invalid_worlds_fail_with_clear_errors(case: str) -> None:
    with pytest.raises(ConfigError) as info:
        World.from_file(LOAD_WORLD_TESTS / case / "world.yaml")
    message = str(info.value)
    assert "\n" not in message
    for fact in INVALID_CASES[case]:
        assert fact in message, f"{fact!r} not in {message!r}"


def test_missing_world_path_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "world.yaml"
    with pytest.raises(ConfigError, match=f'world file "{missing}" does not exist'):
        World.from_file(missing)


def test_model_errors_name_the_world_entry() -> None:
    with pytest.raises(ConfigError) as info:
        World.from_file(LOAD_WORLD_TESTS / "model_invalid_B" / "world.yaml")
    assert str(info.value).startswith(str(LOAD_WORLD_TESTS / "model_invalid_B" / "world.yaml") + ": models[0]")


def test_every_reference_world_loads() -> None:
    """The valid worlds of the conformance data (and the demo world) load."""
    from test.conftest import DEMO_WORLD

    for path in [LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml", DEMO_WORLD]:
        world = World.from_file(path)
        assert world.layers and world.models
        world.step(10)
        assert math.isclose(world.time.sim_time, 10 * world.time.step_size)
        world.close()


def _valid_reference_worlds() -> list:
    from test.conftest import FLATLAND_DATA

    return sorted(
        path
        for path in FLATLAND_DATA.rglob("world*.yaml")
        if "invalid" not in str(path.relative_to(FLATLAND_DATA)) and "plugin_manager_tests" not in str(path)
    )


@pytest.mark.parametrize("path", _valid_reference_worlds(), ids=lambda p: str(p.parent.name) + "/" + p.name)
def test_every_valid_reference_world_loads_and_runs(path: Path) -> None:
    world = World.from_file(path, step_size=0.01)
    world.step(20)
    assert world.time.iterations == 20
    world.close()
