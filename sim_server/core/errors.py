"""Errors raised by the simulation core.

Every problem with user input (world, model or map files, service requests) is reported as a
:class:`ConfigError` whose message names the file, the entry and the key at fault, so that the
server can print one clear line instead of a traceback.
"""

from __future__ import annotations


class SimError(Exception):
    """Base class of every error the simulation core raises on purpose."""


class ConfigError(SimError):
    """A world, model, map or plugin description is invalid.

    The message is complete and meant for the user, e.g.
    ``/path/world.yaml: layers[2] ("walls"): unrecognized key(s) "colr", "mapp"``.
    """


class EntityError(SimError):
    """A runtime request names an entity that does not exist or already exists."""


class RequestError(SimError):
    """A runtime request carries invalid values (a pose that is not finite, say)."""


#: Most characters of a foreign error's text quoted in one of ours.
QUOTED_TEXT_LIMIT = 300


def one_line(text: str, limit: int = QUOTED_TEXT_LIMIT) -> str:
    """``text`` (an error message from a library, say) on one line: whitespace runs become one
    space, and beyond ``limit`` characters it is cut with ``...``."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
