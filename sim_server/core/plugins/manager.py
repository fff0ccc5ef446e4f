"""Loading plugins from entry points and running their hooks, isolating their failures.

At load time a plugin that cannot be found, prepared, constructed or initialised fails its model
with a :class:`ConfigError` naming model, plugin name, type and cause. At run time a plugin that
raises is disabled (logged once with its traceback) and the simulation goes on.

The manager names no world: it gets the world as plugins see it (a :class:`PluginWorld`), the
Box2D world whose contacts it forwards, and the ROS node plugins publish through.

Step hooks run in load order. The instances of a class that overrides a batch hook
(:meth:`Plugin.before_physics_step_batch`) share one call, placed where the first of them was
loaded; a batch that raises is split into per-plugin calls for good, so the faulty plugin is
disabled on its own.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from Box2D import b2

from sim_server.core.called_from_c import called_from_c
from sim_server.core.errors import ConfigError, one_line
from sim_server.core.format.model_file import PluginSpec
from sim_server.core.format.yaml_reader import YamlReader
from sim_server.core.plugins.api import (
    MODEL_PLUGIN_GROUP,
    PLUGIN_API_VERSION,
    WORLD_PLUGIN_GROUP,
    ModelPlugin,
    Plugin,
    PluginBatch,
    PluginContext,
    PluginWorld,
    UpdateInfo,
    WorldPlugin,
)
from sim_server.core.timing.timekeeper import TimeKeeper

if TYPE_CHECKING:
    from sim_server.core.physics.model import Model

LOGGER = logging.getLogger("sim_server")
#: What a plugin may raise without taking the server down: any error, and SystemExit too (a
#: plugin calling sys.exit() is reported and disabled like one that fails).
PLUGIN_FAILURES = (Exception, SystemExit)

_HOOKS = ("before_physics_step", "after_physics_step", "pre_update", "post_update")
#: Hooks a plugin class may run for all its instances in one call (``<hook>_batch``).
_BATCHABLE_HOOKS = ("before_physics_step", "after_physics_step")
_CONTACT_HOOKS = ("begin_contact", "end_contact", "pre_solve", "post_solve")


#: Plugin classes whose :meth:`Plugin.prepare` has run in this process.
_PREPARED: set[type] = set()

#: Entry points found per (group, sys.path), every registration of a name (distinct targets, in
#: the order found): reading them means reading the metadata of every installed distribution
#: (about 150 files here), which a thousand robots' plugins cannot each pay.
_ENTRY_POINTS: dict[tuple[str, tuple[str, ...]], dict[str, tuple[importlib.metadata.EntryPoint, ...]]] = {}


def plugin_registrations(
    group: str, refresh: bool = False
) -> dict[str, tuple[importlib.metadata.EntryPoint, ...]]:
    """Every installed registration of each plugin type name of an entry point group: more than
    one when two installed packages register the same name with different targets (which of them
    a world means cannot be told, so :func:`plugin_class_of` refuses the name).

    Found once per ``sys.path`` (a package put on the path is seen at once); ``refresh`` reads
    them again (a package installed into a folder already on the path).
    """
    key = (group, tuple(sys.path))
    if refresh or key not in _ENTRY_POINTS:
        found: dict[str, tuple[importlib.metadata.EntryPoint, ...]] = {}
        for entry_point in importlib.metadata.entry_points(group=group):
            same_name = found.get(entry_point.name, ())
            if all(other.value != entry_point.value for other in same_name):
                found[entry_point.name] = same_name + (entry_point,)
        _ENTRY_POINTS[key] = found
    return _ENTRY_POINTS[key]


def available_plugin_types(group: str, refresh: bool = False) -> dict[str, importlib.metadata.EntryPoint]:
    """The installed plugin types of an entry point group, by name (the first registration of a
    name two packages register: :func:`plugin_registrations` has both)."""
    return {name: points[0] for name, points in plugin_registrations(group, refresh).items()}


def _registered_by(entry_point: importlib.metadata.EntryPoint) -> str:
    """``package (module:Class)`` for a message: who registered ``entry_point``."""
    distribution = getattr(entry_point, "dist", None)
    package = distribution.name if distribution is not None else "an unnamed package"
    return f"{package} ({entry_point.value})"


def _overrides(plugin: Plugin, hook: str, base: type) -> bool:
    return getattr(type(plugin), hook, None) is not getattr(base, hook, None)


def _overrides_batch(plugin_class: type, hook: str) -> bool:
    name = f"{hook}_batch"
    return getattr(plugin_class, name).__func__ is not getattr(Plugin, name).__func__


def load_plugin_class(spec: PluginSpec, group: str, base: type[Plugin], describe: str) -> type[Plugin]:
    """The class registered as ``spec.plugin_type`` in ``group``, prepared (a :class:`ConfigError`
    if unusable)."""
    where = f"{spec.source}: {spec.location}: {describe}"
    plugin_class = plugin_class_of(spec, group, base, describe)
    if plugin_class not in _PREPARED:
        entry_point = plugin_registrations(group)[spec.plugin_type][0]
        try:
            plugin_class.prepare()
        except PLUGIN_FAILURES as exc:
            LOGGER.debug("plugin class failed to prepare", exc_info=True)
            raise ConfigError(
                f"{where}: {entry_point.value} cannot be prepared: {type(exc).__name__}: {one_line(str(exc))}"
            ) from None
        _PREPARED.add(plugin_class)
    return plugin_class


def plugin_class_of(spec: PluginSpec, group: str, base: type[Plugin], describe: str) -> type[Plugin]:
    """The class registered as ``spec.plugin_type`` in ``group``, imported and checked (a subclass
    of ``base`` written for this API) but not prepared: what it offers can be asked without
    compiling anything. A :class:`ConfigError` naming the entry (``describe``) if unusable."""
    where = f"{spec.source}: {spec.location}: {describe}"
    registrations = plugin_registrations(group).get(spec.plugin_type)
    if registrations is None:
        registrations = plugin_registrations(group, refresh=True).get(spec.plugin_type)
    if registrations is None:
        known = ", ".join(sorted(plugin_registrations(group))) or "none"
        raise ConfigError(f"{where}: no such plugin type is installed (entry points {group}: {known})")
    if len(registrations) > 1:
        both = " and ".join(_registered_by(point) for point in registrations)
        raise ConfigError(
            f"{where}: the plugin type {spec.plugin_type!r} is registered by more than one installed "
            f"package in {group}: {both}; uninstall one, or rename one's entry point"
        )
    entry_point = registrations[0]
    try:
        plugin_class = entry_point.load()
    except PLUGIN_FAILURES as exc:
        raise ConfigError(f"{where}: cannot be imported ({entry_point.value}): {type(exc).__name__}: {exc}") from None
    if not (isinstance(plugin_class, type) and issubclass(plugin_class, base)):
        raise ConfigError(f"{where}: {entry_point.value} is not a {base.__name__} subclass")
    version = getattr(plugin_class, "api_version", None)
    if version != PLUGIN_API_VERSION:
        raise ConfigError(
            f"{where}: written for plugin API version {version}, this simulator provides {PLUGIN_API_VERSION}"
        )
    return plugin_class


class _LoadedPlugin:
    """A plugin with its context, the hooks it overrides and whether it is still enabled."""

    def __init__(self, plugin: Plugin, context: PluginContext) -> None:
        self.plugin = plugin
        self.context = context
        self.enabled = True


class _Batch:
    """The live instances of one plugin class whose step hook runs as one class-level call."""

    def __init__(self, plugin_class: type, hook: str) -> None:
        self.plugin_class = plugin_class
        self.items: list[_LoadedPlugin] = []
        self.plugins = PluginBatch()
        self.function: Callable = getattr(plugin_class, f"{hook}_batch")

    def add(self, item: _LoadedPlugin) -> None:
        self.items.append(item)
        self.plugins.append(item.plugin)
        self.plugins.cache.clear()  # derived from the members

    def __call__(self, argument: Any) -> None:
        self.function(self.plugins, argument)

    def discard(self, gone: "set[_LoadedPlugin]") -> None:
        """Forget the plugins in ``gone``."""
        self.items = [item for item in self.items if item not in gone]
        self.plugins = PluginBatch(item.plugin for item in self.items)


class PluginManager:
    """Owns the plugins of a world: loads them, runs their hooks, tells them of contacts.

    Args:
        world: the world, as its plugins see it (their contexts' ``world``).
        physics: the Box2D world whose contacts go to the plugins.
        ros_node: the ROS node plugins publish through (None without ROS).
    """

    def __init__(self, world: PluginWorld, physics: b2.world, ros_node: Any = None) -> None:
        self._world = world
        self._physics = physics
        self._ros_node = ros_node
        self._by_model: dict[int, list[_LoadedPlugin]] = {}
        self._world_plugins: list[_LoadedPlugin] = []
        #: Per hook, the calls of a step in order: (loaded plugin, its bound hook) or (batch, batch).
        self._hooks: dict[str, list[tuple[_LoadedPlugin | _Batch, Callable]]] = {hook: [] for hook in _HOOKS}
        self._batches: dict[str, dict[type, _Batch]] = {hook: {} for hook in _BATCHABLE_HOOKS}
        #: Classes whose batch raised: their plugins run one by one from then on.
        self._unbatched: dict[str, set[type]] = {hook: set() for hook in _BATCHABLE_HOOKS}
        #: Plugins unloaded or disabled since the hook lists were last compacted.
        self._gone: set[_LoadedPlugin] = set()
        self._contact_plugins: dict[int, list[_LoadedPlugin]] = {}
        self._contact_listener: _ContactDispatcher | None = None

    # ------------------------------------------------------------------------ loading
    @staticmethod
    def prepare(specs: Iterable[tuple[PluginSpec, str]], group: str) -> None:
        """Load and prepare (:meth:`Plugin.prepare`) the classes of ``specs`` (each with the name
        of the model that carries it, or "" for a world plugin) ahead of their first instance,
        so that models arriving inside a step (levels) find them ready."""
        base = ModelPlugin if group == MODEL_PLUGIN_GROUP else WorldPlugin
        seen: set[str] = set()
        for spec, owner in specs:
            if spec.plugin_type in seen:
                continue
            seen.add(spec.plugin_type)
            describe = f'plugin "{spec.name}" (type "{spec.plugin_type}")' + (
                f' of model "{owner}"' if owner else " (world plugin)"
            )
            load_plugin_class(spec, group, base, describe)

    def _instantiate(self, spec: PluginSpec, context: PluginContext, group: str, base: type[Plugin]) -> _LoadedPlugin:
        plugin_class = load_plugin_class(spec, group, base, context.describe())
        config = YamlReader(dict(spec.config), spec.source, spec.location)
        plugin: Plugin | None = None
        try:
            plugin = plugin_class(context)
            plugin.on_initialize(config)
            config.ensure_all_keys_used()
        except ConfigError as exc:
            self._release_half_made(plugin, context)
            raise ConfigError(f"{context.describe()}: {exc}") from None
        except PLUGIN_FAILURES as exc:
            LOGGER.debug("plugin failed to initialise", exc_info=True)
            self._release_half_made(plugin, context)
            raise ConfigError(
                f"{spec.source}: {spec.location}: {context.describe()} failed to initialise: "
                f"{type(exc).__name__}: {one_line(str(exc))}"
            ) from None
        return _LoadedPlugin(plugin, context)

    def load_model_plugins(self, model: "Model") -> None:
        """Create and initialise every plugin of ``model``; on failure none of them stays."""
        loaded: list[_LoadedPlugin] = []
        try:
            for spec in model.spec.plugins:
                context = PluginContext(spec.name, spec.plugin_type, self._world, model, self._ros_node)
                loaded.append(self._instantiate(spec, context, MODEL_PLUGIN_GROUP, ModelPlugin))
        except BaseException:
            for item in reversed(loaded):
                self._shutdown(item)
            raise
        self._by_model[id(model)] = loaded
        for item in loaded:
            self._register(item)

    def load_world_plugins(self, specs: Iterable[PluginSpec]) -> None:
        """Create and initialise the world file's plugins."""
        for spec in specs:
            context = PluginContext(spec.name, spec.plugin_type, self._world, None, self._ros_node)
            item = self._instantiate(spec, context, WORLD_PLUGIN_GROUP, WorldPlugin)
            self._world_plugins.append(item)
            self._register(item)

    def _register(self, item: _LoadedPlugin) -> None:
        base = ModelPlugin if isinstance(item.plugin, ModelPlugin) else WorldPlugin
        plugin_class = type(item.plugin)
        for hook in _HOOKS:
            if not _overrides(item.plugin, hook, base):
                continue
            if (
                hook in _BATCHABLE_HOOKS
                and plugin_class not in self._unbatched[hook]
                and _overrides_batch(plugin_class, hook)
            ):
                batch = self._batches[hook].get(plugin_class)
                if batch is None:
                    batch = self._batches[hook][plugin_class] = _Batch(plugin_class, hook)
                    self._hooks[hook].append((batch, batch))
                batch.add(item)
            else:
                self._hooks[hook].append((item, getattr(item.plugin, hook)))
        if isinstance(item.plugin, ModelPlugin) and any(_overrides(item.plugin, h, ModelPlugin) for h in _CONTACT_HOOKS):
            model = item.context.model
            self._contact_plugins.setdefault(id(model), []).append(item)
            if self._contact_listener is None:
                self._contact_listener = _ContactDispatcher(self)
                self._physics.contactListener = self._contact_listener

    def unload_model_plugins(self, model: "Model") -> None:
        """Shut down and forget the plugins of ``model``."""
        items = self._by_model.pop(id(model), [])
        self._forget(items)
        self._contact_plugins.pop(id(model), None)
        for item in reversed(items):
            self._shutdown(item)

    def plugins_of(self, model: "Model") -> list[Plugin]:
        """The live plugins of ``model``."""
        return [item.plugin for item in self._by_model.get(id(model), []) if item.enabled]

    def find(self, model: "Model", name: str) -> Plugin:
        """The live plugin called ``name`` of ``model`` (``KeyError`` when there is none)."""
        for item in self._by_model.get(id(model), []):
            if item.context.name == name and item.enabled:
                return item.plugin
        raise KeyError(f'model "{model.name}" has no plugin named "{name}"')

    @property
    def world_plugins(self) -> list[WorldPlugin]:
        """The live world plugins."""
        return [item.plugin for item in self._world_plugins if item.enabled]  # type: ignore[misc]

    @staticmethod
    def _release_half_made(plugin: Plugin | None, context: PluginContext) -> None:
        """Let a plugin whose initialisation failed free what it made so far (publishers, TF
        claims); its on_shutdown may trip over what it never made, which is not worth a report."""
        if plugin is None:
            return
        try:
            plugin.on_shutdown()
        except PLUGIN_FAILURES:
            LOGGER.debug("%s: on_shutdown after a failed initialisation raised", context.describe(), exc_info=True)

    def _shutdown(self, item: _LoadedPlugin) -> None:
        try:
            item.plugin.on_shutdown()
        except PLUGIN_FAILURES:
            LOGGER.exception("%s raised in on_shutdown", item.context.describe())

    def close(self) -> None:
        """Shut down every world plugin (model plugins go with their models)."""
        for item in reversed(self._world_plugins):
            self._shutdown(item)
        self._forget(self._world_plugins)
        self._world_plugins.clear()

    def _forget(self, items: Iterable[_LoadedPlugin]) -> None:
        """Take ``items`` out of every hook and batch before hooks run next (models leaving one
        after another cost one pass over the hook lists, not one each)."""
        self._gone.update(items)

    def _compact(self) -> None:
        gone, self._gone = self._gone, set()
        for hook in _HOOKS:
            kept = []
            for owner, function in self._hooks[hook]:
                if isinstance(owner, _Batch):
                    owner.discard(gone)
                    if not owner.items:
                        del self._batches[hook][owner.plugin_class]
                        continue
                elif owner in gone:
                    continue
                kept.append((owner, function))
            self._hooks[hook] = kept

    # ------------------------------------------------------------------------ running
    def _disable(self, item: _LoadedPlugin, hook: str, exc: BaseException) -> None:
        item.enabled = False
        LOGGER.error(
            "%s raised in %s and is disabled; the simulation goes on: %s: %s",
            item.context.describe(),
            hook,
            type(exc).__name__,
            exc,
            exc_info=exc,
        )
        self._forget([item])
        model = item.context.model
        if model is not None and id(model) in self._contact_plugins:
            self._contact_plugins[id(model)] = [i for i in self._contact_plugins[id(model)] if i is not item]

    def _split(self, batch: _Batch, hook: str, exc: BaseException) -> None:
        """A batch raised: its plugins run one by one from now on (the faulty one gets disabled)."""
        LOGGER.error(
            "the batched %s of %d plugin(s) of type %s raised; they now run one by one: %s: %s",
            hook,
            len(batch.items),
            batch.plugin_class.__name__,
            type(exc).__name__,
            exc,
            exc_info=exc,
        )
        self._unbatched[hook].add(batch.plugin_class)
        self._batches[hook].pop(batch.plugin_class, None)
        if self._gone:
            self._compact()
        calls = []
        for owner, function in self._hooks[hook]:
            if owner is batch:
                calls.extend((item, getattr(item.plugin, hook)) for item in batch.items if item.enabled)
            else:
                calls.append((owner, function))
        self._hooks[hook] = calls

    def _run(self, hook: str, argument: Any) -> None:
        if self._gone:
            self._compact()
        for owner, call in self._hooks[hook]:
            try:
                if self._gone:  # a model left during this very pass (deleted by an earlier hook)
                    if owner in self._gone:
                        continue
                    if owner.__class__ is _Batch:
                        owner.function(PluginBatch(i.plugin for i in owner.items if i not in self._gone), argument)
                        continue
                call(argument)
            except PLUGIN_FAILURES as exc:
                if isinstance(owner, _Batch):
                    self._split(owner, hook, exc)
                else:
                    self._disable(owner, hook, exc)

    def before_physics_step(self, time: TimeKeeper) -> None:
        """Run every enabled plugin's before-step hook."""
        if self._hooks["before_physics_step"]:
            self._run("before_physics_step", time)

    def after_physics_step(self, time: TimeKeeper) -> None:
        """Run every enabled plugin's after-step hook."""
        if self._hooks["after_physics_step"]:
            self._run("after_physics_step", time)

    @property
    def has_update_hooks(self) -> bool:
        """Whether any world plugin takes part in the pre/post-update phases."""
        if self._gone:
            self._compact()
        return bool(self._hooks["pre_update"] or self._hooks["post_update"])

    def pre_update(self, info: UpdateInfo) -> None:
        """Run every world plugin's pre-update phase."""
        if self._hooks["pre_update"]:
            self._run("pre_update", info)

    def post_update(self, info: UpdateInfo) -> None:
        """Run every world plugin's post-update phase."""
        if self._hooks["post_update"]:
            self._run("post_update", info)

    def notify_model_added(self, model: "Model") -> None:
        """Tell the world plugins of a new model."""
        self._notify("on_model_added", model)

    def notify_model_removed(self, model: "Model") -> None:
        """Tell the world plugins that a model leaves."""
        self._notify("on_model_removed", model)

    def _notify(self, hook: str, model: "Model") -> None:
        for item in list(self._world_plugins):
            if item.enabled:
                try:
                    getattr(item.plugin, hook)(model)
                except PLUGIN_FAILURES as exc:
                    self._disable(item, hook, exc)

    @contextlib.contextmanager
    def removing(self, bodies: Iterable[b2.body]) -> Iterator[None]:
        """Destroy ``bodies`` inside this block: their touching contacts end first, then Box2D's own
        end-contact calls during destruction are suppressed (pybox2d has released the bodies' user
        data by then, so they could not be delivered safely)."""
        listener = self._contact_listener
        if listener is None:
            yield
            return
        for body in bodies:
            for edge in body.contacts:
                contact = edge.contact
                if contact.touching:
                    self.dispatch_contact("end_contact", contact)
        self._physics.contactListener = None
        try:
            yield
        finally:
            self._physics.contactListener = listener

    def dispatch_contact(self, hook: str, contact: b2.contact, *args: Any) -> None:
        """Deliver a contact event to the plugins of the models it involves."""
        entity_a = getattr(contact.fixtureA.body.userData, "entity", None)
        entity_b = getattr(contact.fixtureB.body.userData, "entity", None)
        for entity in (entity_a,) if entity_a is entity_b else (entity_a, entity_b):
            items = self._contact_plugins.get(id(entity))
            if not items:
                continue
            for item in list(items):
                try:
                    getattr(item.plugin, hook)(contact, *args)
                except PLUGIN_FAILURES as exc:
                    self._disable(item, hook, exc)


class _ContactDispatcher(b2.contactListener):
    """Box2D contact listener forwarding to the plugins of the models involved."""

    def __init__(self, manager: PluginManager) -> None:
        super().__init__()
        self._manager = manager

    @called_from_c
    def BeginContact(self, contact: b2.contact) -> None:  # noqa: N802 - Box2D's names
        self._manager.dispatch_contact("begin_contact", contact)

    @called_from_c
    def EndContact(self, contact: b2.contact) -> None:  # noqa: N802
        self._manager.dispatch_contact("end_contact", contact)

    @called_from_c
    def PreSolve(self, contact: b2.contact, old_manifold: b2.manifold) -> None:  # noqa: N802
        self._manager.dispatch_contact("pre_solve", contact, old_manifold)

    @called_from_c
    def PostSolve(self, contact: b2.contact, impulse: b2.contactImpulse) -> None:  # noqa: N802
        self._manager.dispatch_contact("post_solve", contact, impulse)
