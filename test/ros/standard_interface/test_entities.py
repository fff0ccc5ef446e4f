"""The standard interface's spawn_entity(ies), delete_entity, get/set_entity_state and
get_entity_bounds, in process."""

from __future__ import annotations

import math
import string

import numpy as np
import pytest
from simulation_interfaces.msg import EntityState, Result
from simulation_interfaces.srv import SpawnEntity

from test.ros.conftest import Harness
from test.ros.standard_interface.conftest import DISC, WORLD, delete, pose, request, spawn, state_of

CODES = SpawnEntity.Response


def test_spawn_by_path_uri_and_resource_string_then_state_and_delete(harness) -> None:
    world = harness.server.world
    by_path = spawn(harness, name="bot", uri="turtlebot.model.yaml", entity_namespace="bot", initial_pose=pose(1.5, -2.0, 0.5))
    assert by_path.result.result == Result.RESULT_OK and by_path.entity_name == "bot"
    model = world.models["bot"]
    assert model.namespace == "bot" and model.pose.x == pytest.approx(1.5) and model.pose.theta == pytest.approx(0.5)
    by_file_uri = spawn(harness, name="chair2", uri=(WORLD.parent / "chair.model.yaml").as_uri(), initial_pose=pose(frame="map"))
    assert by_file_uri.result.result == Result.RESULT_OK and "chair2" in world.models
    by_text = spawn(harness, name="disc", resource_string=DISC, initial_pose=pose(3.0, 4.0, -1.0))
    assert by_text.result.result == Result.RESULT_OK and world.models["disc"].pose.y == pytest.approx(4.0)

    got = state_of(harness, "bot")
    assert got.result.result == Result.RESULT_OK and got.state.header.frame_id == "map"
    assert (got.state.pose.position.x, got.state.pose.position.y) == pytest.approx((1.5, -2.0), abs=1e-6)
    assert 2 * math.atan2(got.state.pose.orientation.z, got.state.pose.orientation.w) == pytest.approx(0.5, abs=1e-6)

    for name in ("bot", "chair2", "disc"):
        assert delete(harness, name).result == Result.RESULT_OK and name not in world.models
    missing = delete(harness, "bot")
    assert missing.result == Result.RESULT_NOT_FOUND and '"bot"' in missing.error_message
    assert state_of(harness, "bot").result.result == Result.RESULT_NOT_FOUND


@pytest.mark.parametrize("q", [(0.0, 0.0, 1e-200, 1e-200), (0.0, 0.0, 1e300, 1e300), (0.0, 0.0, -2.0, -2.0)])
def test_quaternions_of_any_length_about_z_are_their_yaw(harness, q) -> None:
    done = spawn(harness, name="turned", resource_string=DISC, initial_pose=pose(q=q))
    assert done.result.result == Result.RESULT_OK, done.result
    assert math.remainder(harness.server.world.models["turned"].pose.theta - math.pi / 2, 2 * math.pi) == pytest.approx(0.0, abs=1e-6)
    harness.server.world.delete_model("turned")


def test_renaming(harness) -> None:
    world = harness.server.world
    names = [spawn(harness, name="twin", resource_string=DISC, allow_renaming=True).entity_name for _ in range(3)]
    assert names == ["twin", "twin_1", "twin_2"]
    unnamed = spawn(harness, uri="chair.model.yaml", allow_renaming=True)
    assert unnamed.result.result == Result.RESULT_OK and unnamed.entity_name == "chair"
    taken = spawn(harness, name="twin", resource_string=DISC)
    assert taken.result.result == CODES.NAME_NOT_UNIQUE
    for name in names + ["chair"]:
        world.delete_model(name)


@pytest.mark.parametrize(
    ("fields", "code", "fact"),
    [
        ({"name": "", "resource_string": DISC}, CODES.NAME_INVALID, "empty"),
        ({"name": "a b", "resource_string": DISC}, CODES.NAME_INVALID, "may only hold"),
        ({"name": "x" * 300, "resource_string": DISC}, CODES.NAME_INVALID, "characters"),
        ({"name": "n", "resource_string": DISC, "entity_namespace": "1bad"}, CODES.NAMESPACE_INVALID, "namespace"),
        ({"name": "n"}, CODES.NO_RESOURCE, "uri"),
        ({"name": "n", "uri": "no_such.model.yaml"}, CODES.NO_RESOURCE, "does not exist"),
        ({"name": "n", "uri": "package://robots/bot.yaml"}, CODES.UNSUPPORTED_FORMAT, "package"),
        ({"name": "n", "uri": "robot.urdf"}, CODES.UNSUPPORTED_FORMAT, "yaml"),
        ({"name": "n", "uri": "x" * 5000 + ".yaml"}, CODES.NO_RESOURCE, "does not exist"),
        ({"name": "n", "resource_string": "bodies: ["}, CODES.RESOURCE_PARSE_ERROR, "invalid YAML"),
        ({"name": "n", "resource_string": "bodies: []"}, CODES.RESOURCE_PARSE_ERROR, "at least one body"),
        ({"name": "n", "resource_string": DISC + "plugins:\n  - {type: NoSuchPlugin, name: p}\n"},
         CODES.RESOURCE_PARSE_ERROR, "NoSuchPlugin"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(frame="odom")}, CODES.INVALID_POSE, "frame"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(math.nan)}, CODES.INVALID_POSE, "finite"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(q=(0.0, 0.0, 0.0, 0.0))}, CODES.INVALID_POSE, "zero"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(q=(0.3, 0.0, 0.0, 0.95))}, CODES.INVALID_POSE, "about z"),
        # Huge and tiny quaternions: their squares overflow or underflow, their directions do not.
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(q=(1e300, 0.0, 0.0, 1e300))}, CODES.INVALID_POSE, "about z"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(q=(1e154, 0.0, 0.0, 1e154))}, CODES.INVALID_POSE, "about z"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(q=(1e-200, 0.0, 0.0, 1e-200))}, CODES.INVALID_POSE, "about z"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(q=(0.0, 1e308, 0.0, 1.0))}, CODES.INVALID_POSE, "about z"),
        ({"name": "n", "resource_string": DISC, "initial_pose": pose(1e12)}, CODES.INVALID_POSE, "within"),
    ],
)
def test_refusals_name_their_cause_and_leave_nothing(harness, fields, code, fact) -> None:
    before = set(harness.server.world.models)
    response = spawn(harness, **fields)
    assert response.result.result == code and fact in response.result.error_message, response.result
    assert set(harness.server.world.models) == before


def test_generated_requests_are_answered_and_leave_the_world_consistent(harness) -> None:
    """Random names, namespaces, URIs and YAML texts: each request spawns or is refused with one
    of the standard's codes; afterwards the world holds exactly the entities reported spawned."""
    world = harness.server.world
    rng = np.random.default_rng(11)
    alphabet = string.ascii_letters + string.digits + "_-./: {}[]\n\t#$'\"\\"
    before = set(world.models)
    spawned = set()
    for _ in range(60):
        def text(most: int) -> str:
            return "".join(rng.choice(list(alphabet), int(rng.integers(0, most))))

        fields = {"name": text(12), "entity_namespace": text(6) if rng.random() < 0.3 else "",
                  "allow_renaming": bool(rng.random() < 0.5)}
        if rng.random() < 0.5:
            fields["uri"] = text(20) + rng.choice([".yaml", ".yml", ".sdf", ""])
        else:
            fields["resource_string"] = DISC if rng.random() < 0.4 else text(80)
        fields["initial_pose"] = pose(*rng.normal(0.0, 5.0, 3)) if rng.random() < 0.8 else pose(q=tuple(rng.normal(0, 1, 4)))
        response = spawn(harness, **fields)
        assert response.result.result in (Result.RESULT_OK, *range(101, 110)), response.result
        assert response.result.result != Result.RESULT_OK or response.entity_name in world.models
        if response.result.result == Result.RESULT_OK:
            spawned.add(response.entity_name)
        else:
            assert response.result.error_message
    assert set(world.models) == before | spawned
    for name in spawned:
        assert delete(harness, name).result == Result.RESULT_OK


def test_a_client_of_the_standard_alone_spawns_steps_reads_and_resets(harness) -> None:
    """The issue's end to end: nothing but simulation_interfaces calls."""
    from simulation_interfaces.msg import SimulationState
    from simulation_interfaces.srv import ResetSimulation, SetSimulationState, StepSimulation

    def call(service_type, name, request):
        return harness.call(service_type, f"/sim_server/{name}", request)

    assert call(SetSimulationState, "set_simulation_state",
                SetSimulationState.Request(state=SimulationState(state=SimulationState.STATE_STOPPED))).result.result in (
        Result.RESULT_OK, SetSimulationState.Response.ALREADY_IN_TARGET_STATE)
    spawned = spawn(harness, name="robot", uri="turtlebot.model.yaml", entity_namespace="robot", initial_pose=pose(2.0, 1.0))
    assert spawned.result.result == Result.RESULT_OK
    placed = state_of(harness, "robot").state
    assert (placed.pose.position.x, placed.pose.position.y) == pytest.approx((2.0, 1.0), abs=1e-6)
    assert call(StepSimulation, "step_simulation", StepSimulation.Request(steps=20)).result.result == Result.RESULT_OK
    state = state_of(harness, "robot")
    assert state.result.result == Result.RESULT_OK
    assert state.state.header.stamp.nanosec == 20 * harness.server.world.time.step_ns
    body = harness.server.world.models["robot"].first_body.physics_body
    assert (state.state.pose.position.x, state.state.pose.position.y) == pytest.approx((body.position.x, body.position.y))
    assert call(ResetSimulation, "reset_simulation", ResetSimulation.Request()).result.result == Result.RESULT_OK
    assert state_of(harness, "robot").result.result == Result.RESULT_NOT_FOUND  # spawned entities go
    assert harness.server.world.time.time_ns == 0


def set_state(harness: Harness, name: str, x: float = 0.0, y: float = 0.0, yaw: float = 0.0, frame: str = "",
              twist: tuple = (0.0,) * 6, q: tuple | None = None) -> Result:
    from simulation_interfaces.msg import EntityState
    from simulation_interfaces.srv import SetEntityState

    state = EntityState()
    stamped = pose(x, y, yaw, frame, q)
    state.header, state.pose = stamped.header, stamped.pose
    t = state.twist
    t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z = twist
    return harness.call(SetEntityState, "/sim_server/set_entity_state", request(SetEntityState.Request, entity=name, state=state)).result


def test_set_entity_state(harness) -> None:
    from simulation_interfaces.srv import SetEntityState

    world = harness.server.world
    assert spawn(harness, name="mover", resource_string=DISC).result.result == Result.RESULT_OK
    assert set_state(harness, "mover", 3.0, -1.0, 0.7, "map", (0.5, -0.25, 0.0, 0.0, 0.0, 0.3)).result == Result.RESULT_OK
    body = world.models["mover"].first_body.physics_body
    assert (body.position.x, body.position.y, body.angle) == pytest.approx((3.0, -1.0, 0.7), abs=1e-6)
    assert (body.linearVelocity.x, body.linearVelocity.y, body.angularVelocity) == pytest.approx((0.5, -0.25, 0.3), abs=1e-6)
    got = state_of(harness, "mover").state
    assert (got.twist.linear.x, got.twist.linear.y, got.twist.angular.z) == pytest.approx((0.5, -0.25, 0.3), abs=1e-6)
    invalid = SetEntityState.Response.INVALID_POSE
    refusals = [
        (("mover",), {"frame": "odom"}, invalid, "frame"),
        (("mover", math.inf), {}, invalid, "finite"),
        (("mover",), {"q": (0.0, 0.7, 0.0, 0.7)}, invalid, "about z"),
        (("mover", 1e9), {}, invalid, "within"),
        (("mover",), {"twist": (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)}, Result.RESULT_OPERATION_FAILED, "planar"),
        (("mover",), {"twist": (math.nan,) + (0.0,) * 5}, Result.RESULT_OPERATION_FAILED, "finite"),
        (("mover",), {"twist": (1e9,) + (0.0,) * 5}, Result.RESULT_OPERATION_FAILED, "twist"),
        (("chair1",), {"twist": (1.0,) + (0.0,) * 5}, Result.RESULT_OPERATION_FAILED, "static"),
        (("ghost",), {}, Result.RESULT_NOT_FOUND, "ghost"),
    ]
    for args, kwargs, code, fact in refusals:
        before = (body.position.x, body.position.y, body.angle, body.linearVelocity.x)
        refused = set_state(harness, *args, **kwargs)
        assert refused.result == code and fact in refused.error_message, (args, kwargs, refused)
        assert (body.position.x, body.position.y, body.angle, body.linearVelocity.x) == before  # unchanged
    world.delete_model("mover")


def test_set_entity_state_sets_what_the_flags_choose(harness) -> None:
    """2.x's set_pose and set_twist: the part not chosen stays as it is, and is not even checked."""
    from simulation_interfaces.srv import SetEntityState

    from sim_server.ros.standard_interface.compatibility import generation

    if generation() != "2.x":
        pytest.skip("the installed simulation_interfaces is 1.x, which sets the whole state (test_definitions.py runs 2.x)")
    world = harness.server.world
    assert spawn(harness, name="flagged", resource_string=DISC, initial_pose=pose(1.0, 2.0, 0.3)).result.result == Result.RESULT_OK
    body = world.models["flagged"].first_body.physics_body

    def send(x: float, twist: tuple, **flags) -> Result:
        state = EntityState()
        state.pose = pose(x, 0.0).pose
        state.twist.linear.x, state.twist.linear.z = twist
        return harness.call(SetEntityState, "/sim_server/set_entity_state", request(SetEntityState.Request, entity="flagged", state=state, **flags)).result

    assert send(5.0, (0.5, 0.0), set_pose=False, set_twist=True).result == Result.RESULT_OK
    assert (body.position.x, body.position.y, body.linearVelocity.x) == pytest.approx((1.0, 2.0, 0.5), abs=1e-6)
    assert send(5.0, (9.0, 3.0), set_pose=True, set_twist=False).result == Result.RESULT_OK  # a twist not chosen: not checked
    assert (body.position.x, body.position.y, body.linearVelocity.x) == pytest.approx((5.0, 0.0, 0.5), abs=1e-6)
    assert send(math.inf, (0.0, 0.0), set_pose=False, set_twist=False).result == Result.RESULT_OK  # nothing chosen: nothing set
    assert (body.position.x, body.linearVelocity.x) == pytest.approx((5.0, 0.5), abs=1e-6)
    world.delete_model("flagged")


def test_spawn_entities(harness) -> None:
    from simulation_interfaces.msg import Resource, SpawnEntity as SpawnRequest
    from simulation_interfaces.srv import SpawnEntities

    world = harness.server.world
    before = set(world.models)

    def request(name: str, text: str = DISC, uri: str = "", x: float = 0.0) -> SpawnRequest:
        return SpawnRequest(name=name, entity_resource=Resource(uri=uri, resource_string=text if not uri else ""),
                            initial_pose=pose(x, 5.0))

    ok = harness.call(SpawnEntities, "/sim_server/spawn_entities", SpawnEntities.Request(
        spawn_requests=[request("m1", x=1.0), request("m2", uri="chair.model.yaml", x=2.0)]))
    assert ok.result.result == Result.RESULT_OK and [r.entity_name for r in ok.results] == ["m1", "m2"]
    mixed = harness.call(SpawnEntities, "/sim_server/spawn_entities", SpawnEntities.Request(
        spawn_requests=[request("m3", x=3.0), request("m1"), request("m4", text="bodies: ["), request("")]))
    assert mixed.result.result == SpawnEntities.Response.ENTITIES_SPAWN_FAILED and "3 of 4" in mixed.result.error_message
    codes = [r.result.result for r in mixed.results]
    assert codes == [Result.RESULT_OK, CODES.NAME_NOT_UNIQUE, CODES.RESOURCE_PARSE_ERROR, CODES.NAME_INVALID]
    assert set(world.models) == before | {"m1", "m2", "m3"}
    too_many = harness.call(SpawnEntities, "/sim_server/spawn_entities", SpawnEntities.Request(
        spawn_requests=[request(f"x{i}") for i in range(1001)]))
    assert too_many.result.result == Result.RESULT_OPERATION_FAILED and "1001" in too_many.result.error_message
    assert set(world.models) == before | {"m1", "m2", "m3"}
    for name in ("m1", "m2", "m3"):
        world.delete_model(name)


def test_entity_bounds(harness) -> None:
    from simulation_interfaces.msg import Bounds
    from simulation_interfaces.srv import GetEntityBounds

    box = ("bodies:\n  - name: base\n    footprints:\n"
           "      - {type: polygon, points: [[-0.5, -0.2], [0.7, -0.2], [0.7, 0.3], [-0.5, 0.3]], density: 1}\n"
           "      - {type: circle, center: [0.0, 0.6], radius: 0.25, density: 1}\n")
    assert spawn(harness, name="boxy", resource_string=box, initial_pose=pose(4.0, -3.0, 1.2)).result.result == Result.RESULT_OK
    got = harness.call(GetEntityBounds, "/sim_server/get_entity_bounds", GetEntityBounds.Request(entity="boxy"))
    assert got.result.result == Result.RESULT_OK and got.bounds.type == Bounds.TYPE_BOX
    upper, lower = got.bounds.points
    # In the entity's own frame, whatever its pose in the world.
    assert (upper.x, upper.y, lower.x, lower.y) == pytest.approx((0.7, 0.85, -0.5, -0.2), abs=1e-5)
    missing = harness.call(GetEntityBounds, "/sim_server/get_entity_bounds", GetEntityBounds.Request(entity="ghost"))
    assert missing.result.result == Result.RESULT_NOT_FOUND
    harness.server.world.delete_model("boxy")


def test_spawning_onto_a_pile_is_an_invalid_pose(harness) -> None:
    world = harness.server.world
    before = set(world.models)
    codes = [
        spawn(harness, name="", allow_renaming=True, uri="turtlebot.model.yaml", initial_pose=pose(30.0, 30.0)).result
        for _ in range(40)
    ]
    refused = [code for code in codes if code.result != Result.RESULT_OK]
    assert refused and all(c.result == CODES.INVALID_POSE and "more than the limit of 256" in c.error_message for c in refused)
    for name in set(world.models) - before:
        world.delete_model(name)
