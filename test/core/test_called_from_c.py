"""Functions that C code calls back, marked (sim_server.core.called_from_c)."""

from __future__ import annotations

from sim_server.core.called_from_c import called_from_c, is_called_from_c


def _plain() -> None:
    pass


@called_from_c
def _marked() -> None:
    pass


def test_marking_returns_the_function_itself_and_tells_its_code() -> None:
    def function() -> int:
        return 7

    assert not is_called_from_c(function.__code__)
    assert called_from_c(function) is function and function() == 7
    assert is_called_from_c(function.__code__) and is_called_from_c(_marked.__code__)
    assert not is_called_from_c(_plain.__code__)
