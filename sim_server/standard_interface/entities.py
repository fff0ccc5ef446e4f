"""The standard interface's entity services: spawn_entity, delete_entity and get_entity_state.

Entities are the world's models. ``spawn_entity`` takes a Flatland model file (format ``yaml``)
by ``uri`` (a path, relative ones against the world file's folder, or a ``file://`` URI) or as
the YAML text itself in ``resource_string``, with the same validation, limits and preprocessor
as the model files of a world; the initial pose is planar, in the world frame (``header.frame_id``
empty or ``map``). Every refusal carries the standard's code and a message naming the value at
fault; nothing half-made stays in the world.
"""

from __future__ import annotations

import math
from pathlib import Path
from urllib.parse import unquote, urlparse

from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from simulation_interfaces.msg import EntityState
from simulation_interfaces.srv import DeleteEntity, GetEntityState, SpawnEntity

from sim_server.core.entity_names import model_name_problem, namespace_problem
from sim_server.core.errors import ConfigError, RequestError
from sim_server.core.geometry import Pose2D
from sim_server.core.model_file import ModelSpec, load_model_file, load_model_text
from sim_server.core.state import model_state
from sim_server.core.world import World, check_pose
from sim_server.ros.conversions import set_pose_msg, time_msg
from sim_server.ros.services import quoted
from sim_server.ros.state_datapacks import WORLD_FRAME
from sim_server.standard_interface.results import Refused, answer

#: The file format spawn_entity takes (listed in the simulator's features).
SPAWN_FORMAT = "yaml"
#: Frames an initial pose may be given in: the world's.
WORLD_FRAMES = ("", WORLD_FRAME)
#: File name extensions of model files.
MODEL_EXTENSIONS = (".yaml", ".yml")
#: The largest quaternion component along x or y (relative to its length) of a rotation about z.
PLANAR_TOLERANCE = 1e-6
#: Names tried when renaming: ``<name>_1`` to ``<name>_<this>``.
MAX_RENAMING_TRIES = 10_000

SPAWN_CODES = SpawnEntity.Response


def planar_pose(stamped: PoseStamped) -> Pose2D:
    """The planar pose of a world-frame geometry_msgs/PoseStamped (z is ignored); Refused with
    INVALID_POSE for another frame, a non-finite number, a zero quaternion or a rotation that
    is not about z."""
    frame = stamped.header.frame_id
    if frame not in WORLD_FRAMES:
        raise Refused(
            SPAWN_CODES.INVALID_POSE,
            f"initial_pose is in frame {quoted(frame)}: give it in the world frame ('' or 'map')",
        )
    position, q = stamped.pose.position, stamped.pose.orientation
    values = (position.x, position.y, position.z, q.x, q.y, q.z, q.w)
    if not all(math.isfinite(v) for v in values):
        raise Refused(SPAWN_CODES.INVALID_POSE, f"initial_pose must be finite, got {values}")
    length = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
    if length == 0.0:
        raise Refused(SPAWN_CODES.INVALID_POSE, "initial_pose.orientation is a zero quaternion")
    if max(abs(q.x), abs(q.y)) > PLANAR_TOLERANCE * length:
        raise Refused(
            SPAWN_CODES.INVALID_POSE,
            f"initial_pose.orientation ({q.x:g}, {q.y:g}, {q.z:g}, {q.w:g}) is not a rotation about z "
            "(this simulator is planar)",
        )
    pose = Pose2D(float(position.x), float(position.y), 2.0 * math.atan2(q.z, q.w))
    try:
        check_pose(pose)
    except RequestError as exc:
        raise Refused(SPAWN_CODES.INVALID_POSE, str(exc)) from None
    return pose


class EntityServices:
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
        ]

    @property
    def names(self) -> list[str]:
        """Fully qualified names of the services offered."""
        return [self._node.resolve_service_name(service.srv_name) for service in self._services]

    # ------------------------------------------------------------------ spawning
    def _spawn(self, request: SpawnEntity.Request, response: SpawnEntity.Response) -> SpawnEntity.Response:
        def spawn() -> None:
            problem = namespace_problem(request.entity_namespace)
            if problem is not None:
                raise Refused(SPAWN_CODES.NAMESPACE_INVALID, problem)
            pose = planar_pose(request.initial_pose)
            spec = self._spec(request)
            name = self._name(request, spec)
            try:
                model = self._world.add_model(spec, name, request.entity_namespace, pose)
            except ConfigError as exc:  # a plugin's configuration, the layers it names
                raise Refused(SPAWN_CODES.RESOURCE_PARSE_ERROR, str(exc)) from None
            response.entity_name = model.name

        answer(response.result, spawn, f"spawn_entity {quoted(request.name)}")
        return response

    def _spec(self, request: SpawnEntity.Request) -> ModelSpec:
        """The model spec the request names (uri) or holds (resource_string)."""
        folder = self._world.spec.path.parent
        try:
            if request.uri:
                return load_model_file(self._model_path(request.uri, folder), self._world.preprocessor)
            if request.resource_string:
                return load_model_text(request.resource_string, folder / "resource_string", self._world.preprocessor)
        except ConfigError as exc:
            raise Refused(SPAWN_CODES.RESOURCE_PARSE_ERROR, str(exc)) from None
        raise Refused(SPAWN_CODES.NO_RESOURCE, "give the model file's uri, or the model itself in resource_string")

    @staticmethod
    def _model_path(uri: str, folder: Path) -> Path:
        """The model file ``uri`` names: a path (relative to ``folder``) or a file:// URI."""
        if "\0" in uri:
            raise Refused(SPAWN_CODES.NO_RESOURCE, "uri must not contain a NUL character")
        scheme = urlparse(uri).scheme if "://" in uri else ""
        if scheme == "file":
            text = unquote(urlparse(uri).path)
        elif scheme:
            raise Refused(
                SPAWN_CODES.UNSUPPORTED_FORMAT,
                f"uri {quoted(uri)}: scheme {quoted(scheme)} is not supported (a path or a file:// URI)",
            )
        else:
            text = uri
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = folder / path
        if path.suffix.lower() not in MODEL_EXTENSIONS:
            raise Refused(
                SPAWN_CODES.UNSUPPORTED_FORMAT,
                f"uri {quoted(uri)}: not a Flatland model file ({', '.join(MODEL_EXTENSIONS)}); "
                f"spawn formats: {SPAWN_FORMAT}",
            )
        try:
            found = path.is_file()
        except (OSError, ValueError):  # a name the OS refuses (too long, say)
            found = False
        if not found:
            raise Refused(SPAWN_CODES.NO_RESOURCE, f"model file {quoted(str(path))} does not exist")
        return path

    def _name(self, request: SpawnEntity.Request, spec: ModelSpec) -> str:
        """The entity's name: the one asked for, or with allow_renaming a free one like it."""
        name = request.name
        if not request.allow_renaming:
            if not name:
                raise Refused(SPAWN_CODES.NAME_INVALID, "name is empty (and allow_renaming is false)")
            problem = model_name_problem(name)
            if problem is not None:
                raise Refused(SPAWN_CODES.NAME_INVALID, problem)
            if name in self._world.models:
                raise Refused(SPAWN_CODES.NAME_NOT_UNIQUE, f"an entity named {quoted(name)} exists already")
            return name
        base = name or spec.path.name.split(".")[0] or "entity"
        problem = model_name_problem(base)
        if problem is not None:
            raise Refused(SPAWN_CODES.NAME_INVALID, problem)
        if base not in self._world.models:
            return base
        for number in range(1, MAX_RENAMING_TRIES + 1):
            candidate = f"{base}_{number}"
            if candidate not in self._world.models and model_name_problem(candidate) is None:
                return candidate
        raise Refused(SPAWN_CODES.NAME_NOT_UNIQUE, f"no free name like {quoted(base)} (tried {MAX_RENAMING_TRIES})")

    # ------------------------------------------------------------------ deleting, state
    def _delete(self, request: DeleteEntity.Request, response: DeleteEntity.Response) -> DeleteEntity.Response:
        what = f"delete_entity {quoted(request.entity)}"
        answer(response.result, lambda: self._world.delete_model(request.entity), what)
        return response

    def _get_state(self, request: GetEntityState.Request, response: GetEntityState.Response) -> GetEntityState.Response:
        def get() -> None:
            response.state = self.entity_state(request.entity)

        answer(response.result, get, f"get_entity_state {quoted(request.entity)}")
        return response

    def entity_state(self, name: str) -> EntityState:
        """The ground-truth state of entity ``name`` in the world frame (``map``): its first
        body's pose and twist (linear velocity of its origin)."""
        state = model_state(self._world.model(name))
        message = EntityState()
        message.header.frame_id = WORLD_FRAME
        message.header.stamp = time_msg(self._world.time.time_ns)
        set_pose_msg(message.pose, state.x, state.y, state.theta)
        message.twist.linear.x, message.twist.linear.y = state.vx, state.vy
        message.twist.angular.z = state.wz
        return message
