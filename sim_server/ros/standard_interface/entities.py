"""The standard interface's entity services: spawn_entity and spawn_entities, delete_entity,
get_entity_state, set_entity_state and get_entity_bounds (the entities' info is in
:mod:`.entity_info`, the queries over many in :mod:`.entity_queries`).

Entities are the world's models and pedestrians. ``spawn_entity`` takes a Flatland model file (format ``yaml``)
by ``uri`` (a path, relative ones against the world file's folder, or a ``file://`` URI) or as
the YAML text itself in ``resource_string``, with the same validation, limits and preprocessor
as the model files of a world; the initial pose is planar, in the world frame (``header.frame_id``
empty or ``map``). A ``uri`` of ``pedestrian://<crowd>`` adds a person to that crowd at the
initial pose, walking the ``waypoints`` that ``resource_string`` may give
(``{waypoints: [[x, y], ...], speed: 1.2}``; without, it stands); with ``allow_renaming`` and no
name it is named ``<crowd>_<number>``. A pedestrian's state is its position, heading and
velocity; set_entity_state moves it and sets its velocity until its crowd's next update (no
angular velocity: it turns as it walks); its bounds are the box around its disc. Every refusal carries the standard's code and a message naming the value at
fault; nothing half-made stays in the world.

States are planar and in the world frame: a pose's orientation must be a rotation about z, a
twist has no linear z nor angular x or y, and the acceleration of set_entity_state is ignored
(the standard allows it); an entity whose bodies are all static cannot be given a twist. An
entity's bounds are a box (``TYPE_BOX``: upper right, then lower left; z 0) around all its
footprints, in the frame of its first body.
"""

from __future__ import annotations

import math

from geometry_msgs.msg import Pose, PoseStamped, Vector3
from rclpy.node import Node
from simulation_interfaces.msg import Bounds, EntityCategory, EntityState, Result, SpawnResult
from simulation_interfaces.srv import (
    DeleteEntity, GetEntityBounds, GetEntityState, SetEntityState, SpawnEntities, SpawnEntity,
)

from sim_server.core import limits
from sim_server.core.errors import ConfigError, RequestError
from sim_server.core.format.yaml_reader import YamlReader
from sim_server.core.format.entity_names import model_name_problem, namespace_problem
from sim_server.core.format.model_file import ModelSpec, load_model_file, load_model_text
from sim_server.core.geometry import Pose2D
from sim_server.core.physics.model import Model
from sim_server.core.state import model_state
from sim_server.core.world import World, check_pose
from sim_server.ros.conversions import set_pose_msg, time_msg
from sim_server.ros.services import quoted
from sim_server.ros.standard_interface.compatibility import resource_of, state_choice
from sim_server.ros.standard_interface.entity_info import person_named, physical_category
from sim_server.ros.standard_interface.resources import local_yaml_file
from sim_server.ros.standard_interface.results import Refused, answer, refuse
from sim_server.ros.state_datapacks import WORLD_FRAME
from sim_server.ros.world_user import NO_WORLD, WorldUser

#: The file format spawn_entity takes (listed in the simulator's features).
SPAWN_FORMAT = "yaml"
#: The uri of a pedestrian of a crowd: this, then the crowd's name (get_spawnables lists them).
PEDESTRIAN_SCHEME = "pedestrian://"
#: Frames an initial pose may be given in: the world's.
WORLD_FRAMES = ("", WORLD_FRAME)
#: The largest quaternion component along x or y (relative to its length) of a rotation about z.
PLANAR_TOLERANCE = 1e-6
#: Entities one spawn_entities call may ask for.
MAX_SPAWN_REQUESTS = 1000
#: Names tried when renaming: ``<name>_1`` to ``<name>_<this>``.
MAX_RENAMING_TRIES = 10_000

SPAWN_CODES = SpawnEntity.Response


def planar_pose(frame: str, pose: Pose, invalid: int, what: str) -> Pose2D:
    """The planar pose of a world-frame geometry_msgs/Pose (z is ignored); Refused with the
    service's ``invalid`` code for another frame, a non-finite number, a zero quaternion, a
    rotation that is not about z or a pose beyond the limits. ``what`` names it in messages."""
    if frame not in WORLD_FRAMES:
        raise Refused(invalid, f"{what} is in frame {quoted(frame)}: give it in the world frame ('' or 'map')")
    position, q = pose.position, pose.orientation
    values = (position.x, position.y, position.z, q.x, q.y, q.z, q.w)
    if not all(math.isfinite(v) for v in values):
        raise Refused(invalid, f"{what} must be finite, got {values}")
    scale = max(abs(q.x), abs(q.y), abs(q.z), abs(q.w))
    if scale == 0.0:
        raise Refused(invalid, f"{what}.orientation is a zero quaternion")
    # Scaled by its largest component: no square overflows or underflows, whatever its length.
    x, y, z, w = q.x / scale, q.y / scale, q.z / scale, q.w / scale
    if max(abs(x), abs(y)) > PLANAR_TOLERANCE * math.sqrt(x * x + y * y + z * z + w * w):
        raise Refused(
            invalid,
            f"{what}.orientation ({q.x:g}, {q.y:g}, {q.z:g}, {q.w:g}) is not a rotation about z "
            "(this simulator is planar)",
        )
    planar = Pose2D(float(position.x), float(position.y), 2.0 * math.atan2(z, w))
    try:
        check_pose(planar)
    except RequestError as exc:
        raise Refused(invalid, str(exc)) from None
    return planar


class EntityServices(WorldUser):
    """Creates the entity services on ``node``.

    Args:
        node: the server node.
        world: its world.
    """

    def __init__(self, node: Node, world: World) -> None:
        self._node = node
        self._world = world
        self._services = [
            node.create_service(SpawnEntity, "~/spawn_entity", self._spawn),
            node.create_service(DeleteEntity, "~/delete_entity", self._delete),
            node.create_service(GetEntityState, "~/get_entity_state", self._get_state),
            node.create_service(SetEntityState, "~/set_entity_state", self._set_state),
            node.create_service(SpawnEntities, "~/spawn_entities", self._spawn_many),
            node.create_service(GetEntityBounds, "~/get_entity_bounds", self._get_bounds),
        ]

    # ------------------------------------------------------------------ spawning
    def _spawn(self, request: SpawnEntity.Request, response: SpawnEntity.Response) -> SpawnEntity.Response:
        uri, resource_string = resource_of(request, "entity_resource")
        response.entity_name = self.spawn(
            response.result, request.name, request.allow_renaming, uri, resource_string,
            request.entity_namespace, request.initial_pose,
        )
        return response

    def _spawn_many(self, request: SpawnEntities.Request, response: SpawnEntities.Response) -> SpawnEntities.Response:
        asked = request.spawn_requests
        if len(asked) > MAX_SPAWN_REQUESTS:
            message = f"{len(asked)} spawn requests in one call, more than the limit of {MAX_SPAWN_REQUESTS}"
            refuse(response.result, Result.RESULT_OPERATION_FAILED, message, "spawn_entities")
            return response
        results = []
        for each in asked:
            outcome = SpawnResult()
            uri, resource_string = resource_of(each, "entity_resource")
            outcome.entity_name = self.spawn(
                outcome.result, each.name, each.allow_renaming, uri, resource_string, each.entity_namespace,
                each.initial_pose,
            )
            results.append(outcome)
        response.results = results
        failed = sum(outcome.result.result != Result.RESULT_OK for outcome in results)
        if failed:
            message = f"{failed} of {len(results)} entities were not spawned (each result says why)"
            refuse(response.result, SpawnEntities.Response.ENTITIES_SPAWN_FAILED, message, "spawn_entities")
        else:
            response.result.result = Result.RESULT_OK
        return response

    def spawn(
        self, result: Result, name: str, allow_renaming: bool, uri: str, resource_string: str, namespace: str,
        initial_pose: PoseStamped,
    ) -> str:
        """Spawn one entity (see the module's docstring); fills ``result`` and returns the
        entity's name ("" when refused)."""
        spawned = [""]

        def spawn() -> None:
            if not self._world_loaded:
                raise Refused(Result.RESULT_INCORRECT_STATE, NO_WORLD)
            problem = namespace_problem(namespace)
            if problem is not None:
                raise Refused(SPAWN_CODES.NAMESPACE_INVALID, problem)
            frame = initial_pose.header.frame_id
            pose = planar_pose(frame, initial_pose.pose, SPAWN_CODES.INVALID_POSE, "initial_pose")
            if uri.startswith(PEDESTRIAN_SCHEME):
                spawned[0] = self._spawn_person(uri[len(PEDESTRIAN_SCHEME):], name, allow_renaming, resource_string, pose)
                return
            spec = self._spec(uri, resource_string)
            chosen = self._name(name, allow_renaming, spec.path.name.split(".")[0] or "entity")
            try:
                model = self._world.add_model(spec, chosen, namespace, pose)
            except ConfigError as exc:  # a plugin's configuration, the layers it names
                raise Refused(SPAWN_CODES.RESOURCE_PARSE_ERROR, str(exc)) from None
            except RequestError as exc:  # a place too crowded
                raise Refused(SPAWN_CODES.INVALID_POSE, str(exc)) from None
            spawned[0] = model.name

        answer(result, spawn, f"spawn {quoted(name)}")
        return spawned[0]

    def _spawn_person(self, crowd: str, name: str, allow_renaming: bool, route: str, pose: Pose2D) -> str:
        """A pedestrian of ``crowd`` at ``pose``, walking the route that ``route`` (YAML, may be
        empty) gives: ``{waypoints: [[x, y], ...], speed: m/s}``."""
        crowds = self._world.crowds.names()
        if crowd not in crowds:
            known = ", ".join(crowds) or "none"
            raise Refused(SPAWN_CODES.NO_RESOURCE, f"the world has no crowd {quoted(crowd)} (its crowds: {known})")
        waypoints, speed = self._route(route)
        chosen = self._name(name, allow_renaming, "")
        try:
            return self._world.spawn_pedestrian(crowd, (pose.x, pose.y), waypoints, speed, chosen)
        except RequestError as exc:
            raise Refused(SPAWN_CODES.INVALID_POSE, str(exc)) from None

    def _route(self, text: str) -> tuple[list[tuple[float, float]], float | None]:
        """The waypoints and speed of a pedestrian's resource_string (nothing when empty)."""
        if not text.strip():
            return [], None
        source = self._world.spec.path.parent / "resource_string"
        try:
            data = self._world.preprocessor.load_text(text, source, "pedestrian")
            reader = YamlReader(data, source)
            waypoints = _waypoints(reader)
            speed = reader.get_float("speed", None, within=limits.WALKING_SPEED) if reader.has("speed") else None
            reader.ignore("speed")
            reader.ensure_all_keys_used()
        except ConfigError as exc:
            raise Refused(SPAWN_CODES.RESOURCE_PARSE_ERROR, str(exc)) from None
        return waypoints, speed

    def _spec(self, uri: str, resource_string: str) -> ModelSpec:
        """The model spec ``uri`` names or ``resource_string`` holds."""
        folder = self._world.spec.path.parent
        try:
            if uri:
                path = local_yaml_file(
                    uri, self._world, SPAWN_CODES.UNSUPPORTED_FORMAT, SPAWN_CODES.NO_RESOURCE, "model file"
                )
                return load_model_file(path, self._world.preprocessor)
            if resource_string:
                return load_model_text(resource_string, folder / "resource_string", self._world.preprocessor)
        except ConfigError as exc:
            raise Refused(SPAWN_CODES.RESOURCE_PARSE_ERROR, str(exc)) from None
        raise Refused(SPAWN_CODES.NO_RESOURCE, "give the model file's uri, or the model itself in resource_string")

    def _name(self, name: str, allow_renaming: bool, base: str) -> str:
        """The entity's name: the one asked for, or with allow_renaming a free one like it (like
        ``base`` when none is asked for; an empty ``base`` is returned as it is: the crowd numbers
        its people). Free means no model and no pedestrian has it."""
        taken = self._world.has_entity
        if not allow_renaming:
            if not name:
                raise Refused(SPAWN_CODES.NAME_INVALID, "name is empty (and allow_renaming is false)")
            problem = model_name_problem(name)
            if problem is not None:
                raise Refused(SPAWN_CODES.NAME_INVALID, problem)
            if taken(name):
                raise Refused(SPAWN_CODES.NAME_NOT_UNIQUE, f"an entity named {quoted(name)} exists already")
            return name
        base = name or base
        if not base:
            return ""
        problem = model_name_problem(base)
        if problem is not None:
            raise Refused(SPAWN_CODES.NAME_INVALID, problem)
        if not taken(base):
            return base
        for number in range(1, MAX_RENAMING_TRIES + 1):
            candidate = f"{base}_{number}"
            if not taken(candidate) and model_name_problem(candidate) is None:
                return candidate
        raise Refused(SPAWN_CODES.NAME_NOT_UNIQUE, f"no free name like {quoted(base)} (tried {MAX_RENAMING_TRIES})")

    # ------------------------------------------------------------------ deleting, state
    def _delete(self, request: DeleteEntity.Request, response: DeleteEntity.Response) -> DeleteEntity.Response:
        def delete() -> None:
            self._world.delete_entity(request.entity)

        answer(response.result, delete, f"delete_entity {quoted(request.entity)}")
        return response

    def _get_state(self, request: GetEntityState.Request, response: GetEntityState.Response) -> GetEntityState.Response:
        def get() -> None:
            response.state = self.entity_state(request.entity)

        answer(response.result, get, f"get_entity_state {quoted(request.entity)}")
        return response

    def entity_state(self, name: str) -> EntityState:
        """The ground-truth state of entity ``name`` in the world frame (``map``): a model's
        first body's pose and twist (linear velocity of its origin); a pedestrian's position,
        heading and velocity."""
        message = EntityState()
        message.header.frame_id = WORLD_FRAME
        message.header.stamp = time_msg(self._world.time.time_ns)
        person = person_named(self._world, name)
        if person is not None:
            x, y, heading, vx, vy = person[0].state_of(person[1])
            set_pose_msg(message.pose, x, y, heading)
            message.twist.linear.x, message.twist.linear.y = vx, vy
            return message
        state = model_state(self._world.model(name))
        set_pose_msg(message.pose, state.x, state.y, state.theta)
        message.twist.linear.x, message.twist.linear.y = state.vx, state.vy
        message.twist.angular.z = state.wz
        return message

    def _set_state(self, request: SetEntityState.Request, response: SetEntityState.Response) -> SetEntityState.Response:
        def set_state() -> None:
            person = person_named(self._world, request.entity)
            if person is not None:
                self._set_person_state(person, request)
                return
            model = self._world.model(request.entity)
            state = request.state
            set_pose, set_twist = state_choice(request)  # 2.x's flags; 1.x sets both
            now = model_state(model)
            if not set_twist:  # the twist as it is (the one sent is not read)
                state.twist.linear.x, state.twist.linear.y, state.twist.angular.z = now.vx, now.vy, now.wz
                state.twist.linear.z = state.twist.angular.x = state.twist.angular.y = 0.0
            if set_pose:
                pose = planar_pose(state.header.frame_id, state.pose, SetEntityState.Response.INVALID_POSE, "state.pose")
            else:  # the pose as it is (the one sent is not read)
                pose = Pose2D(now.x, now.y, now.theta)
            linear, angular = state.twist.linear, state.twist.angular
            twist = (linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
            if not all(math.isfinite(v) for v in twist):
                raise RequestError(f"state.twist must be finite, got {twist}")
            if linear.z != 0.0 or angular.x != 0.0 or angular.y != 0.0:
                raise RequestError(f"state.twist {twist} is not planar: linear.z, angular.x and angular.y must be 0")
            moving = linear.x != 0.0 or linear.y != 0.0 or angular.z != 0.0
            if moving and physical_category(model) == EntityCategory.CATEGORY_STATIC_OBJECT:
                raise RequestError(f"entity {quoted(model.name)} is static: it cannot be given a twist")
            self._world.set_model_state(model.name, pose, float(linear.x), float(linear.y), float(angular.z))

        answer(response.result, set_state, f"set_entity_state {quoted(request.entity)}")
        return response

    def _set_person_state(self, person, request: SetEntityState.Request) -> None:
        """A pedestrian put somewhere else and given a velocity until its crowd's next update;
        it turns as it walks, so no angular velocity."""
        crowd, row = person
        state = request.state
        set_pose, set_twist = state_choice(request)
        x, y, heading, vx, vy = crowd.state_of(row)
        if set_pose:
            pose = planar_pose(state.header.frame_id, state.pose, SetEntityState.Response.INVALID_POSE, "state.pose")
            x, y, heading = pose.x, pose.y, pose.theta
        if set_twist:
            linear, angular = state.twist.linear, state.twist.angular
            twist = (linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
            if not all(math.isfinite(v) for v in twist):
                raise RequestError(f"state.twist must be finite, got {twist}")
            if linear.z != 0.0 or angular.x != 0.0 or angular.y != 0.0 or angular.z != 0.0:
                raise RequestError(
                    f"state.twist {twist}: a pedestrian moves in the plane and turns as it walks: only linear.x "
                    "and linear.y may be nonzero"
                )
            if not (limits.SPEED.contains(linear.x) and limits.SPEED.contains(linear.y)):
                raise RequestError(f"state.twist must be within +-{limits.SPEED.high:g} m/s, got {twist}")
            vx, vy = float(linear.x), float(linear.y)
        crowd.place(row, x, y, heading, vx, vy)

    def _get_bounds(self, request: GetEntityBounds.Request, response: GetEntityBounds.Response):
        def get() -> None:
            person = person_named(self._world, request.entity)
            if person is not None:
                radius = person[0].spec.radius
                low, high = (-radius, -radius), (radius, radius)
            else:
                low, high = bounds_of(self._world.model(request.entity))
            response.bounds = Bounds(
                type=Bounds.TYPE_BOX,
                points=[Vector3(x=high[0], y=high[1], z=0.0), Vector3(x=low[0], y=low[1], z=0.0)],
            )

        answer(response.result, get, f"get_entity_bounds {quoted(request.entity)}")
        return response


def _waypoints(reader: YamlReader) -> list[tuple[float, float]]:
    """A pedestrian's ``waypoints``: [x, y] points (m, world frame)."""
    raw = reader.get_any("waypoints", [])
    if not isinstance(raw, list) or len(raw) > limits.MAX_WAYPOINTS:
        raise reader.error(f"must be a list of at most {limits.MAX_WAYPOINTS} points [x, y]", "waypoints")
    points = []
    for index, item in enumerate(raw):
        if not (isinstance(item, list) and len(item) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and limits.COORDINATE.contains(float(v))
                for v in item)):
            raise reader.error(f"point {index} must be [x, y] of {limits.COORDINATE.describe()}, got {item!r:.60}",
                               "waypoints")
        points.append((float(item[0]), float(item[1])))
    return points


def bounds_of(model: Model) -> tuple[tuple[float, float], tuple[float, float]]:
    """The lower-left and upper-right corners (m) of the box around every footprint of
    ``model``, in the frame of its first body (the standard's canonical link)."""
    frame = model.first_body.physics_body
    xs: list[float] = []
    ys: list[float] = []
    for _, outline in model.world_footprints():
        if isinstance(outline, tuple):
            x, y, radius = outline
            local = frame.GetLocalPoint((x, y))
            xs += [local[0] - radius, local[0] + radius]
            ys += [local[1] - radius, local[1] + radius]
        else:
            for corner in outline:
                local = frame.GetLocalPoint(corner)
                xs.append(local[0])
                ys.append(local[1])
    if not xs:
        return (0.0, 0.0), (0.0, 0.0)
    return (min(xs), min(ys)), (max(xs), max(ys))
