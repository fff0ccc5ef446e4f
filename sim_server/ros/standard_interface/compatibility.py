"""The one place that knows which definitions of ``simulation_interfaces`` are installed, and
where they differ. Imports no rclpy, so it can be asked before the node is made.

Two generations are served, told apart by a field, never by a version number:

* **1.x**: the releases of Humble (1.4.0), Jazzy (1.5.1) and Kilted (1.6.1), which carry the same
  definitions since the backports (spawn_entities, set_entity_state's INVALID_POSE); our own copy
  in compat/simulation_interfaces is built where the ROS installation has none.
* **2.x** (Lyrical, Rolling; 2.0.0 and 2.1.0 so far): SpawnEntity and Spawnable name their model
  with a ``Resource`` (``entity_resource``) instead of ``uri`` and ``resource_string``, LoadWorld
  its world with one (``world_resource``), and SetEntityState's request has the flags
  ``set_pose``, ``set_twist`` and ``set_acceleration`` choosing what is set.

An older release (before the world services, spawn_entities or INVALID_POSE) or none at all turns
the standard interface off with one warning, instead of failing at start-up or at a request.
"""

from __future__ import annotations

import importlib
from typing import Any

#: What the server uses, by submodule: everything both generations define.
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
    "build the package's own copy of the 1.x definitions into your workspace "
    "(colcon build --base-paths . sim_msgs compat/simulation_interfaces)"
)


def fields(message_type: Any) -> dict[str, str]:
    """The fields of a generated message (or request) class: name -> type."""
    return dict(message_type.get_fields_and_field_types())


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
    if missing:
        return f"the installed simulation_interfaces is older than the 1.x this server speaks: it lacks {', '.join(missing)}"
    return None


def generation() -> str:
    """"2.x" or "1.x": the generation of the installed definitions (which must pass
    :func:`interface_problem`), told by SpawnEntity's ``entity_resource``."""
    from simulation_interfaces.srv import SpawnEntity

    return "2.x" if "entity_resource" in fields(SpawnEntity.Request) else "1.x"


def resource_of(request: Any, holder: str) -> tuple[str, str]:
    """(uri, resource_string) of a request of either generation: from its Resource field
    ``holder`` (2.x: SpawnEntity's ``entity_resource``, LoadWorld's ``world_resource``; the
    SpawnEntity message of spawn_entities has one in 1.x too), else from its own two fields."""
    resource = getattr(request, holder, request)
    return resource.uri, resource.resource_string


def spawnable(uri: str, description: str, spawn_bounds: Any) -> Any:
    """A Spawnable message naming the model file ``uri``, of the installed generation."""
    from simulation_interfaces.msg import Resource, Spawnable

    if "entity_resource" in fields(Spawnable):
        return Spawnable(entity_resource=Resource(uri=uri), description=description, spawn_bounds=spawn_bounds)
    return Spawnable(uri=uri, description=description, spawn_bounds=spawn_bounds)


def state_choice(request: Any) -> tuple[bool, bool]:
    """(set the pose, set the twist) of a SetEntityState request: the flags where the definitions
    have them (2.x), both otherwise (1.x sets the whole state). Acceleration is never set here."""
    if hasattr(request, "set_pose"):
        return bool(request.set_pose), bool(request.set_twist)
    return True, True
