"""The standard's world services: get_current_world and get_available_worlds.

A world is a Flatland world file. Its ``name`` is its folder's name when the file is called
``world.yaml`` (the Flatland layout, ``<name>/world.yaml``), else the file's name without its
extension; ``world_resource.uri`` is the file's absolute path; worlds have no tags.
get_available_worlds searches (:mod:`.resources`) the loaded world's folder and the
``resource_paths`` folders (the default sources), then ``additional_sources``, for valid world
files. All sources are local, so ``offline_only`` changes nothing.
"""

from __future__ import annotations

from pathlib import Path

from rclpy.node import Node
from simulation_interfaces.msg import Resource, Result, WorldResource
from simulation_interfaces.srv import GetAvailableWorlds, GetCurrentWorld

from sim_server.core.errors import RequestError
from sim_server.core.world import World
from sim_server.core.world_file import WorldSpec, load_world_file
from sim_server.standard_interface.resources import MAX_SOURCES, Search, configured_folders, source_folder
from sim_server.standard_interface.results import Refused, answer

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
    return WorldResource(name=world_name(path), world_resource=Resource(uri=str(path)), description=description, tags=[])


class Worlds:
    """The services get_current_world and get_available_worlds on ``node``.

    Args:
        node: the server node.
        world: its world.
        resource_paths: the ``resource_paths`` parameter (folders separated by ``:``).
    """

    def __init__(self, node: Node, world: World, resource_paths: str) -> None:
        self._node = node
        self._world = world
        self._resource_paths = resource_paths
        self._services = [
            node.create_service(GetCurrentWorld, "~/get_current_world", self._current),
            node.create_service(GetAvailableWorlds, "~/get_available_worlds", self._available),
        ]

    @property
    def names(self) -> list[str]:
        """Fully qualified names of the services offered."""
        return [self._node.resolve_service_name(service.srv_name) for service in self._services]

    def _current(self, request: GetCurrentWorld.Request, response: GetCurrentWorld.Response):
        def get() -> None:
            response.world = world_resource(self._world.spec)

        answer(response.result, get, "get_current_world")
        return response

    def _available(self, request: GetAvailableWorlds.Request, response: GetAvailableWorlds.Response):
        notes: list[str] = []

        def get() -> None:
            if request.filter.tags:
                raise Refused(
                    Result.RESULT_FEATURE_UNSUPPORTED, "worlds have no tags here: give an empty filter.tags"
                )
            if len(request.additional_sources) > MAX_SOURCES:
                raise RequestError(
                    f"{len(request.additional_sources)} additional sources, more than the limit of {MAX_SOURCES}"
                )
            base = Path(self._world.spec.path).parent
            folders = [base]
            failed_default = []
            for source in configured_folders(self._resource_paths):
                folder, problem = source_folder(source, base)
                if folder is None:
                    failed_default.append(f"resource_paths folder {source!r}: {problem}")
                else:
                    folders.append(folder)
            failed_extra = []
            for source in request.additional_sources:
                folder, problem = source_folder(source, base)
                if folder is None:
                    failed_extra.append(f"source {source[:200]!r}: {problem}")
                else:
                    folders.append(folder)
            failed = failed_default + failed_extra
            code = GetAvailableWorlds.Response.DEFAULT_SOURCES_FAILED if failed_default else Result.RESULT_OPERATION_FAILED
            if failed and not request.continue_on_error:
                raise Refused(code, "; ".join(failed) + " (continue_on_error searches the others)")
            search: Search[WorldSpec] = Search(lambda path: load_world_file(path, self._world.preprocessor))
            for folder in folders:
                search.folder(folder)
            if failed and not search.found:
                raise Refused(code, "; ".join(failed) + "; and no other source held a world")
            notes.extend(failed + search.notes)
            response.worlds = [world_resource(spec) for _, spec in search.found]

        answer(response.result, get, "get_available_worlds")
        if notes and not response.result.error_message:
            response.result.error_message = "; ".join(notes)
        return response
