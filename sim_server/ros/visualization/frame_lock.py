"""Which bodies follow TF: the frame-lock rule, and the models to decide again when models come or go.

Frame-locked markers (the rule). A body whose TF frame (``<namespace>_<body>``, or ``<body>``
without a namespace: the plugins' frame rule) is published by this server's plugins with one
chain of parents up to ``map`` gets its footprints in that frame with ``frame_locked: true``:
RViz draws them where TF puts the body, at TF's rate, and they are sent only when models come or
go. A frame is on TF when a plugin claims it (the :class:`~sim_server.ros.tf_broadcast.TfBroadcaster`
registry of child frame, parent and owner, filled by the plugins as they initialise); the
chain must reach ``map`` with exactly one parent per frame and at most one plugin sending each
frame on ``/tf``. Typical cases: a ModelTfPublisher with ``publish_tf_world: true`` (``map ->
reference -> other bodies``), or a DiffDrive (``map -> <ns>_odom``, static, ``-> <ns>_<body>``)
with a ModelTfPublisher adding the other bodies. A DiffDrive's TF is its odometry, so with odometry
noise the footprint is drawn where the odometry believes the body is (as RViz draws the body's
laser scans). Every other body (no TF, a frame sent by two plugins or with two parents, two models
without namespaces sharing frame names, bodies a ModelTfPublisher excludes) is drawn in ``map``,
re-posed at ``viz_pub_rate`` while it moves. A joint is drawn as a line from each body's origin
to its anchor, in the two bodies' frames when both are locked, else in ``map``. Lock states are
checked when a model comes and again, at the next refresh, for the models sharing a frame of its
chains when any model comes or goes.
"""

from __future__ import annotations

from typing import Callable, Iterable

from rclpy.node import Node

from sim_server.core.format.entity_names import frame_id
from sim_server.core.physics.model import Model
from sim_server.core.world import World
from sim_server.ros.tf_broadcast import existing_broadcaster
from sim_server.ros.visualization.messages import VIZ_FRAME

#: Longest chain of TF parents followed from a body frame to ``map``.
MAX_TF_CHAIN = 16

Claims = dict  # owner -> (parent frame, static)


def chain_to_map(frame: str, claims_of: Callable[[str], Claims], visited: set[str] | None = None) -> bool:
    """Whether TF links ``frame`` to :data:`VIZ_FRAME` through one parent per frame, each frame
    sent on /tf by at most one plugin. ``visited`` collects the frames looked at."""
    seen: set[str] = set()
    while frame != VIZ_FRAME:
        if visited is not None:
            visited.add(frame)
        if frame in seen or len(seen) >= MAX_TF_CHAIN:
            return False
        seen.add(frame)
        claims = claims_of(frame)
        if not claims:
            return False
        parents = {parent for parent, _ in claims.values()}
        dynamic = sum(1 for _, static in claims.values() if not static)
        if len(parents) != 1 or dynamic > 1:
            return False
        frame = parents.pop()
    return True


def body_frame(model: Model, body_name: str) -> str:
    """The TF frame of a model's body by the plugins' rule: ``<namespace>_<body>``, or the
    body's name when the model has no namespace."""
    return frame_id(model.namespace.strip("/"), body_name)


class FrameLocks:
    """The lock states of a world's models (the rule in the module doc), and which models share
    the frames they depend on.

    Args:
        node: the server node (its TF broadcaster, once a plugin made it, holds the claimed frames).
        world: the world whose models' plugins claim the frames.
    """

    def __init__(self, node: Node, world: World) -> None:
        self._node = node
        self._world = world
        self._registry = None  # the TF broadcaster's claims registry, once a plugin made one
        #: TF frame -> names of the models whose lock state depends on it.
        self._frame_models: dict[str, set[str]] = {}
        #: Frames whose models' lock state is checked again at the next refresh.
        self.frames_changed: set[str] = set()

    def claims_of(self, frame: str) -> Claims:
        return self._registry.claims_of(frame) if self._registry is not None else {}

    def owners(self, model: Model) -> set[str]:
        """The names the model's plugins claim TF frames under."""
        return {plugin.context.describe() for plugin in self._world.plugins.plugins_of(model)}

    def frames_claimed_by(self, model: Model) -> list[str]:
        """The child frames the model's plugins send."""
        if self._registry is None:
            return []
        return [frame for owner in self.owners(model) for frame in self._registry.frames_of(owner)]

    def lock_state(self, model: Model) -> tuple[dict[str, str], set[str]]:
        """The frames of the model's bodies drawn frame-locked, and the frames the decision
        depends on (none when no plugin of the model sends a body's frame: it never locks).

        A body is locked when one of the model's own plugins sends its frame and the frame's
        chain reaches ``map`` (:func:`chain_to_map`)."""
        owners = self.owners(model)
        visited: set[str] = set()
        locked = {}
        candidate = False
        for body in model.bodies.values():
            frame = body_frame(model, body.name)
            visited.add(frame)
            if owners.isdisjoint(self.claims_of(frame)):
                continue
            candidate = True
            if chain_to_map(frame, self.claims_of, visited):
                locked[body.name] = frame
        return locked, visited if candidate else set()

    def find_registry(self) -> None:
        """Take the node's TF broadcaster, for its registry of claimed frames, once a plugin
        made it (none is made here: a world without TF plugins has no /tf publishers)."""
        if self._registry is None:
            self._registry = existing_broadcaster(self._node)

    def index(self, name: str, frames: Iterable[str]) -> None:
        for frame in frames:
            self._frame_models.setdefault(frame, set()).add(name)

    def unindex(self, name: str, frames: Iterable[str]) -> None:
        for frame in frames:
            names = self._frame_models.get(frame)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._frame_models[frame]

    def take_changed(self) -> set[str]:
        """The names of the models whose lock state depends on a frame changed since the last
        call, to decide again; those frames count as unchanged from now on."""
        frames, self.frames_changed = self.frames_changed, set()
        names: set[str] = set()
        for frame in frames:
            names.update(self._frame_models.get(frame, ()))
        return names
