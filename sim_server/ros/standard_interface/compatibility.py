"""Whether the installed ``simulation_interfaces`` is one this server speaks: the Kilted release
1.6.1 (or a later 1.x), with every message, service and action it defines. An older release (the
world services came in 1.3, spawn_entities in 1.6.0, set_entity_state's INVALID_POSE in 1.6.1), a
2.x one (Rolling: other request fields) or none at all turns the standard interface off with one
warning, instead of failing at start-up or at the first request.
Imports no rclpy, so it can be asked before the node is made.
"""

from __future__ import annotations

import importlib

#: What the server uses, by submodule: the whole of 1.6.1.
REQUIRED = {
    "msg": (
        "Bounds", "EntityCategory", "EntityFilters", "EntityInfo", "EntityState", "NamedPose", "Resource", "Result",
        "SimulationState", "SimulatorFeatures", "SpawnEntity", "SpawnResult", "Spawnable", "TagsFilter",
        "WorldResource",
    ),
    "srv": (
        "DeleteEntity", "GetAvailableWorlds", "GetCurrentWorld", "GetEntities", "GetEntitiesStates", "GetEntityBounds",
        "GetEntityInfo", "GetEntityState", "GetNamedPoseBounds", "GetNamedPoses", "GetSimulationState",
        "GetSimulatorFeatures", "GetSpawnables", "LoadWorld", "ResetSimulation", "SetEntityInfo", "SetEntityState",
        "SetSimulationState", "SpawnEntities", "SpawnEntity", "StepSimulation", "UnloadWorld",
    ),
    "action": ("SimulateSteps",),
}
#: How to get the definitions this server needs where the installed ones are older.
REMEDY = (
    "build the package's own copy of the 1.6.1 definitions into your workspace "
    "(colcon build --base-paths . sim_msgs compat/simulation_interfaces)"
)


def interface_problem() -> str | None:
    """Why the installed simulation_interfaces cannot serve (None when it can)."""
    missing = []
    for submodule, names in REQUIRED.items():
        try:
            module = importlib.import_module(f"simulation_interfaces.{submodule}")
        except ImportError as exc:
            return f"simulation_interfaces cannot be imported ({exc})"
        missing += [f"{submodule}/{name}" for name in names if not hasattr(module, name)]
    if not missing:
        services = importlib.import_module("simulation_interfaces.srv")
        if not hasattr(services.SetEntityState.Response, "INVALID_POSE"):
            missing.append("srv/SetEntityState INVALID_POSE")
        elif "uri" not in services.SpawnEntity.Request.get_fields_and_field_types():
            return "the installed simulation_interfaces is a 2.x release (SpawnEntity takes a Resource), not 1.6.x"
    if missing:
        return f"the installed simulation_interfaces is older than 1.6.1: it lacks {', '.join(missing)}"
    return None
