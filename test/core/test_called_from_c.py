"""Functions that C code calls back, marked (sim_server.core.called_from_c)."""

from __future__ import annotations

import sys

from sim_server.core.called_from_c import called_from_c, runs_called_from_c


def _plain(inner):
    return inner()


@called_from_c
def _marked(inner):
    return inner()


def test_marking_returns_the_function_itself() -> None:
    def function() -> int:
        return 7

    assert called_from_c(function) is function and function() == 7


def test_a_stack_is_inside_a_marked_function_within_the_frames_asked_about() -> None:
    here = sys._getframe
    assert _marked(lambda: runs_called_from_c(here(), 2))  # the lambda's frame, then _marked's
    assert not _marked(lambda: runs_called_from_c(here(), 1))  # the lambda's frame alone
    assert not _plain(lambda: runs_called_from_c(here(), 10))
    assert _marked(lambda: _plain(lambda: runs_called_from_c(here(), 4)))  # lambda, _plain, lambda, _marked
    assert not _marked(lambda: _plain(lambda: runs_called_from_c(here(), 3)))
    assert not runs_called_from_c(None, 5)
