"""The plugin API: base classes for model and world plugins, their context and the update timer.

A plugin is a Python class registered under an entry point of the group
:data:`MODEL_PLUGIN_GROUP` (or :data:`WORLD_PLUGIN_GROUP`); ``type: Laser`` in a model file
selects the entry point named ``Laser``. A third-party package registers its own plugins in its
``setup.py``/``pyproject.toml``::

    entry_points={"sim_server.model_plugins": ["Sonar = my_pkg.sonar:SonarPlugin"]}

Life cycle of a model plugin: once per process, before its first instance, the class may
:meth:`~Plugin.prepare` itself (compile what its steps need); the class is constructed with a
:class:`PluginContext`, :meth:`ModelPlugin.on_initialize` reads its configuration (a strict
:class:`YamlReader`: keys it does not read are errors), then every step
:meth:`before_physics_step` and :meth:`after_physics_step` run around the Box2D step, and
contact callbacks arrive for contacts of the plugin's own model. :meth:`on_shutdown` releases
whatever the plugin created (publishers, subscriptions, timers) when its model leaves the world.

The world a plugin sees (``self.context.world``) is a :class:`PluginWorld`: the part of the
world the plugin may use, and the whole of the plugin author's contract with it.

Batches: a class may also override :meth:`Plugin.before_physics_step_batch` (or
:meth:`Plugin.after_physics_step_batch`), a class method that does the step's work of all its
live instances in one call (one compiled ray cast for every laser due, say) instead of one call
per instance; it must have the same effect as calling the instance hook on each of them, in
order. A batch that raises is split up: from then on its plugins run one by one, so the one at
fault is found and disabled while the others go on (in the step it raised, the plugins after
the faulty one may have missed their turn).

This module imports no ROS: a plugin that publishes gets the ROS node as ``context.ros_node``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from sim_server.core.format.entity_names import frame_id, plugin_topic
from sim_server.core.geometry import Pose2D
from sim_server.core.physics.world_view import WorldView
from sim_server.core.timing.timekeeper import TimeKeeper

if TYPE_CHECKING:
    from Box2D import b2

    from sim_server.core.format.yaml_reader import YamlReader
    from sim_server.core.physics.contacts import Contact
    from sim_server.core.physics.model import Model


class PluginWorld(WorldView, Protocol):
    """What of the world a plugin may use (``self.context.world``): the plugin author's contract.

    The world composes the plugins, so the plugin API names this protocol, never the world's
    class; :class:`sim_server.core.world.World` fulfils it. What the world has beyond it may
    change without notice. Units: metres, radians, seconds (sim time), world frame.

    * Reading, as every part of the world may (:class:`WorldView`): the models, the layers and
      their collision bits, :attr:`~WorldView.static_geometry_version`; listening to models
      entering, leaving and moving (:meth:`~WorldView.add_listener`); one object per world that
      several plugins use (:meth:`~WorldView.shared`: the lasers' scene, a renderer).
    * Reading, besides: :attr:`time`, :attr:`seed`, :meth:`model`, :meth:`contacts`.
    * Changing, mostly for world plugins and never inside a contact callback:
      :meth:`spawn_model`, :meth:`delete_model`, :meth:`move_model`, :meth:`set_model_state`.
    """

    @property
    def time(self) -> TimeKeeper:
        """Sim time (integer nanoseconds) and step size (s); read it, the world advances it."""

    @property
    def seed(self) -> int | None:
        """The seed of every noise source, or None for nondeterministic runs."""

    def model(self, name: str) -> "Model":
        """The model called ``name`` (:class:`~sim_server.core.errors.EntityError` if none)."""

    def contacts(self) -> "list[Contact]":
        """Every pair of fixtures touching now, with their contact points (m, world frame)."""

    def spawn_model(
        self, model_path: "str | Path", name: str, namespace: str = "", pose: Pose2D = Pose2D()
    ) -> "Model":
        """Read a model file (relative paths against the world file's folder) and add it."""

    def delete_model(self, name: str) -> None:
        """Remove a model with its bodies, joints and plugins."""

    def move_model(self, name: str, pose: Pose2D) -> None:
        """Put a model's first body at ``pose``, carrying its other bodies rigidly."""

    def set_model_state(self, name: str, pose: Pose2D, vx: float, vy: float, wz: float) -> None:
        """Set a model's pose and twist (m/s, rad/s, world frame) at once."""


class ModelPlugins(Protocol):
    """The plugins of the world's models, as the layers above the core read them
    (``world.plugins``; loading and running them is the world's business). Find what a plugin
    offers by :mod:`~sim_server.core.plugins.capabilities`, not by its class."""

    def plugins_of(self, model: "Model") -> "list[Plugin]":
        """The live plugins of ``model``, in load order."""

    def find(self, model: "Model", name: str) -> "Plugin":
        """The live plugin called ``name`` of ``model`` (``KeyError`` when there is none)."""


#: Version of this API; a plugin class declares the version it was written for.
PLUGIN_API_VERSION = 1
#: Entry point group of model plugins.
MODEL_PLUGIN_GROUP = "sim_server.model_plugins"
#: Entry point group of world plugins.
WORLD_PLUGIN_GROUP = "sim_server.world_plugins"


@dataclass
class PluginContext:
    """What a plugin knows about its place in the simulation.

    Attributes:
        name: the plugin's name from the YAML entry.
        type_name: the plugin's type (its entry point name).
        world: the world, as far as plugins may use it (:class:`PluginWorld`).
        model: the plugin's model (None for world plugins).
        ros_node: the ROS node to create publishers and subscriptions on, or None when the
            core runs without ROS.
    """

    name: str
    type_name: str
    world: PluginWorld
    model: "Model | None" = None
    ros_node: Any = None

    @property
    def namespace(self) -> str:
        """The model's ROS namespace without surrounding slashes ("" for none)."""
        return self.model.namespace.strip("/") if self.model is not None else ""

    def topic(self, name: str) -> str:
        """A topic name (as :meth:`YamlReader.get_topic` reads it) in the model's namespace:
        ``<ns>/<name>``; a leading ``/`` keeps it global, a leading ``~/`` private to the
        server's node (rclpy expands it: ``/sim_server/<name>``)."""
        return plugin_topic(self.namespace, name)

    def frame(self, name: str) -> str:
        """A TF frame id (as :meth:`YamlReader.get_frame` reads it) by the reference's rule:
        ``<ns>_<name>``; a leading ``/`` means global (and is dropped)."""
        return frame_id(self.namespace, name)

    def world_frame(self, name: str) -> str:
        """A TF frame id that is not the model's (``map``, ``world``: ``world_frame_id``,
        ``ground_truth_frame_id``): ``name`` as it is, the reference's global ``/`` dropped."""
        return frame_id("", name)

    def describe(self) -> str:
        """``plugin "laser" (type "Laser") of model "robot"`` for messages."""
        owner = f' of model "{self.model.name}"' if self.model is not None else " (world plugin)"
        return f'plugin "{self.name}" (type "{self.type_name}"){owner}'


class Plugin:
    """Hooks shared by model and world plugins; every hook is optional."""

    #: The plugin API version this class was written for.
    api_version = PLUGIN_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context

    @classmethod
    def prepare(cls) -> None:
        """Make ready, once per process, what the class's steps will need (compile or load its
        compiled functions, say), before its first instance is made.

        The world calls it when it loads a world file naming the class (also for models that
        levels bring in later, in the middle of a step) or a model naming it is spawned, so
        that no step pays for it. Raising makes the plugin type unusable, reported as if it
        could not be imported.
        """

    def on_initialize(self, config: "YamlReader") -> None:
        """Read the configuration (every key the YAML entry has, besides name and type)."""

    def before_physics_step(self, time: TimeKeeper) -> None:
        """Called every step before Box2D steps (apply commands here)."""

    def after_physics_step(self, time: TimeKeeper) -> None:
        """Called every step after Box2D stepped and sim time advanced (sense and publish here)."""

    @classmethod
    def before_physics_step_batch(cls, plugins: "Sequence[Any]", time: TimeKeeper) -> None:
        """:meth:`before_physics_step` of every live instance of this class at once.

        Override it, together with the instance hook, when one call for all instances is
        cheaper than one call each; the plugins come in the order they were loaded, as a
        :class:`PluginBatch`.
        """
        for plugin in plugins:
            plugin.before_physics_step(time)

    @classmethod
    def after_physics_step_batch(cls, plugins: "Sequence[Any]", time: TimeKeeper) -> None:
        """:meth:`after_physics_step` of every live instance of this class at once (see
        :meth:`before_physics_step_batch`)."""
        for plugin in plugins:
            plugin.after_physics_step(time)

    def on_shutdown(self) -> None:
        """Release publishers, subscriptions and anything else the plugin created."""


class ModelPlugin(Plugin):
    """Base class of model plugins.

    Contact callbacks receive only contacts in which one of the plugin's model's bodies takes
    part; :meth:`split_contact` tells which fixture is the model's own.
    """

    @property
    def model(self) -> "Model":
        """The plugin's model."""
        assert self.context.model is not None
        return self.context.model

    def begin_contact(self, contact: "b2.contact") -> None:
        """Two fixtures started touching."""

    def end_contact(self, contact: "b2.contact") -> None:
        """Two fixtures stopped touching."""

    def pre_solve(self, contact: "b2.contact", old_manifold: "b2.manifold") -> None:
        """Before the contact is solved this step (not called for sensors)."""

    def post_solve(self, contact: "b2.contact", impulse: "b2.contactImpulse") -> None:
        """After the contact was solved this step, with the impulses applied."""

    def split_contact(self, contact: "b2.contact") -> "tuple[b2.fixture, b2.fixture] | None":
        """``(own fixture, other fixture)`` when the contact involves this model, else None."""
        fixture_a, fixture_b = contact.fixtureA, contact.fixtureB
        if _owner(fixture_a) is self.model:
            return fixture_a, fixture_b
        if _owner(fixture_b) is self.model:
            return fixture_b, fixture_a
        return None


@dataclass(frozen=True)
class UpdateInfo:
    """What a world plugin's phase hooks learn of the step (Gazebo Sim's UpdateInfo).

    Attributes:
        sim_time_ns: sim time reached after this step, nanoseconds.
        step_size: sim seconds this step advances (0 while paused).
        iterations: steps taken once this step is done.
        wall_time: wall-clock time, seconds since the epoch.
        paused: whether the world is paused (the hooks still run, time does not advance).
    """

    sim_time_ns: int
    step_size: float
    iterations: int
    wall_time: float
    paused: bool

    @property
    def sim_time(self) -> float:
        """Sim time reached after this step, seconds."""
        return self.sim_time_ns / 1e9


class WorldPlugin(Plugin):
    """Base class of world plugins (a world file's ``plugins:`` entries).

    Besides the hooks of every plugin, a world plugin may take part in the phases of a step as
    Gazebo Sim's systems do: ``on_initialize`` is *configure* (read and write, once, with the
    plugin's YAML), :meth:`pre_update` runs before physics (read and write: apply controls),
    the physics step is the server's *update*, and :meth:`post_update` runs after it (read
    the state: sensors, recorders; do not change it). Both phase hooks also run while the world
    is paused, with a step size of 0. Model plugins have the same phases under other names:
    ``before_physics_step`` and ``after_physics_step``.
    """

    def pre_update(self, info: UpdateInfo) -> None:
        """Before the physics step (and on every paused tick)."""

    def post_update(self, info: UpdateInfo) -> None:
        """After the physics step (and on every paused tick); read-only by convention."""

    def on_model_added(self, model: "Model") -> None:
        """A model entered the world."""

    def on_model_removed(self, model: "Model") -> None:
        """A model is about to leave the world."""


def _owner(fixture: "b2.fixture") -> Any:
    data = fixture.body.userData
    return getattr(data, "entity", None)


class PluginBatch(list):
    """The plugins handed to a batch hook, in load order, with :attr:`cache`: a dict in which
    the plugin class may keep what it derives from the members (groups by rate, say); it is
    emptied whenever the members change."""

    __slots__ = ("cache",)

    def __init__(self, plugins: "Iterable[Any]" = ()) -> None:
        super().__init__(plugins)
        self.cache: dict[str, Any] = {}


class UpdateTimer:
    """Decides on which steps a plugin running at ``rate`` Hz does its work (the reference's rule).

    ``inf`` fires on every step; ``0`` (or a rate whose period overflows a float: below about
    6e-300 Hz) fires only at t = 0, never after; any other rate fires on the step nearest to each
    multiple of the period (within a window of one step centred on it), so the long-run rate is
    the requested one and does not drift. A period no longer than a step
    fires on every step. Times are whole nanoseconds, so the rule is exact.

    Args:
        rate: updates per second of sim time (>= 0, may be ``math.inf``).
    """

    #: Periods shorter than this (s) fire on every step, as in the reference.
    ALWAYS_PERIOD = 1e-5

    def __init__(self, rate: float) -> None:
        if math.isnan(rate) or rate < 0.0:
            raise ValueError(f"update rate must be >= 0 Hz, got {rate}")
        self.rate = rate
        if rate == 0.0 or math.isinf(1e9 / rate):  # (so slow that the period overflows: never again)
            self.period_ns: int | None = None
        elif math.isinf(rate) or 1.0 / rate < self.ALWAYS_PERIOD:
            self.period_ns = 0
        else:
            self.period_ns = int(round(1e9 / rate))

    def check(self, time: TimeKeeper) -> bool:
        """Whether to update at the current sim time: a function of the time and the period
        alone, so timers of equal :attr:`period_ns` agree (a batch asks one of them)."""
        if self.period_ns == 0:
            return True
        shifted = time.time_ns + time.step_ns // 2
        if self.period_ns is None:
            return shifted < time.step_ns
        return shifted % self.period_ns < time.step_ns
