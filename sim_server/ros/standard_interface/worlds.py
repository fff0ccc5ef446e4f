"""The standard's world services: get_current_world, get_available_worlds, load_world, and the
world's named poses (get_named_poses, get_named_pose_bounds).

A world is a Flatland world file. Its ``name`` is its folder's name when the file is called
``world.yaml`` (the Flatland layout, ``<name>/world.yaml``), else the file's name without its
extension; ``world_resource.uri`` is the file's absolute path; its ``description`` and ``tags``
are the world file's (keys of ours, beside levels and performers), else a description of its
contents and no tags. Named poses are the world file's ``named_poses``; the bounds of one with a
``radius`` are a sphere of that radius around it (``TYPE_SPHERE``), of one without, empty.
get_available_worlds searches (:mod:`.resources`) the loaded world's folder and the
``resource_paths`` folders (the default sources), then ``additional_sources``, for valid world
files. All sources are local, so ``offline_only`` changes nothing.

load_world replaces the world by a world file (``uri``: a path, a relative one against the loaded
world's folder, or a ``file://`` URI) or by a world file's text (``resource_string``, its files
relative to the loaded world's folder), checked as the world file at start-up. It leaves the
simulation STOPPED; the old world stays as it was when the new one cannot be loaded. Loading is
strict, so ``fail_on_unsupported_element`` and ``ignore_missing_or_unsupported_assets`` change
nothing: an unknown key or a missing file always fails it. unload_world leaves no world (an empty
stand-in: nothing can be spawned, stepped or played until load_world); the loaded world's folder
stays the one relative paths and searches start from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from geometry_msgs.msg import Vector3
from rclpy.node import Node
from simulation_interfaces.msg import Bounds, NamedPose, Resource, Result, WorldResource
from simulation_interfaces.srv import (
    GetAvailableWorlds, GetCurrentWorld, GetNamedPoseBounds, GetNamedPoses, LoadWorld, UnloadWorld,
)

from sim_server.core.errors import ConfigError, EntityError
from sim_server.core.format.world_file import WorldSpec, load_world_file, load_world_text
from sim_server.core.world import World
from sim_server.ros.conversions import set_pose_msg
from sim_server.ros.services import quoted
from sim_server.ros.standard_interface.compatibility import resource_of
from sim_server.ros.standard_interface.resources import Search, local_yaml_file, sources
from sim_server.ros.standard_interface.results import Refused, answer
from sim_server.ros.standard_interface.tags import tag_filter
from sim_server.ros.world_user import NO_WORLD, WorldUser

#: The file name of a world in the Flatland layout, named after its folder.
FLATLAND_WORLD_FILE = "world.yaml"


def world_name(path: Path) -> str:
    """The name of the world file at ``path`` (see the module's docstring)."""
    if path.name == FLATLAND_WORLD_FILE and path.parent.name:
        return path.parent.name
    return path.name.split(".")[0]


def world_resource(spec: WorldSpec) -> WorldResource:
    """The standard's description of a loaded (or loadable) world."""
    path = Path(spec.path).absolute()
    description = (
        f"Flatland world: {len(spec.layers)} layer{'s' * (len(spec.layers) != 1)}, "
        f"{len(spec.models)} model{'s' * (len(spec.models) != 1)}"
    )
    if spec.levels:
        description += f", {len(spec.levels)} level{'s' * (len(spec.levels) != 1)}"
    return WorldResource(
        name=world_name(path), world_resource=Resource(uri=str(path)), description=spec.description or description,
        tags=list(spec.tags),
    )


class Worlds(WorldUser):
    """The services get_current_world, get_available_worlds, load_world, unload_world,
    get_named_poses and get_named_pose_bounds on ``node``.

    Args:
        node: the server node.
        world: its world.
        resource_paths: the ``resource_paths`` parameter (folders separated by ``:``).
        load_world: replaces the world by the one a world spec describes (ConfigError when it
            cannot be built).
        unload_world: replaces the world by an empty stand-in.
    """

    def __init__(
        self, node: Node, world: World, resource_paths: str, load_world: Callable[[WorldSpec], World],
        unload_world: Callable[[], World],
    ) -> None:
        self._node = node
        self._world = world
        self._resource_paths = resource_paths
        self._load_world = load_world
        self._unload_world = unload_world
        self._services = [
            node.create_service(GetCurrentWorld, "~/get_current_world", self._current),
            node.create_service(GetAvailableWorlds, "~/get_available_worlds", self._available),
            node.create_service(LoadWorld, "~/load_world", self._load),
            node.create_service(UnloadWorld, "~/unload_world", self._unload),
            node.create_service(GetNamedPoses, "~/get_named_poses", self._named_poses),
            node.create_service(GetNamedPoseBounds, "~/get_named_pose_bounds", self._named_pose_bounds),
        ]

    def _current(self, request: GetCurrentWorld.Request, response: GetCurrentWorld.Response):
        def get() -> None:
            if not self._world_loaded:
                raise Refused(GetCurrentWorld.Response.NO_WORLD_LOADED, NO_WORLD)
            response.world = world_resource(self._world.spec)

        answer(response.result, get, "get_current_world")
        return response

    def _available(self, request: GetAvailableWorlds.Request, response: GetAvailableWorlds.Response):
        notes: list[str] = []

        def get() -> None:
            tags = tag_filter(request.filter, "filter")
            base = Path(self._world.spec.path).parent
            found = sources(base, self._resource_paths, list(request.additional_sources), "additional sources")
            failed = found.failed_defaults + [f"source {text}" for text in found.failed_extras]
            code = (
                GetAvailableWorlds.Response.DEFAULT_SOURCES_FAILED if found.failed_defaults
                else Result.RESULT_OPERATION_FAILED
            )
            if failed and not request.continue_on_error:
                raise Refused(code, "; ".join(failed) + " (continue_on_error searches the others)")
            search: Search[WorldSpec] = Search(lambda path: load_world_file(path, self._world.preprocessor))
            for folder in found.folders:
                search.folder(folder)
            if failed and not search.found:
                raise Refused(code, "; ".join(failed) + "; and no other source held a world")
            notes.extend(failed + search.notes)
            response.worlds = [world_resource(spec) for _, spec in search.found if tags is None or tags(spec.tags)]

        answer(response.result, get, "get_available_worlds")
        if notes and not response.result.error_message:
            response.result.error_message = "; ".join(notes)
        return response

    def _load(self, request: LoadWorld.Request, response: LoadWorld.Response) -> LoadWorld.Response:
        codes = LoadWorld.Response

        uri, resource_string = resource_of(request, "world_resource")

        def load() -> None:
            folder = Path(self._world.spec.path).parent
            try:
                if uri:
                    path = local_yaml_file(uri, self._world, codes.UNSUPPORTED_FORMAT, codes.NO_RESOURCE, "world file")
                    spec = load_world_file(path, self._world.preprocessor)
                elif resource_string:
                    spec = load_world_text(resource_string, folder / "resource_string", self._world.preprocessor)
                else:
                    raise Refused(codes.NO_RESOURCE, "give the world file's uri, or the world itself in resource_string")
                self._load_world(spec)
            except ConfigError as exc:
                raise Refused(codes.RESOURCE_PARSE_ERROR, str(exc)) from None
            response.world = world_resource(spec)

        answer(response.result, load, f"load_world {quoted(uri) if uri else 'resource_string'}")
        return response

    def _named_poses(self, request: GetNamedPoses.Request, response: GetNamedPoses.Response):
        def get() -> None:
            tags = tag_filter(request.tags, "tags")
            poses = []
            for spec in self._world.spec.named_poses:
                if tags is not None and not tags(spec.tags):
                    continue
                pose = NamedPose(name=spec.name, description=spec.description, tags=list(spec.tags))
                set_pose_msg(pose.pose, spec.pose.x, spec.pose.y, spec.pose.theta)
                poses.append(pose)
            response.poses = poses

        answer(response.result, get, "get_named_poses")
        return response

    def _named_pose_bounds(self, request: GetNamedPoseBounds.Request, response: GetNamedPoseBounds.Response):
        def get() -> None:
            spec = next((pose for pose in self._world.spec.named_poses if pose.name == request.name), None)
            if spec is None:
                raise EntityError(f"the world has no named pose {quoted(request.name)}")
            if spec.radius is None:
                response.bounds = Bounds(type=Bounds.TYPE_EMPTY)
            else:
                centre = Vector3(x=spec.pose.x, y=spec.pose.y, z=0.0)
                response.bounds = Bounds(type=Bounds.TYPE_SPHERE, points=[centre, Vector3(x=spec.radius)])

        answer(response.result, get, f"get_named_pose_bounds {quoted(request.name)}")
        return response

    def _unload(self, request: UnloadWorld.Request, response: UnloadWorld.Response) -> UnloadWorld.Response:
        def unload() -> None:
            if not self._world_loaded:
                raise Refused(UnloadWorld.Response.NO_WORLD_LOADED, "no world is loaded")
            self._unload_world()

        answer(response.result, unload, "unload_world")
        return response
