"""The standard interface's get_named_poses and get_named_pose_bounds, over the demo world's
named poses (and one loaded as text), in process."""

from __future__ import annotations

import math

import pytest
from simulation_interfaces.msg import Bounds, Result, TagsFilter
from simulation_interfaces.srv import GetNamedPoseBounds, GetNamedPoses, LoadWorld

from test.conftest import REPO_ROOT
from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import request

DEMO = REPO_ROOT / "config" / "worlds" / "demo" / "world.yaml"


@pytest.fixture
def harness(ros_context):
    h = Harness(ros_context, DEMO, start_paused=True)
    yield h
    h.close()


def poses(harness: Harness, tags=(), all_tags: bool = False, mode: int | None = None) -> GetNamedPoses.Response:
    given = TagsFilter(tags=list(tags), filter_mode=TagsFilter.FILTER_MODE_ALL if all_tags else TagsFilter.FILTER_MODE_ANY)
    if mode is not None:
        given.filter_mode = mode
    return harness.call(GetNamedPoses, "/sim_server/get_named_poses", GetNamedPoses.Request(tags=given))


def bounds(harness: Harness, name: str) -> GetNamedPoseBounds.Response:
    return harness.call(GetNamedPoseBounds, "/sim_server/get_named_pose_bounds", GetNamedPoseBounds.Request(name=name))


def test_named_poses_of_the_world_file(harness) -> None:
    got = poses(harness)
    assert got.result.result == Result.RESULT_OK
    assert [p.name for p in got.poses] == ["cleaner_start", "walker_start"]
    start = got.poses[0]
    assert (start.pose.position.x, start.pose.position.y) == (12.0, 0.0) and start.pose.orientation.w == 1.0
    assert start.description == "where the cleaner starts" and list(start.tags) == ["spawn"]
    assert [p.name for p in poses(harness, ["spawn"]).poses] == ["cleaner_start", "walker_start"]
    assert [p.name for p in poses(harness, ["goal", "spawn"], all_tags=True).poses] == []
    refused = poses(harness, ["spawn"], mode=7)
    assert refused.result.result == Result.RESULT_OPERATION_FAILED and "tags.filter_mode 7" in refused.result.error_message
    assert list(refused.poses) == []


def test_bounds_of_a_named_pose(harness) -> None:
    sphere = bounds(harness, "cleaner_start")
    assert sphere.result.result == Result.RESULT_OK and sphere.bounds.type == Bounds.TYPE_SPHERE
    centre, radius = sphere.bounds.points
    assert (centre.x, centre.y, centre.z, radius.x) == (12.0, 0.0, 0.0, 1.0)
    empty = bounds(harness, "walker_start")
    assert empty.result.result == Result.RESULT_OK and empty.bounds.type == Bounds.TYPE_EMPTY and list(empty.bounds.points) == []
    missing = bounds(harness, "nowhere")
    assert missing.result.result == Result.RESULT_NOT_FOUND and "nowhere" in missing.result.error_message


def test_named_poses_follow_the_loaded_world(harness) -> None:
    text = (
        "properties: {}\nlayers: []\nnamed_poses:\n"
        f"  - {{name: corner, pose: [-3, 4, {math.pi / 2}], tags: [goal, parking], radius: 0.25}}\n"
    )
    loaded = harness.call(LoadWorld, "/sim_server/load_world", request(LoadWorld.Request, resource_string=text))
    assert loaded.result.result == Result.RESULT_OK, loaded.result
    got = poses(harness, ["parking", "goal"], all_tags=True)
    assert [p.name for p in got.poses] == ["corner"]
    assert 2 * math.atan2(got.poses[0].pose.orientation.z, got.poses[0].pose.orientation.w) == pytest.approx(math.pi / 2)
    assert bounds(harness, "cleaner_start").result.result == Result.RESULT_NOT_FOUND
    assert bounds(harness, "corner").bounds.points[1].x == 0.25
