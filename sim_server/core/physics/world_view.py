"""What listens to models entering and leaving a world: :class:`WorldListener`.

The world tells its listeners (the lasers' scene, the ROS layer's markers and TF, ...) of every
model it adds or removes; sensors and plugins keep caches of the models with it. It lives here,
below both the world and the plugins, so that neither has to name the other to use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sim_server.core.physics.model import Model


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
