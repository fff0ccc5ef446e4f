"""numba's shared set-up (sim_server.core.compiled): every compiled function goes through jit, with
the on-disk cache and NumPy's error model; jit falls back to no cache where numba has nowhere to
write one; typed hands compiled functions arrays of exactly the type compiled."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

from sim_server.core import compiled
from sim_server.core.physics import body_memory
from sim_server.core.sensing import ray_kernels
from sim_server.rendering import raster


def test_without_a_cache_location_functions_compile_uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace: dict = {}
    exec(compile("def twice(x):\n    return 2 * x\n", "<no file, so no cache locator>", "exec"), namespace)
    monkeypatch.setattr(compiled, "CACHED", True)
    function = compiled.jit(namespace["twice"])
    assert function(21) == 42 and compiled.CACHED is False


def test_jit_parallel_compiles_in_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    namespace: dict = {}
    exec(compile("def twice(x):\n    return 2 * x\n", "<no file>", "exec"), namespace)
    monkeypatch.setattr(compiled, "CACHED", True)  # restored afterwards: this function has no cache
    function = compiled.jit_parallel(namespace["twice"])
    assert function.targetoptions["parallel"] is True
    assert function.targetoptions["error_model"] == compiled.JIT_OPTIONS["error_model"]


@pytest.mark.parametrize("module", [ray_kernels, body_memory, raster], ids=lambda module: module.__name__)
def test_every_compiled_function_has_the_shared_options(module: object) -> None:
    functions = {name: value for name, value in vars(module).items() if isinstance(value, Dispatcher)}
    assert functions
    for name, function in functions.items():
        assert function.targetoptions["error_model"] == "numpy", name
        cache = getattr(function, "_cache", None)
        assert (type(cache).__name__ == "FunctionCache") == compiled.CACHED, name  # on disk where it can be


def test_typed_passes_arrays_of_the_compiled_type_through() -> None:
    array = np.arange(6, dtype=np.float64)
    assert compiled.typed(array, np.float64) is array


@pytest.mark.parametrize(
    "array",
    [
        np.arange(6, dtype=np.int32),  # another dtype
        np.arange(12, dtype=np.float64)[::2],  # strided
        np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),  # Fortran order
        [0.0, 1.0, 2.0],  # not an array
    ],
    ids=["dtype", "strided", "fortran", "list"],
)
def test_typed_copies_anything_else(array: object) -> None:
    result = compiled.typed(array, np.float64)
    assert result is not array and result.dtype == np.float64
    assert result.flags.c_contiguous and result.flags.aligned and result.flags.writeable
    assert np.array_equal(result, np.asarray(array, dtype=np.float64))


def test_typed_copies_a_read_only_array() -> None:
    array = np.arange(4, dtype=np.int64)
    array.flags.writeable = False
    result = compiled.typed(array, np.int64)
    assert result is not array and result.flags.writeable and np.array_equal(result, array)


def test_compiled_imports_nothing_of_sim_server() -> None:
    tree = ast.parse(inspect.getsource(compiled))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert imported and not [name for name in imported if name.split(".")[0] == "sim_server"]
