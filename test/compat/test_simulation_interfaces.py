"""The simulation_interfaces package as built here (or as the ROS installation provides it) has
the upstream 1.6.1 (ROS 2 Kilted) definitions: every type, field name and type in order, and
every constant. SPEC was taken from ros-simulation/simulation_interfaces at tag 1.6.1 (commit
c6459b7): per type, "name: type, ..." of its fields and "NAME=value, ..." of its constants."""

from __future__ import annotations

import importlib

import pytest

SPEC = {
    "msg/Bounds": ("type: uint8, points: geometry_msgs/Vector3[]", "TYPE_EMPTY=0, TYPE_BOX=1, TYPE_CONVEX_HULL=2, TYPE_SPHERE=3"),
    "msg/EntityCategory": ("category: uint8", "CATEGORY_OBJECT=0, CATEGORY_ROBOT=1, CATEGORY_HUMAN=2, CATEGORY_DYNAMIC_OBJECT=4, CATEGORY_STATIC_OBJECT=5"),
    "msg/EntityFilters": ("filter: string, categories: EntityCategory[], tags: TagsFilter, bounds: Bounds", ""),
    "msg/EntityInfo": ("category: EntityCategory, description: string, tags: string[]", ""),
    "msg/EntityState": ("header: std_msgs/Header, pose: geometry_msgs/Pose, twist: geometry_msgs/Twist, acceleration: geometry_msgs/Accel", ""),
    "msg/NamedPose": ("name: string, description: string, tags: string[], pose: geometry_msgs/Pose", ""),
    "msg/Resource": ("uri: string, resource_string: string", ""),
    "msg/Result": ("result: uint8, error_message: string", "RESULT_FEATURE_UNSUPPORTED=0, RESULT_OK=1, RESULT_NOT_FOUND=2, RESULT_INCORRECT_STATE=3, RESULT_OPERATION_FAILED=4"),
    "msg/SimulationState": ("state: uint8", "STATE_STOPPED=0, STATE_PLAYING=1, STATE_PAUSED=2, STATE_QUITTING=3, STATE_NO_WORLD=4, STATE_LOADING_WORLD=5"),
    "msg/SimulatorFeatures": ("features: uint16[], spawn_formats: string[], custom_info: string", "SPAWNING=0, DELETING=1, NAMED_POSES=2, POSE_BOUNDS=3, ENTITY_TAGS=4, ENTITY_BOUNDS=5, ENTITY_BOUNDS_BOX=6, ENTITY_BOUNDS_CONVEX=7, ENTITY_CATEGORIES=8, SPAWNING_RESOURCE_STRING=9, ENTITY_STATE_GETTING=10, ENTITY_STATE_SETTING=11, ENTITY_INFO_GETTING=12, ENTITY_INFO_SETTING=13, SPAWNABLES=14, SIMULATION_RESET=20, SIMULATION_RESET_TIME=21, SIMULATION_RESET_STATE=22, SIMULATION_RESET_SPAWNED=23, SIMULATION_STATE_GETTING=24, SIMULATION_STATE_SETTING=25, SIMULATION_STATE_PAUSE=26, STEP_SIMULATION_SINGLE=31, STEP_SIMULATION_MULTIPLE=32, STEP_SIMULATION_ACTION=33, WORLD_LOADING=40, WORLD_RESOURCE_STRING=41, WORLD_TAGS=42, WORLD_UNLOADING=43, WORLD_INFO_GETTING=44, AVAILABLE_WORLDS=45, SPAWNING_ENTITIES=50"),
    "msg/SpawnEntity": ("name: string, allow_renaming: bool, entity_resource: Resource, entity_namespace: string, initial_pose: geometry_msgs/PoseStamped", ""),
    "msg/SpawnResult": ("result: Result, entity_name: string", "NAME_NOT_UNIQUE=101, NAME_INVALID=102, UNSUPPORTED_FORMAT=103, NO_RESOURCE=104, NAMESPACE_INVALID=105, RESOURCE_PARSE_ERROR=106, MISSING_ASSETS=107, UNSUPPORTED_ASSETS=108, INVALID_POSE=109"),
    "msg/Spawnable": ("uri: string, description: string, spawn_bounds: Bounds", ""),
    "msg/TagsFilter": ("tags: string[], filter_mode: uint8", "FILTER_MODE_ANY=0, FILTER_MODE_ALL=1"),
    "msg/WorldResource": ("name: string, world_resource: Resource, description: string, tags: string[]", ""),
    "srv/DeleteEntity.Request": ("entity: string", ""),
    "srv/DeleteEntity.Response": ("result: Result", ""),
    "srv/GetAvailableWorlds.Request": ("additional_sources: string[], filter: TagsFilter, offline_only: bool, continue_on_error: bool", ""),
    "srv/GetAvailableWorlds.Response": ("result: Result, worlds: WorldResource[]", "DEFAULT_SOURCES_FAILED=101"),
    "srv/GetCurrentWorld.Request": ("", ""),
    "srv/GetCurrentWorld.Response": ("result: Result, world: WorldResource", "NO_WORLD_LOADED=101"),
    "srv/GetEntities.Request": ("filters: EntityFilters", ""),
    "srv/GetEntities.Response": ("result: Result, entities: string[]", ""),
    "srv/GetEntitiesStates.Request": ("filters: EntityFilters", ""),
    "srv/GetEntitiesStates.Response": ("result: Result, entities: string[], states: EntityState[]", ""),
    "srv/GetEntityBounds.Request": ("entity: string", ""),
    "srv/GetEntityBounds.Response": ("result: Result, bounds: Bounds", ""),
    "srv/GetEntityInfo.Request": ("entity: string", ""),
    "srv/GetEntityInfo.Response": ("result: Result, info: EntityInfo", ""),
    "srv/GetEntityState.Request": ("entity: string", ""),
    "srv/GetEntityState.Response": ("result: Result, state: EntityState", ""),
    "srv/GetNamedPoseBounds.Request": ("name: string", ""),
    "srv/GetNamedPoseBounds.Response": ("result: Result, bounds: Bounds", ""),
    "srv/GetNamedPoses.Request": ("tags: TagsFilter", ""),
    "srv/GetNamedPoses.Response": ("result: Result, poses: NamedPose[]", ""),
    "srv/GetSimulationState.Request": ("", ""),
    "srv/GetSimulationState.Response": ("state: SimulationState, result: Result", ""),
    "srv/GetSimulatorFeatures.Request": ("", ""),
    "srv/GetSimulatorFeatures.Response": ("features: SimulatorFeatures", ""),
    "srv/GetSpawnables.Request": ("sources: string[]", ""),
    "srv/GetSpawnables.Response": ("result: Result, spawnables: Spawnable[]", ""),
    "srv/LoadWorld.Request": ("uri: string, resource_string: string, fail_on_unsupported_element: bool, ignore_missing_or_unsupported_assets: bool", ""),
    "srv/LoadWorld.Response": ("result: Result, world: WorldResource", "UNSUPPORTED_FORMAT=101, NO_RESOURCE=102, RESOURCE_PARSE_ERROR=103, MISSING_ASSETS=104, UNSUPPORTED_ASSETS=105, UNSUPPORTED_ELEMENTS=106"),
    "srv/ResetSimulation.Request": ("scope: uint8", "SCOPE_DEFAULT=0, SCOPE_TIME=1, SCOPE_STATE=2, SCOPE_SPAWNED=4, SCOPE_ALL=255"),
    "srv/ResetSimulation.Response": ("result: Result", ""),
    "srv/SetEntityInfo.Request": ("entity: string, info: EntityInfo", ""),
    "srv/SetEntityInfo.Response": ("result: Result", ""),
    "srv/SetEntityState.Request": ("entity: string, state: EntityState", ""),
    "srv/SetEntityState.Response": ("result: Result", "INVALID_POSE=101"),
    "srv/SetSimulationState.Request": ("state: SimulationState", ""),
    "srv/SetSimulationState.Response": ("result: Result", "ALREADY_IN_TARGET_STATE=101, STATE_TRANSITION_ERROR=102, INCORRECT_TRANSITION=103"),
    "srv/SpawnEntities.Request": ("spawn_requests: SpawnEntity[]", ""),
    "srv/SpawnEntities.Response": ("result: Result, results: SpawnResult[]", "ENTITIES_SPAWN_FAILED=150"),
    "srv/SpawnEntity.Request": ("name: string, allow_renaming: bool, uri: string, resource_string: string, entity_namespace: string, initial_pose: geometry_msgs/PoseStamped", ""),
    "srv/SpawnEntity.Response": ("result: Result, entity_name: string", "NAME_NOT_UNIQUE=101, NAME_INVALID=102, UNSUPPORTED_FORMAT=103, NO_RESOURCE=104, NAMESPACE_INVALID=105, RESOURCE_PARSE_ERROR=106, MISSING_ASSETS=107, UNSUPPORTED_ASSETS=108, INVALID_POSE=109"),
    "srv/StepSimulation.Request": ("steps: uint64", ""),
    "srv/StepSimulation.Response": ("result: Result", ""),
    "srv/UnloadWorld.Request": ("", ""),
    "srv/UnloadWorld.Response": ("result: Result", "NO_WORLD_LOADED=101"),
    "action/SimulateSteps.Goal": ("steps: uint64", ""),
    "action/SimulateSteps.Result": ("result: Result", ""),
    "action/SimulateSteps.Feedback": ("completed_steps: uint64, remaining_steps: uint64", ""),
}


def rclpy_type(definition: str) -> str:
    """A field type as written in a .msg file, the way rclpy's get_fields_and_field_types() names it."""
    if definition.endswith("[]"):
        return f"sequence<{rclpy_type(definition[:-2])}>"
    if definition == "bool":
        return "boolean"
    if "/" not in definition and definition[0].isupper():
        return f"simulation_interfaces/{definition}"
    return definition


def type_of(name: str):
    kind, rest = name.split("/")
    stem, _, part = rest.partition(".")
    found = getattr(importlib.import_module(f"simulation_interfaces.{kind}"), stem)
    return getattr(found, part) if part else found


@pytest.mark.parametrize("name", sorted(SPEC))
def test_fields_and_constants_are_upstreams(name: str) -> None:
    fields, constants = SPEC[name]
    generated = type_of(name)
    expected_fields = [tuple(item.split(": ")) for item in fields.split(", ")] if fields else []
    assert list(generated.get_fields_and_field_types().items()) == [(n, rclpy_type(t)) for n, t in expected_fields]
    for item in constants.split(", ") if constants else []:
        constant, value = item.split("=")
        assert getattr(generated, constant) == int(value), constant


def test_every_type_is_there() -> None:
    assert sum(1 for name in SPEC if name.startswith("msg/")) == 15
    assert len({name.split(".")[0] for name in SPEC if name.startswith("srv/")}) == 22
    assert {name for name in SPEC if name.startswith("action/")} == {
        "action/SimulateSteps.Goal", "action/SimulateSteps.Result", "action/SimulateSteps.Feedback"
    }


def test_defaults() -> None:
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation

    assert StepSimulation.Request().steps == 1  # "uint64 steps 1"
    assert Result().result == Result.RESULT_FEATURE_UNSUPPORTED  # an empty Result reads as unsupported
