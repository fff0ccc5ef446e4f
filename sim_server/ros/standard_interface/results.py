"""Answers of the standard interface's services: a ``simulation_interfaces/msg/Result`` from
what a handler did, refused or failed. The server runs on whatever a handler raises."""

from __future__ import annotations

import logging
from typing import Callable

from simulation_interfaces.msg import Result

from sim_server.core.errors import EntityError, SimError

LOGGER = logging.getLogger("sim_server")


class Refused(Exception):
    """A request refused with the standard's ``code`` (a Result code or the service's own)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def refuse(result: Result, code: int, message: str, what: str) -> Result:
    """Fill ``result`` with ``code`` and ``message`` and log the refusal of ``what``."""
    result.result, result.error_message = code, message
    LOGGER.warning("%s failed: %s", what, message)
    return result


def answer(result: Result, action: Callable[[], None], what: str) -> Result:
    """Run ``action``: RESULT_OK; or the code of the :class:`Refused` it raised; RESULT_NOT_FOUND
    for an unknown entity; RESULT_OPERATION_FAILED for any other error (an unexpected one logged
    with its traceback)."""
    try:
        action()
    except Refused as refused:
        return refuse(result, refused.code, str(refused), what)
    except EntityError as exc:
        return refuse(result, Result.RESULT_NOT_FOUND, str(exc), what)
    except SimError as exc:
        return refuse(result, Result.RESULT_OPERATION_FAILED, str(exc), what)
    except Exception as exc:  # a bug must not take the server down
        result.result = Result.RESULT_OPERATION_FAILED
        result.error_message = f"internal error: {type(exc).__name__}: {exc}"
        LOGGER.exception("%s failed with an internal error", what)
        return result
    result.result, result.error_message = Result.RESULT_OK, ""
    return result
