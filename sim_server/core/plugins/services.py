"""The services a plugin needs from the core, in one place (the core face's second half; the
first is :mod:`sim_server.core.plugins`): import them from here, not from the modules that
implement them, which may move.

Rays (lasers, rangers, bumpers' probes):
    :class:`LaserScanner` (a fan of beams fixed on a body), :func:`scan_all` (many scanners in one
    compiled call), :func:`scan_block`, :func:`scene_of` (what the rays hit in a world, shared by
    its plugins), :func:`prepare_rays` (compile or load the ray caster: a class's ``prepare``).
Pictures (cameras):
    :class:`Renderer`, :class:`View`, :data:`MIN_VIEW_SIZE` (m), :func:`prepare_pictures`;
    imported on first use (a server whose world has no camera never loads the renderer).
Bodies and drives:
    :class:`BodyBatch` (many Box2D bodies read and written in one compiled call),
    :func:`memory_access_works`, :class:`Model` and :class:`ModelBody` (what a plugin's model is
    made of), :mod:`drive_kernels` (the drives' compiled steps), :func:`steer_towards`,
    :class:`DynamicsLimits` (speed, acceleration and jerk bounds), :data:`EASINGS` (Tween's
    curves), :func:`offset_point_velocity`, :func:`to_body_frame`.
Noise (seeded, reproducible, one stream per plugin):
    :mod:`random_streams`, :class:`NormalStream`, :func:`stream_key`, :func:`draw_normals`,
    :func:`gather`.
Places and names:
    :class:`EnuToWgs84` (GPS), :func:`frame_problem` (why a frame id is not one), :data:`SCOPE`
    (``model::plugin`` names of datapacks).
Compiling:
    :func:`jit` (numba's ``njit`` with the project's options and on-disk cache).

Units: metres, radians, seconds, as everywhere.
"""

from typing import Any

from sim_server.core import random_streams
from sim_server.core.compiled import jit
from sim_server.core.format.entity_names import SCOPE, frame_problem
from sim_server.core.geometry import offset_point_velocity, to_body_frame
from sim_server.core.motion import drive_kernels
from sim_server.core.motion.drive_kernels import steer_towards
from sim_server.core.motion.dynamics_limits import DynamicsLimits
from sim_server.core.motion.easing import EASINGS
from sim_server.core.physics.body_memory import BodyBatch, memory_access_works
from sim_server.core.physics.model import Model, ModelBody
from sim_server.core.random_streams import NormalStream, draw_normals, gather, stream_key
from sim_server.core.sensing.geodesy import EnuToWgs84
from sim_server.core.sensing.laser_scanner import LaserScanner, scan_all, scan_block, scene_of
from sim_server.core.sensing.laser_scanner import prepare as prepare_rays

__all__ = [
    "EASINGS",
    "MIN_VIEW_SIZE",
    "SCOPE",
    "BodyBatch",
    "DynamicsLimits",
    "EnuToWgs84",
    "LaserScanner",
    "Model",
    "ModelBody",
    "NormalStream",
    "Renderer",
    "View",
    "draw_normals",
    "drive_kernels",
    "frame_problem",
    "gather",
    "jit",
    "memory_access_works",
    "offset_point_velocity",
    "prepare_pictures",
    "prepare_rays",
    "random_streams",
    "scan_all",
    "scan_block",
    "scene_of",
    "steer_towards",
    "stream_key",
    "to_body_frame",
]


#: The picture services, imported from :mod:`sim_server.core.pictures` when a plugin first asks.
_PICTURES = {
    "Renderer": ("sim_server.core.pictures.renderer", "Renderer"),
    "View": ("sim_server.core.pictures.renderer", "View"),
    "MIN_VIEW_SIZE": ("sim_server.core.pictures.renderer", "MIN_VIEW_SIZE"),
    "prepare_pictures": ("sim_server.core.pictures.raster", "warm_up"),
}


def __getattr__(name: str) -> Any:
    if name in _PICTURES:
        import importlib

        module, attribute = _PICTURES[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
