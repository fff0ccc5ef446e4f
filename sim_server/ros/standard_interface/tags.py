"""The standard's tag filter (``simulation_interfaces/msg/TagsFilter``), shared by the queries
of entities, named poses and worlds: no tags ask nothing; else what is tagged with any
(``FILTER_MODE_ANY``) or all (``FILTER_MODE_ALL``) of them passes."""

from __future__ import annotations

from typing import Callable, Iterable

from simulation_interfaces.msg import TagsFilter

from sim_server.core.errors import RequestError

MODES = (TagsFilter.FILTER_MODE_ANY, TagsFilter.FILTER_MODE_ALL)


def tag_filter(given: TagsFilter, what: str) -> Callable[[Iterable[str]], bool] | None:
    """Whether a thing's tags pass ``given`` (None when it has no tags: everything does);
    RequestError naming ``what`` (the field) for an unknown filter mode."""
    if given.filter_mode not in MODES:
        raise RequestError(
            f"{what}.filter_mode {given.filter_mode} is neither FILTER_MODE_ANY ({TagsFilter.FILTER_MODE_ANY}) "
            f"nor FILTER_MODE_ALL ({TagsFilter.FILTER_MODE_ALL})"
        )
    wanted = frozenset(given.tags)
    if not wanted:
        return None
    if given.filter_mode == TagsFilter.FILTER_MODE_ALL:
        return lambda tags: wanted.issubset(tags)
    return lambda tags: not wanted.isdisjoint(tags)
