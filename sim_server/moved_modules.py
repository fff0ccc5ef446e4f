"""Old import paths of modules that moved, kept working for one release with a warning.

The core was regrouped by concept in 0.2 (``sim_server.core.plugin_api`` is now
``sim_server.core.plugins.api``, the standard interface moved under ``sim_server.ros``, ...).
Importing a module by its old path gives the module at its new path, the very same module
object (so ``isinstance`` checks and module state agree), and warns once per old path with a
:class:`MovedModuleWarning` naming the new one. ``python -m`` with an old path runs the module
too, with the same warning. :data:`MOVED` is the whole table.

Installed by :mod:`sim_server` on import (:func:`install`), before Python's own finders, so a
stale ``__pycache__`` folder left where a package was cannot shadow the alias.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, ModuleType

#: The release after which the old paths go.
REMOVED_IN = "0.3"

_CORE = "sim_server.core"
_STANDARD_INTERFACE = (
    "compatibility", "entities", "entity_info", "entity_queries", "regions", "resources", "results",
    "services", "simulation_state", "spawnables", "tags", "worlds",
)

#: Old module path -> new module path.
MOVED: dict[str, str] = {
    **{
        f"{_CORE}.{old}": f"{_CORE}.{new}"
        for old, new in {
            "timekeeper": "timing.timekeeper",
            "step_timing": "timing.step_timing",
            "bounded_read": "format.bounded_read",
            "yaml_parsing": "format.yaml_parsing",
            "yaml_preprocessor": "format.yaml_preprocessor",
            "yaml_reader": "format.yaml_reader",
            "entity_names": "format.entity_names",
            "shape_validation": "format.shape_validation",
            "map_image": "format.map_image",
            "map_file": "format.map_file",
            "model_file": "format.model_file",
            "world_file": "format.world_file",
            "collision_filter": "physics.collision_filter",
            "body_memory": "physics.body_memory",
            "layer": "physics.layer",
            "model": "physics.model",
            "replicas": "physics.replicas",
            "plugin_api": "plugins.api",
            "plugin_manager": "plugins.manager",
            "raycast": "sensing.raycast",
            "laser_scanner": "sensing.laser_scanner",
            "geodesy": "sensing.geodesy",
            "easing": "motion.easing",
            "dynamics_limits": "motion.dynamics_limits",
        }.items()
    },
    f"{_CORE}.warm_up": "sim_server.warm_up",
    # issue 37: pictures are a service of the core (cameras take them through the plugin face);
    # the ROS-free CDR codec sits below the live view, the ROS layer and the plugins
    "sim_server.rendering.renderer": f"{_CORE}.pictures.renderer",
    "sim_server.rendering.raster": f"{_CORE}.pictures.raster",
    "sim_server.live.ros2_messages": f"{_CORE}.format.ros2_cdr",
    "sim_server.live.control": f"{_CORE}.control",
    "sim_server.ros.live_control": "sim_server.node_view",
    "sim_server.standard_interface": "sim_server.ros.standard_interface",
    **{
        f"sim_server.standard_interface.{name}": f"sim_server.ros.standard_interface.{name}"
        for name in _STANDARD_INTERFACE
    },
}


class MovedModuleWarning(DeprecationWarning):
    """A module was imported by a path it had before it moved (shown by default, once per path)."""


_warned: set[str] = set()


def _warn(old: str, how: str = "import it from there") -> None:
    if old in _warned:
        return
    _warned.add(old)
    warnings.warn(
        f"{old} moved to {MOVED[old]}: {how} (the old path goes in sim_server {REMOVED_IN})",
        MovedModuleWarning,
        stacklevel=_importer_level(),
    )


def _importer_level() -> int:
    """The stack level, for :func:`warnings.warn` called by :func:`_warn`, of the code that
    imported the old path: past this module's frames (importlib's own frames the warnings
    machinery skips by itself)."""
    level, frame = 1, sys._getframe(2)  # level 1 is _warn; this frame is its caller
    while frame is not None and frame.f_code.co_filename == __file__:
        level, frame = level + 1, frame.f_back
    return level + 1


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path as the module at its new path."""

    def __init__(self, old: str) -> None:
        self.old = old

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(self.old)
        return importlib.import_module(MOVED[self.old])

    def exec_module(self, module: ModuleType) -> None:
        """The module at the new path has run already."""

    def is_package(self, fullname: str) -> bool:
        spec = importlib.util.find_spec(MOVED[self.old])
        return spec is not None and spec.submodule_search_locations is not None

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code (``python -m`` with the old path runs it)."""
        _warn(self.old, f"run python -m {MOVED[self.old]}")
        spec = importlib.util.find_spec(MOVED[self.old])
        if spec is None or spec.loader is None:
            return None
        return spec.loader.get_code(MOVED[self.old])  # type: ignore[attr-defined]


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED` (and nothing else)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        loader = _AliasLoader(fullname)
        return importlib.util.spec_from_loader(fullname, loader, is_package=loader.is_package(fullname))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once) and show its warnings once per path."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
        warnings.filterwarnings("default", category=MovedModuleWarning)
