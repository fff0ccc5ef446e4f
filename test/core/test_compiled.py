"""numba's shared set-up (sim_server.core.compiled): every compiled function goes through jit, with
the on-disk cache and NumPy's error model; jit falls back to no cache where numba has nowhere to
write one; typed hands compiled functions arrays of exactly the type compiled."""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.dispatcher import Dispatcher

from sim_server.core import compiled
from sim_server.core.physics import body_memory
from sim_server.core.pictures import raster
from sim_server.core.sensing import ray_kernels


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


PARALLEL_PROBE = """
import warnings
warnings.simplefilter("always")
import numpy as np
from numba import prange
from sim_server.core import compiled
import numba

def total(values):
    result = 0.0
    for i in prange(values.shape[0]):
        result += values[i]
    return result

function = compiled.jit_parallel(total)
assert function(np.ones(1000)) == 1000.0
print(numba.threading_layer())
"""


@pytest.mark.parametrize("requested", [None, "tbb", "threadsafe", "workqueue"])
def test_parallel_loops_never_run_on_tbb(requested: str | None) -> None:
    """A fresh process (the layer is chosen at the first parallel loop): OpenMP or the workqueue,
    never TBB, whatever NUMBA_THREADING_LAYER asks; a request that would load TBB is named in a
    warning, another choice is kept."""
    import os
    import subprocess
    import sys

    environment = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_THREADING")}
    if requested is not None:
        environment["NUMBA_THREADING_LAYER"] = requested
    done = subprocess.run(
        [sys.executable, "-c", PARALLEL_PROBE], capture_output=True, text=True, timeout=300, env=environment
    )
    assert done.returncode == 0, done.stderr
    layer = done.stdout.split()[-1]
    assert layer in ("omp", "workqueue")
    if requested == "workqueue":
        assert layer == "workqueue"
    assert (f"NUMBA_THREADING_LAYER={requested}" in done.stderr) == (requested in compiled.TBB_LAYERS)


def test_the_priority_names_every_layer_with_tbb_last() -> None:
    """numba requires a permutation of its three layers; the workqueue, always there, comes before TBB."""
    import numba

    assert sorted(numba.config.THREADING_LAYER_PRIORITY) == ["omp", "tbb", "workqueue"]
    assert numba.config.THREADING_LAYER_PRIORITY[-1] == "tbb"


#: In a fresh process: what importing the compiled set-up loads, then linear algebra compiled
#: and in Python (the numbers printed as JSON).
WITHOUT_BLAS_CHECK = """
import json, sys
import numpy as np
from sim_server.core import compiled
linalg_at_import = "scipy.linalg" in sys.modules
dot = compiled.jit(lambda a, b: np.dot(a, b))
correlate = compiled.jit(lambda a, b: np.correlate(a, b))
import scipy.linalg
print(json.dumps([linalg_at_import, float(dot(np.arange(3.0), np.arange(3.0))),
                  correlate(np.arange(3.0), np.ones(2)).tolist(), scipy.linalg.solve([[2.0]], [4.0]).tolist()]))
"""


def test_numbas_array_functions_load_without_scipys_linear_algebra_which_still_works() -> None:
    pytest.importorskip("scipy.linalg", reason="the check only matters where SciPy is installed")
    result = subprocess.run([sys.executable, "-c", WITHOUT_BLAS_CHECK], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == [False, 5.0, [1.0, 3.0], [2.0]]


TAKE_ALL = """
from numba import prange


def take_all(counter, items, threads, taken):
    for _thread in prange(threads):
        while True:
            item = take_next(counter)
            if item >= items:
                break
            taken[item] += 1
    return taken
"""


def test_take_next_shares_every_item_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads taking items as they come for them take each item exactly once; each thread's last
    take, past the end, counts too."""
    namespace: dict = {"take_next": compiled.take_next}
    exec(compile(TAKE_ALL, "<no file>", "exec"), namespace)
    monkeypatch.setattr(compiled, "CACHED", True)  # restored afterwards: this function has no cache
    take_all = compiled.jit_parallel(namespace["take_all"])
    for threads in (1, 2, 5):
        counter = np.zeros(1, dtype=np.int64)
        taken = take_all(counter, 1000, threads, np.zeros(1000, dtype=np.int64))
        assert (taken == 1).all()
        assert counter[0] == 1000 + threads


def test_one_parallel_loop_at_a_time() -> None:
    """parallel_turn says yes to one caller at a time, only to callers that want it; the turn ends
    with the with block, an exception's too."""
    with compiled.parallel_turn(True) as first, compiled.parallel_turn(True) as second:
        assert first and not second
    with pytest.raises(RuntimeError), compiled.parallel_turn(True) as failing:
        assert failing
        raise RuntimeError("a loop that failed")
    with compiled.parallel_turn(False) as unwanted:
        assert not unwanted
    with compiled.parallel_turn(True) as again:
        assert again


def test_thread_choice_takes_the_faster_way_and_tries_the_other_now_and_then() -> None:
    """Each way is measured first (its first call left out), then the faster one is taken, the
    other tried every TRIAL_EVERY calls; a change in which is faster is followed."""
    choice = compiled.ThreadChoice()
    cost = {True: 3.0, False: 1.0}  # seconds a unit: the threads slower, as on a busy host
    ways = []
    for _ in range(400):
        parallel = choice.parallel()
        ways.append(parallel)
        choice.took(parallel, cost[parallel] * 10.0, 10.0)
    assert ways[:2] == [True, True] and ways[2:4] == [False, False]  # each way twice: its first call left out
    later = ways[4:]
    assert later.count(True) == len(later) // compiled.ThreadChoice.TRIAL_EVERY  # only the trials
    cost[True] = 0.5  # the other core is free again: the next trial switches
    for _ in range(compiled.ThreadChoice.TRIAL_EVERY + 1):
        parallel = choice.parallel()
        choice.took(parallel, cost[parallel] * 10.0, 10.0)
    recent = []
    for _ in range(compiled.ThreadChoice.TRIAL_EVERY - 1):
        recent.append(choice.parallel())
        choice.took(recent[-1], cost[recent[-1]] * 10.0, 10.0)
    assert recent.count(False) <= 1  # the threads, but for a trial of one thread


FORKED_CHILD = """
import multiprocessing
import numpy as np
from bench.social_force_oracle import crowd_step
from sim_server.core import compiled
from sim_server.core.crowd import social_force

social_force.PAIR_THREADS.parallel = lambda: True
count = social_force.PARALLEL_MIN_AGENTS + 10


def step():
    return crowd_step(count, seed=3)


def child(queue):
    with compiled.parallel_turn(True) as allowed:
        pass
    queue.put((allowed, step().tolist()))


if __name__ == "__main__":
    parent = step()  # on the threads: OpenMP started here
    assert compiled._threads_started
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=child, args=(queue,))
    process.start()
    allowed, forces = queue.get(timeout=120)
    process.join(60)
    assert process.exitcode == 0, process.exitcode
    assert not allowed and np.array_equal(np.array(forces), parent)
    print("ok")
"""


def test_a_child_forked_after_the_threads_started_runs_its_loops_on_one_thread() -> None:
    """GNU OpenMP cannot run in a child forked after the parent's parallel loops (numba ends the
    child): there parallel_turn says no, and the child's large crowd steps serially to the same
    forces. In a fresh process, as the parent must start the threads itself."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS): no parallel loop to start")
    done = subprocess.run([sys.executable, "-c", FORKED_CHILD], capture_output=True, text=True, timeout=300,
                          cwd=str(Path(compiled.__file__).resolve().parents[2]))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "ok"


def test_one_function_compiled_with_two_sets_of_options_is_refused(tmp_path: Path) -> None:
    """numba's cache keys machine code by a function's file, name, line and signature, not by its
    options: a serial and a parallel compilation of one function would load each other's code (the
    parallel code loaded as serial crashed a process), so jit refuses the second."""
    module = tmp_path / "twice_compiled.py"
    module.write_text("def twice(x):\n    return 2 * x\n")
    namespace: dict = {"__name__": "twice_compiled"}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    compiled.jit(namespace["twice"])
    compiled.jit(namespace["twice"])  # the same options again: the same machine code, allowed
    with pytest.raises(ValueError, match="compile two functions"):
        compiled.jit_parallel(namespace["twice"])


def test_a_thread_choice_s_turn_counts_its_block_for_the_way_it_ran() -> None:
    """turn asks the choice, takes parallel_turn and counts the block's time for the way it ran;
    a block that raises counts for nothing, and its turn is given back."""
    choice = compiled.ThreadChoice()
    with choice.turn(10.0) as parallel:
        assert parallel  # the threads are measured first
        with compiled.parallel_turn(True) as other:
            assert not other  # the turn is held for the block
    assert choice._calls == {True: 1, False: 0}  # noqa: SLF001 - the counts are the point
    with pytest.raises(RuntimeError), choice.turn(10.0):
        raise RuntimeError("a loop that failed")
    assert choice._calls == {True: 1, False: 0}  # noqa: SLF001
    with compiled.parallel_turn(True) as again:
        assert again
