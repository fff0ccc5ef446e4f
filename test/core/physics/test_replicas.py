"""Replicas: copies of a world side by side in one physics world, apart and named by copy."""

from __future__ import annotations

import gc
import math
from pathlib import Path

import numpy as np
import pytest

from sim_server.core import ConfigError, Pose2D, World
from sim_server.core.physics.replicas import MAX_REPLICAS, Replicas, extent
from sim_server.learning.task import DEFAULT_WORLD
from test.conftest import DATA_DIR


def walls_box(world: World, index: int) -> tuple[float, float, float, float]:
    """The box around copy ``index``'s walls (every copy has one layer in the learning room)."""
    edges = world.layers[index].world_edges()
    return extent([(edges[:, [0, 2]].min(), edges[:, [1, 3]].min(), edges[:, [0, 2]].max(), edges[:, [1, 3]].max())], [])


def test_one_copy_is_the_world_as_it_is() -> None:
    world = World.from_file(DEFAULT_WORLD, replicas=Replicas(1))
    try:
        assert list(world.models) == ["robot"] and len(world.layers) == 1
        assert world.replica_offsets == (Pose2D(),)
    finally:
        world.close()


@pytest.mark.parametrize("count", [2, 3, 7, 16])
def test_copies_are_named_placed_and_apart(count: int) -> None:
    margin = 3.5
    world = World.from_file(DEFAULT_WORLD, replicas=Replicas(count, margin))
    try:
        assert list(world.models) == [f"robot_{i}" for i in range(count)]
        assert [model.namespace for model in world.models.values()] == [""] * count  # none stays none
        assert world.replicas.name("ns", 3) == "ns_3" and world.replicas.name("", 3) == ""
        assert len(world.layers) == count and {layer.name for layer in world.layers} == {"walls"}
        original = world.layers[0].world_edges()
        start = world.spec.models[0].pose
        for index, offset in enumerate(world.replica_offsets):
            shifted = original + np.array([offset.x, offset.y, offset.x, offset.y])
            assert np.allclose(world.layers[index].world_edges(), shifted)
            pose = world.model(f"robot_{index}").pose
            assert (pose.x, pose.y) == pytest.approx((start.x + offset.x, start.y + offset.y), abs=1e-5)
        boxes = [walls_box(world, index) for index in range(count)]
        for i in range(count):
            for j in range(i + 1, count):
                a, b = boxes[i], boxes[j]
                gap = max(b[0] - a[2], a[0] - b[2], b[1] - a[3], a[1] - b[3])
                assert gap >= margin - 1e-9, (i, j, gap)
        # A reset brings every copy back.
        world.model("robot_1").set_pose(Pose2D(100.0, 100.0, 0.0))
        world.reset()
        assert len(world.models) == count and world.model("robot_1").pose.x == pytest.approx(start.x + world.replica_offsets[1].x, abs=1e-5)
    finally:
        world.close()


def test_copies_do_not_touch_each_other() -> None:
    """Every robot driven hard for a while: it touches only its own copy's walls."""
    world = World.from_file(DEFAULT_WORLD, step_size=0.02, replicas=Replicas(9, 1.0))
    try:
        for index, model in enumerate(world.models.values()):
            drive = world.plugins.find(model, "drive")
            drive.command.linear, drive.command.angular = 2.0, 0.3 * (index - 4)
        boxes = {f"robot_{index}": walls_box(world, index) for index in range(9)}
        touched = 0
        for _ in range(500):
            world.step()
            for contact in world.contacts():
                robots = [name for name in (contact.entity_a, contact.entity_b) if name in boxes]
                assert len(robots) == 1, contact
                x_min, y_min, x_max, y_max = boxes[robots[0]]
                for x, y in contact.points:
                    assert x_min - 0.01 <= x <= x_max + 0.01 and y_min - 0.01 <= y <= y_max + 0.01, contact
                touched += 1
        assert touched  # the robots did run into walls
        for index, model in enumerate(world.models.values()):
            x_min, y_min, x_max, y_max = walls_box(world, index)
            assert x_min < model.pose.x < x_max and y_min < model.pose.y < y_max
    finally:
        world.close()


@pytest.mark.parametrize(
    "count, margin",
    [(0, 10.0), (-3, 10.0), (MAX_REPLICAS + 1, 10.0), (2.0, 10.0), (True, 10.0), ("4", 10.0),
     (2, 0.5), (2, -1.0), (2, math.nan), (2, math.inf), (2, 1e9), (2, "5"), (2, None)],
)
def test_bad_counts_and_margins_are_refused_naming_them(count, margin) -> None:
    with pytest.raises(ValueError, match=r"replicas: (count|margin) must be"):
        Replicas(count, margin)


def test_a_world_with_streamed_levels_is_not_replicated() -> None:
    with pytest.raises(ConfigError, match="streamed levels or layers cannot be replicated"):
        World.from_file(DATA_DIR / "levels" / "world.yaml", enable_levels=True, replicas=Replicas(2))
    world = World.from_file(DATA_DIR / "levels" / "world.yaml", replicas=Replicas(2))  # levels not streamed
    try:
        assert {"R1_0", "R1_1", "M4_1"} <= set(world.models)
    finally:
        world.close()


def test_names_like_copies_names_stay_apart(tmp_path: Path) -> None:
    (tmp_path / "block.model.yaml").write_text("bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.2, density: 1}]\n")
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers: []\nmodels:\n"
        "  - {name: a, model: block.model.yaml, pose: [0, 0, 0]}\n"
        "  - {name: a_1, model: block.model.yaml, pose: [2, 0, 0]}\n"
    )
    world = World.from_file(tmp_path / "world.yaml", replicas=Replicas(2))
    try:
        assert list(world.models) == ["a_0", "a_1_0", "a_1", "a_1_1"]
        assert world.model("a_1").pose.x > world.model("a_1_0").pose.x
    finally:
        world.close()


def test_a_world_without_walls_is_laid_out_by_its_models(tmp_path: Path) -> None:
    (tmp_path / "block.model.yaml").write_text("bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.2, density: 1}]\n")
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers: []\nmodels:\n  - {name: a, model: block.model.yaml, pose: [0, 0, 0]}\n"
        "  - {name: b, model: block.model.yaml, pose: [4, 0, 0]}\n"
    )
    world = World.from_file(tmp_path / "world.yaml", replicas=Replicas(4, 2.0))
    try:
        assert [(o.x, o.y) for o in world.replica_offsets] == [(0, 0), (6, 0), (0, 6), (6, 6)]
        assert world.model("b_3").pose.x == pytest.approx(10.0)
    finally:
        world.close()


@pytest.mark.parametrize("replicas", [3, None, "x", (2, 10.0)])
def test_replicas_must_be_replicas(replicas) -> None:
    with pytest.raises(ValueError, match="replicas must be a sim_server.core.physics.replicas.Replicas"):
        World.from_file(DEFAULT_WORLD, replicas=replicas)


def test_copies_beyond_the_world_s_coordinates_are_refused() -> None:
    frozen = gc.get_freeze_count()
    with pytest.raises(ConfigError, match=r"400 copies of a world 10 x 10 m large, 10000 m apart, reach .* fewer copies"):
        World.from_file(DEFAULT_WORLD, replicas=Replicas(400, 10000.0))
    assert gc.get_freeze_count() == frozen
