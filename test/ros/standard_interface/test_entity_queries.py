"""The standard interface's get_entities and get_entities_states with their filters, in process."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Vector3
from simulation_interfaces.msg import Bounds, EntityCategory, EntityFilters, EntityInfo, Result, TagsFilter
from simulation_interfaces.srv import GetEntities, GetEntitiesStates, SetEntityInfo

from sim_server.ros.standard_interface.entity_queries import MAX_FILTER_CHARS, MAX_HULL_POINTS
from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import DISC, pose, spawn

SQUARE = (
    "bodies:\n  - name: base\n    type: static\n    footprints:\n"
    "      - {type: polygon, points: [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]], density: 0}\n"
)
#: Names and (x, y) of the entities each test adds: discs of radius 0.2 m, and one static square.
PLACED = {"rover_1": (10.0, 0.0), "rover_2": (12.0, 0.0), "rover_10": (10.0, 3.0), "crate": (14.0, 0.0)}


def filters(expression: str = "", categories=(), tags=(), all_tags: bool = False, bounds: Bounds | None = None):
    return EntityFilters(
        filter=expression, categories=[EntityCategory(category=c) for c in categories],
        tags=TagsFilter(tags=list(tags), filter_mode=TagsFilter.FILTER_MODE_ALL if all_tags else TagsFilter.FILTER_MODE_ANY),
        bounds=bounds or Bounds(),
    )


def entities(harness: Harness, given: EntityFilters) -> GetEntities.Response:
    return harness.call(GetEntities, "/sim_server/get_entities", GetEntities.Request(filters=given))


def names(harness: Harness, given: EntityFilters) -> list[str]:
    response = entities(harness, given)
    assert response.result.result == Result.RESULT_OK, response.result
    return list(response.entities)


def sphere(x: float, y: float, z: float, radius: float) -> Bounds:
    return Bounds(type=Bounds.TYPE_SPHERE, points=[Vector3(x=x, y=y, z=z), Vector3(x=radius)])


def box(low: tuple, high: tuple) -> Bounds:
    return Bounds(type=Bounds.TYPE_BOX, points=[Vector3(x=high[0], y=high[1], z=high[2]), Vector3(x=low[0], y=low[1], z=low[2])])


def hull(*points: tuple) -> Bounds:
    return Bounds(type=Bounds.TYPE_CONVEX_HULL, points=[Vector3(x=x, y=y, z=z) for x, y, z in points])


@pytest.fixture
def placed(harness):
    for name, (x, y) in PLACED.items():
        text = SQUARE if name == "crate" else DISC
        assert spawn(harness, name=name, resource_string=text, initial_pose=pose(x, y)).result.result == Result.RESULT_OK
    given = EntityInfo(category=EntityCategory(category=EntityCategory.CATEGORY_ROBOT), tags=["fast", "red"])
    request = SetEntityInfo.Request(entity="rover_2", info=given)
    assert harness.call(SetEntityInfo, "/sim_server/set_entity_info", request).result.result == Result.RESULT_OK
    given = EntityInfo(category=EntityCategory(category=EntityCategory.CATEGORY_DYNAMIC_OBJECT), tags=["red"])
    request = SetEntityInfo.Request(entity="rover_10", info=given)
    assert harness.call(SetEntityInfo, "/sim_server/set_entity_info", request).result.result == Result.RESULT_OK
    yield
    for name in PLACED:
        harness.server.world.delete_model(name)


def test_no_filter_gives_every_entity_in_order(harness, placed) -> None:
    assert names(harness, filters()) == list(harness.server.world.models)
    assert names(harness, filters())[-4:] == list(PLACED)


def test_name_filter_matches_whole_names_as_posix_extended(harness, placed) -> None:
    assert names(harness, filters("rover_[0-9]")) == ["rover_1", "rover_2"]
    assert names(harness, filters("rover_[[:digit:]]+")) == ["rover_1", "rover_2", "rover_10"]
    assert names(harness, filters("rover")) == []  # the whole name must match
    assert names(harness, filters("(crate|rover_1)")) == ["rover_1", "crate"]
    assert names(harness, filters("rover_1{1,2}0?")) == ["rover_1", "rover_10"]


def test_category_and_tag_filters(harness, placed) -> None:
    robots = names(harness, filters(categories=[EntityCategory.CATEGORY_ROBOT]))
    assert "rover_2" in robots and "rover_1" not in robots
    assert names(harness, filters("rover.*|crate", categories=[EntityCategory.CATEGORY_DYNAMIC_OBJECT])) == ["rover_1", "rover_10"]
    assert names(harness, filters(categories=[EntityCategory.CATEGORY_STATIC_OBJECT]))[-1] == "crate"
    assert names(harness, filters(tags=["red"])) == ["rover_2", "rover_10"]
    assert names(harness, filters(tags=["red", "fast"])) == ["rover_2", "rover_10"]
    assert names(harness, filters(tags=["red", "fast"], all_tags=True)) == ["rover_2"]
    assert names(harness, filters(tags=["blue"])) == []
    assert names(harness, filters("rover_10", tags=["fast", "red"])) == ["rover_10"]


def test_bounds_filters(harness, placed) -> None:
    # Discs of radius 0.2 at (10, 0), (12, 0), (10, 3); the square's side 1 around (14, 0).
    assert names(harness, filters(bounds=sphere(10.5, 0.0, 0.0, 0.3))) == ["rover_1"]  # touches it
    assert names(harness, filters(bounds=sphere(10.5, 0.0, 0.0, 0.2999))) == []
    assert names(harness, filters(bounds=sphere(11.0, 0.0, 0.0, 0.85))) == ["rover_1", "rover_2"]
    assert names(harness, filters(bounds=sphere(11.0, 0.0, 0.6, 1.0))) == ["rover_1", "rover_2"]  # section radius 0.8
    assert names(harness, filters(bounds=sphere(11.0, 0.0, 0.8, 1.0))) == []  # section radius 0.6
    assert names(harness, filters(bounds=sphere(11.0, 0.0, 2.0, 1.0))) == []  # above the plane
    # 0.583 m from the square's corner (13.5, 0.5).
    assert names(harness, filters(bounds=sphere(13.0, 0.8, 0.0, 0.6))) == ["crate"]
    assert names(harness, filters(bounds=sphere(13.0, 0.8, 0.0, 0.55))) == []
    assert names(harness, filters(bounds=box((9.0, -1.0, -1.0), (13.6, 2.7, 1.0)))) == ["rover_1", "rover_2", "crate"]
    assert names(harness, filters(bounds=box((9.0, -1.0, 0.5), (13.6, 2.7, 1.0)))) == []
    # A triangle whose long side passes between rover_10 and the others.
    triangle = hull((9.0, -1.0, 0.0), (15.0, -1.0, 0.0), (9.0, 2.5, 0.0))
    assert names(harness, filters(bounds=triangle)) == ["rover_1", "rover_2", "crate"]
    # A pyramid cut by the plane: its section is the square of side 2 around (10, 3).
    pyramid = hull((9.0, 2.0, -1.0), (11.0, 2.0, -1.0), (11.0, 4.0, -1.0), (9.0, 4.0, -1.0), (10.0, 3.0, 1.0),
                   (8.0, 1.0, -3.0), (12.0, 1.0, -3.0), (12.0, 5.0, -3.0), (8.0, 5.0, -3.0))
    assert names(harness, filters(bounds=pyramid)) == ["rover_10"]
    assert names(harness, filters("rover.*", bounds=box((0.0, -10.0, 0.0), (100.0, 10.0, 0.0)))) == ["rover_1", "rover_2", "rover_10"]


def test_bounds_follow_the_entities(harness, placed) -> None:
    world = harness.server.world
    from sim_server.core.geometry import Pose2D

    world.move_model("rover_1", Pose2D(30.0, 30.0, 0.0))
    assert names(harness, filters(bounds=sphere(30.0, 30.3, 0.0, 0.1))) == ["rover_1"]


def test_states_come_with_the_names(harness, placed) -> None:
    world = harness.server.world
    world.models["rover_1"].set_twist(0.5, 0.0, 0.25)
    response = harness.call(GetEntitiesStates, "/sim_server/get_entities_states",
                            GetEntitiesStates.Request(filters=filters("rover_.*")))
    assert response.result.result == Result.RESULT_OK
    assert list(response.entities) == ["rover_1", "rover_2", "rover_10"] and len(response.states) == 3
    for name, state in zip(response.entities, response.states):
        x, y = PLACED[name]
        assert (state.pose.position.x, state.pose.position.y) == pytest.approx((x, y), abs=1e-6)
        assert state.header.frame_id == "map"
    assert (response.states[0].twist.linear.x, response.states[0].twist.angular.z) == pytest.approx((0.5, 0.25))
    refused = harness.call(GetEntitiesStates, "/sim_server/get_entities_states",
                           GetEntitiesStates.Request(filters=filters("(")))
    assert refused.result.result == Result.RESULT_OPERATION_FAILED and list(refused.entities) == [] and list(refused.states) == []


@pytest.mark.parametrize(
    "given, code, fact",
    [
        (filters("("), Result.RESULT_OPERATION_FAILED, "missing )"),
        (filters("\\d+"), Result.RESULT_OPERATION_FAILED, "not a POSIX extended"),  # Perl, not POSIX
        (filters("a{1001}"), Result.RESULT_OPERATION_FAILED, "not a POSIX extended"),
        (filters("((a{100}){100}){100}"), Result.RESULT_OPERATION_FAILED, "not a POSIX extended"),
        (filters("x" * (MAX_FILTER_CHARS + 1)), Result.RESULT_OPERATION_FAILED, "limit"),
        (filters(categories=[3]), Result.RESULT_OPERATION_FAILED, "filters.categories has 3"),
        (filters(categories=[1, 200]), Result.RESULT_OPERATION_FAILED, "filters.categories has 200"),
        (filters(tags=["a"]), None, None),  # placeholder replaced below: an unknown filter mode
        (filters(bounds=Bounds(type=7, points=[])), Result.RESULT_FEATURE_UNSUPPORTED, "filters.bounds.type 7"),
        (filters(bounds=Bounds(type=Bounds.TYPE_SPHERE, points=[Vector3()])), Result.RESULT_OPERATION_FAILED, "2 points"),
        (filters(bounds=sphere(0.0, 0.0, 0.0, -1.0)), Result.RESULT_OPERATION_FAILED, "negative"),
        (filters(bounds=sphere(math.nan, 0.0, 0.0, 1.0)), Result.RESULT_OPERATION_FAILED, "points[0]"),
        (filters(bounds=sphere(0.0, 0.0, 0.0, math.inf)), Result.RESULT_OPERATION_FAILED, "points[1]"),
        (filters(bounds=box((0, 0, 0), (1e10, 1, 1))), Result.RESULT_OPERATION_FAILED, "within"),
        (filters(bounds=Bounds(type=Bounds.TYPE_BOX, points=[Vector3()] * 3)), Result.RESULT_OPERATION_FAILED, "2 points"),
        (filters(bounds=hull((0, 0, 0), (1, 0, 0))), Result.RESULT_OPERATION_FAILED, "3 to"),
        (filters(bounds=hull(*[(i, 0, 0) for i in range(MAX_HULL_POINTS + 1)])), Result.RESULT_OPERATION_FAILED, "3 to"),
    ],
)
def test_bad_filters_are_refused_with_their_field(harness, given, code, fact) -> None:
    if code is None:
        given.tags.filter_mode = 2
        code, fact = Result.RESULT_OPERATION_FAILED, "filter_mode 2"
    response = entities(harness, given)
    assert response.result.result == code and fact in response.result.error_message, response.result
    assert list(response.entities) == []


def test_generated_filters_agree_with_python(harness, placed) -> None:
    """Random expressions over the names' alphabet: RE2's answer equals Python's full match
    (their syntax agrees on these), and a pathological one is answered."""
    import re

    rng = np.random.default_rng(3)
    atoms = ["r", "o", "v", "e", "_", "1", "0", "2", ".", "[0-9]", "[a-z]", "(ro|ve)", "c", "a", "t"]
    everyone = list(harness.server.world.models)
    for _ in range(60):
        expression = "".join(
            rng.choice(atoms) + str(rng.choice(["", "*", "+", "?"])) for _ in range(rng.integers(1, 8))
        )
        expected = [name for name in everyone if re.fullmatch(expression, name)]
        assert names(harness, filters(expression)) == expected, expression
    # Exponential for a backtracking matcher (it would not answer within the harness's wait
    # limit); one linear pass for RE2.
    longest = "a" * 100
    assert spawn(harness, name=longest, resource_string=DISC, initial_pose=pose(40.0, 40.0)).result.result == Result.RESULT_OK
    assert names(harness, filters("(a|aa)*b")) == []
    assert names(harness, filters("(a|aa)*")) == [longest]
    harness.server.world.delete_model(longest)
