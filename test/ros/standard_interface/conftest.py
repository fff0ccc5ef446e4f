"""Shared by the standard interface's in-process tests: one paused server per test module
(``harness``) and the requests they send."""

from __future__ import annotations

import math

import pytest
from geometry_msgs.msg import PoseStamped
from simulation_interfaces.msg import Result
from simulation_interfaces.srv import DeleteEntity, GetEntityState, SpawnEntity

from test.conftest import LOAD_WORLD_TESTS
from test.ros.conftest import Harness

WORLD = LOAD_WORLD_TESTS / "simple_test_A" / "world.yaml"
#: A model of one dynamic disc of radius 0.2 m.
DISC = "bodies:\n  - name: base\n    footprints: [{type: circle, radius: 0.2, density: 1}]\n"


@pytest.fixture(scope="module")
def harness(ros_context_module):
    h = Harness(ros_context_module, WORLD, start_paused=True)
    yield h
    h.close()


@pytest.fixture(scope="module")
def ros_context_module():
    from rclpy.context import Context

    import rclpy

    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


def pose(x: float = 0.0, y: float = 0.0, yaw: float = 0.0, frame: str = "", q: tuple | None = None) -> PoseStamped:
    stamped = PoseStamped()
    stamped.header.frame_id = frame
    stamped.pose.position.x, stamped.pose.position.y = x, y
    qx, qy, qz, qw = q if q is not None else (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))
    o = stamped.pose.orientation
    o.x, o.y, o.z, o.w = qx, qy, qz, qw
    return stamped


def request(message_type, **fields):
    """A request of the installed definitions, 1.x or 2.x (test_definitions.py runs these tests
    with both): ``uri`` and ``resource_string`` go into the Resource of a 2.x request
    (``entity_resource``, ``world_resource``); a 2.x SetEntityState sets the pose and the twist, as
    1.x always does, unless its flags are given."""
    from simulation_interfaces.msg import Resource

    own = message_type.get_fields_and_field_types()
    for holder in ("entity_resource", "world_resource"):
        if holder in own and ("uri" in fields or "resource_string" in fields):
            fields[holder] = Resource(uri=fields.pop("uri", ""), resource_string=fields.pop("resource_string", ""))
    if "set_pose" in own:
        fields.setdefault("set_pose", True)
        fields.setdefault("set_twist", True)
    return message_type(**fields)


def spawnable_uri(spawnable) -> str:
    """The model file a Spawnable names, of either generation."""
    return spawnable.entity_resource.uri if hasattr(spawnable, "entity_resource") else spawnable.uri


def spawn(harness: Harness, **fields) -> SpawnEntity.Response:
    fields.setdefault("initial_pose", pose())
    return harness.call(SpawnEntity, "/sim_server/spawn_entity", request(SpawnEntity.Request, **fields))


def delete(harness: Harness, name: str) -> Result:
    return harness.call(DeleteEntity, "/sim_server/delete_entity", DeleteEntity.Request(entity=name)).result


def state_of(harness: Harness, name: str) -> GetEntityState.Response:
    return harness.call(GetEntityState, "/sim_server/get_entity_state", GetEntityState.Request(entity=name))
