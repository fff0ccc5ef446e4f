"""Timing the parts of a world's step: hooks, plugins and functions wrapped with timers.

:class:`PartTimer` adds up the wall time spent in named parts. It wraps callables
(:meth:`PartTimer.timed`), replaces a module's or class's attribute by a timed one and puts it
back (:meth:`PartTimer.patch`, :meth:`PartTimer.restore`), and times a world's before- and
after-step hooks and each plugin hook (a batch of plugins counts as one). A timer adds a
microsecond or so to each call it wraps.

Units: seconds in :attr:`PartTimer.spent`, microseconds per step from :meth:`PartTimer.per_step`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Callable

from sim_server.core.world import World


class PartTimer:
    """Wall time spent in named parts, with the arguments of the last call of some kept."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        #: The positional arguments of the last call of each part timed with ``keep``.
        self.captured: dict[str, tuple] = {}
        self._saved: list[tuple[Any, str, Any]] = []

    def timed(self, name: str, call: Callable[..., Any], keep: str | None = None) -> Callable[..., Any]:
        """``call`` adding its time to part ``name`` (its arguments kept as ``keep``, if given)."""
        spent, captured, clock = self.spent, self.captured, time.perf_counter

        def wrapper(*arguments: Any, **keywords: Any) -> Any:
            if keep is not None:
                captured[keep] = arguments
            started = clock()
            try:
                return call(*arguments, **keywords)
            finally:
                spent[name] += clock() - started
        return wrapper

    def patch(self, owner: Any, attribute: str, name: str, keep: str | None = None) -> None:
        """Time ``owner.attribute`` (a module's function or a class's method) as part ``name``
        until :meth:`restore`. What the module or class held is put back as it was: a class's
        method got through the class may be of another kind (Box2D's would lose its binding)."""
        self._saved.append((owner, attribute, vars(owner)[attribute]))
        setattr(owner, attribute, self.timed(name, getattr(owner, attribute), keep))

    def restore(self) -> None:
        """Put back everything :meth:`patch` replaced."""
        while self._saved:
            owner, attribute, original = self._saved.pop()
            setattr(owner, attribute, original)

    def time_hooks(self, world: World, label: Callable[[str, Callable[..., Any]], str | None]) -> None:
        """Time ``world``'s before- and after-step hooks, each as part ``label(phase, hook)``
        (``phase``: ``"before step"`` or ``"after step"``; None leaves a hook untimed)."""
        for phase, hooks in (("before step", world.before_step_hooks), ("after step", world.after_step_hooks)):
            names = [label(phase, hook) for hook in hooks]
            hooks[:] = [hook if name is None else self.timed(name, hook) for name, hook in zip(names, hooks)]

    def time_plugins(self, world: World, label: Callable[[str, str], str]) -> dict[str, list]:
        """Time each plugin hook of ``world`` as part ``label(phase, owner)`` (the owner as
        :func:`owner_name` gives it); returns the hooks as they were, for putting back."""
        hooks = world.plugins._hooks  # noqa: SLF001 - a benchmark's look inside
        kept = {phase: list(entries) for phase, entries in hooks.items()}
        for phase, entries in hooks.items():
            hooks[phase] = [(owner, self.timed(label(phase, owner_name(owner)), call)) for owner, call in entries]
        return kept

    def per_step(self, steps: float) -> dict[str, float]:
        """Each part's microseconds per step over ``steps`` steps."""
        return {name: 1e6 * total / steps for name, total in self.spent.items()}


def hook_name(call: Callable[..., Any]) -> str:
    """A hook's qualified name (a bound method's function's)."""
    return getattr(getattr(call, "__func__", call), "__qualname__", repr(call))


def owner_name(owner: Any) -> str:
    """A plugin hook's owner: a plugin (its class) or a batch of one class's plugins."""
    items = getattr(owner, "items", None)
    if items:
        return f"{type(items[0].plugin).__name__} (a batch of {len(items)})"
    plugin = getattr(owner, "plugin", owner)
    return type(plugin).__name__
