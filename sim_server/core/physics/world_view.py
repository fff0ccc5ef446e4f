"""What the parts a world composes may read of it: :class:`WorldView`, and what listens to its
models coming and going: :class:`WorldListener`.

The world (:mod:`sim_server.core.world`) composes the physics, the plugins, the levels and the
sensors; they never name its class. Lasers and pictures need only this view of it; plugins get a
:class:`~sim_server.core.plugins.api.PluginWorld`, which is this view and more. It lives here,
below the plugins and the sensors, so that both can use it without naming each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Protocol, Sequence, TypeVar

import numpy as np

if TYPE_CHECKING:
    from sim_server.core.format.model_file import ModelSpec
    from sim_server.core.format.world_file import ModelEntry
    from sim_server.core.physics.collision_filter import CollisionFilterRegistry
    from sim_server.core.physics.layer import Layer
    from sim_server.core.physics.model import Model

_Shared = TypeVar("_Shared")


class WorldListener(Protocol):
    """Receives notice of models entering and leaving the world.

    Optional methods, called where a listener has them: ``on_model_moved(model)``, after
    ``move_model`` or ``set_model_state`` placed a model anew, and ``on_layers_changed(layers)``,
    after layer pieces were loaded or unloaded (levels).
    """

    def on_model_added(self, model: "Model") -> None:
        """``model`` has just been built."""

    def on_model_removed(self, model: "Model") -> None:
        """``model`` is about to be destroyed."""


class WorldView(Protocol):
    """A world as its parts may read it: its walls and models, the collision bits of its layers,
    notice of models coming and going, and a place to keep objects per world.

    Units: metres, radians, world frame. :class:`sim_server.core.world.World` fulfils it.
    """

    @property
    def models(self) -> Mapping[str, "Model"]:
        """The models in the world by name, in the order they were added (do not change it)."""

    @property
    def layers(self) -> Sequence["Layer"]:
        """The layers (static walls), loaded pieces and streamed-out ones alike."""

    @property
    def collision_filter(self) -> "CollisionFilterRegistry":
        """The collision bits of the world's layer names."""

    @property
    def static_geometry_version(self) -> int:
        """Grows whenever the loaded walls change (levels), so caches of them know to rebuild."""

    def all_models(self) -> Iterable["Model"]:
        """The models in the order they were added."""

    def level_models(self) -> "list[tuple[ModelEntry, ModelSpec]]":
        """The world file's models that levels load and unload as performers move, with their
        model files (empty when levels are off): what a cache of static things may place ahead."""

    def add_listener(self, listener: WorldListener) -> None:
        """Tell ``listener`` of every model added, removed or moved from now on."""

    def remove_listener(self, listener: WorldListener) -> None:
        """Stop telling ``listener``."""

    def crowd_circles(self) -> tuple[np.ndarray, np.ndarray]:
        """Every pedestrian's body as sensors see it: (N, 3) centre x, y and radius (m, world
        frame) and (N,) int64 collision bits, read from the physics now."""

    def shared(self, key: str, make: Callable[[], _Shared]) -> _Shared:
        """The object this world keeps under ``key``, made by ``make()`` on first use; dropped
        when the world closes. Name keys after their module (``"sim_server.core.sensing..."``)."""
