"""Pedestrians as entities of the standard interface: CATEGORY_HUMAN, listed, filtered, read,
moved, spawned (pedestrian://<crowd>) and deleted, in process."""

from __future__ import annotations

import math

import pytest
from simulation_interfaces.msg import Bounds, EntityCategory, EntityFilters, EntityInfo, Result
from simulation_interfaces.srv import (
    GetEntities, GetEntitiesStates, GetEntityBounds, GetEntityInfo, GetSpawnables, SetEntityInfo, SetEntityState,
)
from geometry_msgs.msg import Vector3

from test.conftest import REPO_ROOT
from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import (  # noqa: F401 - the module fixture
    delete, pose, request, ros_context_module, spawn, spawnable_uri, state_of,
)

CROWD_WORLD = REPO_ROOT / "config" / "worlds" / "crowd" / "world.yaml"


@pytest.fixture(scope="module")
def crowd(ros_context_module):
    h = Harness(ros_context_module, CROWD_WORLD, start_paused=True)
    yield h
    h.close()


def entities(harness: Harness, **filters) -> list[str]:
    response = harness.call(GetEntities, "/sim_server/get_entities", GetEntities.Request(filters=EntityFilters(**filters)))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    return list(response.entities)


def test_people_are_human_entities_after_the_models(crowd) -> None:
    everyone = entities(crowd)
    people = crowd.server.world.crowds.named("people").names()
    assert everyone == ["cleaner1", *people]
    humans = entities(crowd, categories=[EntityCategory(category=EntityCategory.CATEGORY_HUMAN)])
    assert humans == people
    near = entities(crowd, bounds=Bounds(type=Bounds.TYPE_SPHERE, points=[Vector3(x=30.0, y=14.0), Vector3(x=1.0)]))
    assert set(near) >= {"people_53", "people_54"}  # the two standing at (30, 14)
    assert entities(crowd, filter="people_5[34]") == ["people_53", "people_54"]
    info = crowd.call(GetEntityInfo, "/sim_server/get_entity_info", GetEntityInfo.Request(entity="people_0"))
    assert info.info.category.category == EntityCategory.CATEGORY_HUMAN and "crowd people" in info.info.description
    states = crowd.call(GetEntitiesStates, "/sim_server/get_entities_states",
                        GetEntitiesStates.Request(filters=EntityFilters(filter="people_5[34]")))
    assert [round(s.pose.position.y) for s in states.states] == [14, 14]


def test_a_person_s_state_is_read_set_and_bounded(crowd) -> None:
    got = state_of(crowd, "people_53")
    assert got.result.result == Result.RESULT_OK and got.state.header.frame_id == "map"
    moved = crowd.call(SetEntityState, "/sim_server/set_entity_state", request(
        SetEntityState.Request, entity="people_53",
        state=_state(pose(25.0, 12.0, 1.0), 0.5, 0.0)))
    assert moved.result.result == Result.RESULT_OK, moved.result.error_message
    now = state_of(crowd, "people_53").state
    assert (now.pose.position.x, now.pose.position.y) == pytest.approx((25.0, 12.0), abs=1e-5)
    assert 2 * math.atan2(now.pose.orientation.z, now.pose.orientation.w) == pytest.approx(1.0)
    assert now.twist.linear.x == pytest.approx(0.5)
    turning = crowd.call(SetEntityState, "/sim_server/set_entity_state", request(
        SetEntityState.Request, entity="people_53", state=_state(pose(25.0, 12.0), 0.0, 0.0, 1.0)))
    assert turning.result.result != Result.RESULT_OK and "turns as it walks" in turning.result.error_message
    into_wall = crowd.call(SetEntityState, "/sim_server/set_entity_state", request(
        SetEntityState.Request, entity="people_53", state=_state(pose(9.3, 10.0), 0.0, 0.0)))
    assert into_wall.result.result != Result.RESULT_OK and "wall" in into_wall.result.error_message
    bounds = crowd.call(GetEntityBounds, "/sim_server/get_entity_bounds", GetEntityBounds.Request(entity="people_53"))
    assert [(p.x, p.y) for p in bounds.bounds.points] == [(0.3, 0.3), (-0.3, -0.3)]


def _state(stamped, vx: float, vy: float, wz: float = 0.0):
    from simulation_interfaces.msg import EntityState

    state = EntityState()
    state.header.frame_id = stamped.header.frame_id
    state.pose = stamped.pose
    state.twist.linear.x, state.twist.linear.y, state.twist.angular.z = vx, vy, wz
    return state


def test_people_are_spawned_by_crowd_and_deleted(crowd) -> None:
    world = crowd.server.world
    listed = crowd.call(GetSpawnables, "/sim_server/get_spawnables", GetSpawnables.Request())
    assert "pedestrian://people" in [spawnable_uri(s) for s in listed.spawnables]
    route = "{waypoints: [[30, 5], [35, 5]], speed: 1.1}"
    made = spawn(crowd, name="", allow_renaming=True, uri="pedestrian://people", resource_string=route,
                 initial_pose=pose(25.0, 5.0))
    assert made.result.result == Result.RESULT_OK, made.result.error_message
    assert made.entity_name.startswith("people_") and world.crowds.find(made.entity_name) is not None
    named = spawn(crowd, name="visitor", uri="pedestrian://people", initial_pose=pose(26.0, 3.0))
    assert named.entity_name == "visitor"
    again = spawn(crowd, name="visitor", allow_renaming=True, uri="pedestrian://people", initial_pose=pose(27.0, 3.0))
    assert again.entity_name == "visitor_1"
    for fields, fact in (
        (dict(name="x1", uri="pedestrian://nobody"), "no crowd"),
        (dict(name="x2", uri="pedestrian://people", initial_pose=pose(9.3, 10.0)), "wall"),
        (dict(name="x3", uri="pedestrian://people", resource_string="{waypoints: [[1e9, 0]]}"), "waypoints"),
        (dict(name="x4", uri="pedestrian://people", resource_string="{speed: -1}"), "speed"),
        (dict(name="x5", uri="pedestrian://people", resource_string="{flies: true}"), "flies"),
        (dict(name="cleaner1", uri="pedestrian://people"), "exists already"),
    ):
        refused = spawn(crowd, **fields)
        assert refused.result.result != Result.RESULT_OK and fact in refused.result.error_message, refused.result
        assert world.crowds.find(fields["name"]) is None
    for name in (made.entity_name, "visitor", "visitor_1"):
        assert delete(crowd, name).result == Result.RESULT_OK and world.crowds.find(name) is None
    assert delete(crowd, "visitor").result == Result.RESULT_NOT_FOUND


def test_info_given_to_a_person_leaves_with_it(crowd) -> None:
    made = spawn(crowd, name="guest", uri="pedestrian://people", initial_pose=pose(33.0, 8.0))
    assert made.result.result == Result.RESULT_OK
    info = EntityInfo(category=EntityCategory(category=EntityCategory.CATEGORY_ROBOT), description="a robot in disguise")
    given = crowd.call(SetEntityInfo, "/sim_server/set_entity_info", SetEntityInfo.Request(entity="guest", info=info))
    assert given.result.result == Result.RESULT_OK
    read = crowd.call(GetEntityInfo, "/sim_server/get_entity_info", GetEntityInfo.Request(entity="guest"))
    assert read.info.description == "a robot in disguise"
    assert delete(crowd, "guest").result == Result.RESULT_OK
    spawn(crowd, name="guest", uri="pedestrian://people", initial_pose=pose(33.0, 8.0))
    read = crowd.call(GetEntityInfo, "/sim_server/get_entity_info", GetEntityInfo.Request(entity="guest"))
    assert read.info.category.category == EntityCategory.CATEGORY_HUMAN
    delete(crowd, "guest")
