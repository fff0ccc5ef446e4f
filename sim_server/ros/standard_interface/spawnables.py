"""The standard's get_spawnables: the Flatland model files spawn_entity can take.

They are found (:mod:`.resources`) in the world file's folder, in the folders of the server's
``resource_paths`` parameter and in the request's ``sources``, each searched with its subfolders:
every ``.yaml``/``.yml`` file that is a valid model file. A spawnable's ``uri`` is the path
spawn_entity takes: relative to the world file's folder when inside it, else absolute. Its
``spawn_bounds`` are a box (``TYPE_BOX``: upper right, then lower left; z 0) around all its
footprints, in the frame of the pose it is spawned at. Sources that cannot be searched are named
in ``error_message``; the call succeeds all the same, as the standard asks. Each crowd of the
world adds one spawnable: ``pedestrian://<crowd>``, a person of that crowd.
"""

from __future__ import annotations

import math
from pathlib import Path

from geometry_msgs.msg import Vector3
from rclpy.node import Node
from simulation_interfaces.msg import Bounds
from simulation_interfaces.srv import GetSpawnables

from sim_server.core.format.model_file import ModelSpec, load_model_file
from sim_server.core.world import World
from sim_server.ros.standard_interface.compatibility import spawnable
from sim_server.ros.standard_interface.entities import PEDESTRIAN_SCHEME
from sim_server.ros.standard_interface.resources import Search, sources
from sim_server.ros.standard_interface.results import answer
from sim_server.ros.world_user import WorldUser

#: Body names, then plugin types, named in a description at most.
DESCRIBED_NAMES = 8


def spawn_box(spec: ModelSpec) -> tuple[tuple[float, float], tuple[float, float]]:
    """The lower-left and upper-right corners (m) of the box around every footprint of a model
    spawned at the origin (its bodies at their poses in the model file)."""
    xs: list[float] = []
    ys: list[float] = []
    for body in spec.bodies:
        cos, sin = math.cos(body.pose.theta), math.sin(body.pose.theta)

        def place(x: float, y: float) -> tuple[float, float]:
            return body.pose.x + cos * x - sin * y, body.pose.y + sin * x + cos * y

        for footprint in body.footprints:
            if footprint.shape == "circle":
                cx, cy = place(*footprint.center)
                xs += [cx - footprint.radius, cx + footprint.radius]
                ys += [cy - footprint.radius, cy + footprint.radius]
            else:
                for point in footprint.points:
                    x, y = place(*point)
                    xs.append(x)
                    ys.append(y)
    if not xs:
        return (0.0, 0.0), (0.0, 0.0)
    return (min(xs), min(ys)), (max(xs), max(ys))


def describe(spec: ModelSpec) -> str:
    """One line on what a model holds: its bodies and its plugins."""

    def listed(names: list[str]) -> str:
        shown = ", ".join(names[:DESCRIBED_NAMES])
        return shown + (f" and {len(names) - DESCRIBED_NAMES} more" if len(names) > DESCRIBED_NAMES else "")

    text = f"Flatland model: {len(spec.bodies)} bod{'y' if len(spec.bodies) == 1 else 'ies'} ({listed([b.name for b in spec.bodies])})"
    if spec.plugins:
        text += f"; plugins {listed([f'{p.plugin_type} ({p.name})' for p in spec.plugins])}"
    return text


class Spawnables(WorldUser):
    """The service get_spawnables on ``node``.

    Args:
        node: the server node.
        world: its world (its file's folder and YAML preprocessor).
        resource_paths: the ``resource_paths`` parameter (folders separated by ``:``).
    """

    def __init__(self, node: Node, world: World, resource_paths: str) -> None:
        self._node = node
        self._world = world
        self._resource_paths = resource_paths
        self._services = [node.create_service(GetSpawnables, "~/get_spawnables", self._get)]

    def _uri(self, path: Path) -> str:
        folder = self._world.spec.path.parent
        try:
            return str(path.relative_to(folder))
        except ValueError:
            return str(path)

    def _get(self, request: GetSpawnables.Request, response: GetSpawnables.Response) -> GetSpawnables.Response:
        notes: list[str] = []

        def get() -> None:
            found = sources(self._world.spec.path.parent, self._resource_paths, list(request.sources), "sources")
            notes.extend(found.failed_defaults)
            if found.failed_extras:
                notes.append("unrecognised sources: " + "; ".join(found.failed_extras))
            search: Search[ModelSpec] = Search(lambda path: load_model_file(path, self._world.preprocessor))
            for folder in found.folders:
                search.folder(folder)
            notes.extend(search.notes)
            spawnables = []
            for path, spec in search.found:
                low, high = spawn_box(spec)
                bounds = Bounds(
                    type=Bounds.TYPE_BOX,
                    points=[Vector3(x=high[0], y=high[1], z=0.0), Vector3(x=low[0], y=low[1], z=0.0)],
                )
                spawnables.append(spawnable(self._uri(path), describe(spec), bounds))
            for crowd in self._world.crowds:
                radius = crowd.spec.radius
                bounds = Bounds(
                    type=Bounds.TYPE_BOX,
                    points=[Vector3(x=radius, y=radius, z=0.0), Vector3(x=-radius, y=-radius, z=0.0)],
                )
                description = (
                    f"a pedestrian of crowd {crowd.name} ({crowd.spec.model}, radius {radius:g} m); resource_string "
                    "may give its route: {waypoints: [[x, y], ...], speed: m/s}"
                )
                spawnables.append(spawnable(PEDESTRIAN_SCHEME + crowd.name, description, bounds))
            response.spawnables = spawnables

        answer(response.result, get, "get_spawnables")
        if notes and not response.result.error_message:
            response.result.error_message = "; ".join(notes)
        return response
