"""The standard interface's get_entity_info and set_entity_info, in process."""

from __future__ import annotations

import numpy as np
from simulation_interfaces.msg import EntityCategory, EntityInfo, Result
from simulation_interfaces.srv import GetEntityInfo, SetEntityInfo

from sim_server.ros.standard_interface.entity_info import CATEGORIES, MAX_DESCRIPTION_CHARS, MAX_TAG_CHARS, MAX_TAGS
from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import DISC, spawn


def info(harness: Harness, name: str) -> GetEntityInfo.Response:
    return harness.call(GetEntityInfo, "/sim_server/get_entity_info", GetEntityInfo.Request(entity=name))


def set_info(harness: Harness, name: str, category: int = 0, description: str = "", tags=()) -> Result:
    given = EntityInfo(category=EntityCategory(category=category), description=description, tags=list(tags))
    return harness.call(SetEntityInfo, "/sim_server/set_entity_info", SetEntityInfo.Request(entity=name, info=given)).result


def test_categories_from_the_model(harness) -> None:
    robot_text = DISC + "plugins:\n  - {type: DiffDrive, name: drive, body: base}\n"
    assert spawn(harness, name="robo", resource_string=robot_text, entity_namespace="robo").result.result == Result.RESULT_OK
    assert spawn(harness, name="ball", resource_string=DISC).result.result == Result.RESULT_OK
    robot, ball, chair = info(harness, "robo"), info(harness, "ball"), info(harness, "chair1")
    assert robot.info.category.category == EntityCategory.CATEGORY_ROBOT and "robo" in robot.info.description
    assert ball.info.category.category == EntityCategory.CATEGORY_DYNAMIC_OBJECT
    assert chair.info.category.category == EntityCategory.CATEGORY_STATIC_OBJECT
    assert "chair.model.yaml" in chair.info.description and list(chair.info.tags) == []
    assert spawn(harness, name="plain", uri="turtlebot.model.yaml").result.result == Result.RESULT_OK  # no plugins
    assert info(harness, "plain").info.category.category == EntityCategory.CATEGORY_DYNAMIC_OBJECT
    missing = info(harness, "ghost")
    assert missing.result.result == Result.RESULT_NOT_FOUND and "ghost" in missing.result.error_message
    for name in ("robo", "ball", "plain"):
        harness.server.world.delete_model(name)


def test_set_info_replaces_it_for_that_entity_only(harness) -> None:
    world = harness.server.world
    assert spawn(harness, name="crate", resource_string=DISC).result.result == Result.RESULT_OK
    done = set_info(harness, "crate", EntityCategory.CATEGORY_HUMAN, "a person, for the planner", ["walker", "a", "walker"])
    assert done.result == Result.RESULT_OK
    got = info(harness, "crate").info
    assert got.category.category == EntityCategory.CATEGORY_HUMAN and got.description == "a person, for the planner"
    assert list(got.tags) == ["walker", "a"]  # repeats kept once
    many = set_info(harness, "crate", tags=["a"] * 1000 + ["b"])  # the limit counts different tags
    assert many.result == Result.RESULT_OK and list(info(harness, "crate").info.tags) == ["a", "b"]
    assert set_info(harness, "crate", EntityCategory.CATEGORY_OBJECT).result == Result.RESULT_OK  # replaces all
    got = info(harness, "crate").info
    assert (got.category.category, got.description, list(got.tags)) == (EntityCategory.CATEGORY_OBJECT, "", [])
    # Labels only: the disc is still dynamic, and a new entity of the same name starts afresh.
    assert set_info(harness, "crate", EntityCategory.CATEGORY_STATIC_OBJECT, tags=["x"]).result == Result.RESULT_OK
    world.step(1)
    world.delete_model("crate")
    assert spawn(harness, name="crate", resource_string=DISC).result.result == Result.RESULT_OK
    got = info(harness, "crate").info
    assert got.category.category == EntityCategory.CATEGORY_DYNAMIC_OBJECT and list(got.tags) == []
    world.delete_model("crate")


def test_set_info_refusals_name_the_field_and_change_nothing(harness) -> None:
    world = harness.server.world
    assert spawn(harness, name="box", resource_string=DISC).result.result == Result.RESULT_OK
    assert set_info(harness, "box", EntityCategory.CATEGORY_ROBOT, "kept", ["kept"]).result == Result.RESULT_OK
    rng = np.random.default_rng(5)
    bad_categories = [c for c in range(256) if c not in CATEGORIES]
    cases = [
        ({"category": int(c)}, "info.category") for c in rng.choice(bad_categories, 12, replace=False)
    ] + [
        ({"description": "d" * (MAX_DESCRIPTION_CHARS + 1)}, "info.description"),
        ({"tags": [f"t{i}" for i in range(MAX_TAGS + 1)]}, f"{MAX_TAGS + 1} different tags"),
        ({"tags": ["ok", ""]}, "info.tags[1] is empty"),
        ({"tags": ["x" * (MAX_TAG_CHARS + 1)]}, "info.tags[0]"),
    ]
    for fields, fact in cases:
        refused = set_info(harness, "box", **fields)
        assert refused.result == Result.RESULT_OPERATION_FAILED and fact in refused.error_message, (fields, refused)
        got = info(harness, "box").info
        assert (got.category.category, got.description, list(got.tags)) == (EntityCategory.CATEGORY_ROBOT, "kept", ["kept"])
    missing = set_info(harness, "ghost")
    assert missing.result == Result.RESULT_NOT_FOUND
    world.delete_model("box")
