"""Numba's set-up, shared by every compiled function of the simulator.

Every function compiled with numba (the ray caster's kernels in
:mod:`sim_server.core.sensing.ray_kernels`, the batch body access in
:mod:`sim_server.core.physics.body_memory`, the renderer's rasterizer in
:mod:`sim_server.core.pictures.raster`) is decorated with :func:`jit` (or :func:`jit_parallel`), so
that all of them compile the same way:

* **on-disk cache** (``cache=True``): compiling takes seconds per function (the ray caster some
  15 to 45 s in all), so numba keeps the machine code in ``__pycache__`` next to the defining
  module (or under ``NUMBA_CACHE_DIR``) and later processes load it in a few tenths of a second.
  numba checks a cached function against its *defining file* only (modification time and size)
  and its own bytecode: editing a module recompiles every function defined in it, while editing
  another module (or :data:`JIT_OPTIONS` here) does not. Functions compiled into one another
  therefore live in one module; after changing the options here, delete the ``*.nbi`` and
  ``*.nbc`` files of the ``__pycache__`` directories. Where numba finds no writable place for the
  cache, :func:`jit` compiles without one rather than failing the import, and :data:`CACHED`
  says so.
* **NumPy's error model** (``error_model="numpy"``): a division by zero gives inf or NaN instead
  of raising. The compiled functions guard every division that could be by zero themselves;
  Python's model, which checks each division, made the ray caster about 5 % slower.

* **threading layer** chosen here, before any parallel loop runs: GNU OpenMP where the system
  has it, else numba's own workqueue; never Intel TBB, which numba prefers when the ``tbb``
  wheel is installed (some environments bring it). With TBB a process can hang at exit, its
  work done, in ``tbb::finalize`` as numba unloads its TBB pool (numba issue 10556: oneTBB
  2022.3 deadlocks there when a parallel loop ran on a thread other than the main one and the
  process may use less than one CPU, a cgroup quota). Reproduced here with the ``tbb`` 2022.3.0
  wheel under a quota of half a CPU: 2 runs of 2 hung (a pytest run on ROS 2 Jazzy's wheels hung
  over 9 minutes the same way); with this module's choice none did, ``NUMBA_THREADING_LAYER=tbb``
  included. OpenMP and the workqueue are what numba uses without TBB, so every environment runs
  the layer the tests run. An explicit ``NUMBA_THREADING_LAYER`` that would load TBB (``tbb``,
  ``safe``, ``threadsafe``, ``forksafe``) is replaced, with a warning that names it.

Parallel loops (the ray caster's large batches, the social force's pairs of large crowds) run one
at a time in a process and never in a child forked after the threads started
(:func:`parallel_turn`); they take the threads only while these were faster lately
(:class:`ThreadChoice`: a parallel loop waits for its slowest thread, and a thread waits for a
core another process holds), and share their items out as the threads come for them
(:func:`take_next`), so their results never depend on the threads. A function is compiled with
one set of options only (:func:`jit` refuses a second): numba's cache does not tell them apart.

:func:`typed` is the other half of the contract: numba compiles one specialisation per argument
type (dtype, layout, writeability), so Python callers hand compiled functions arrays of exactly
the type compiled, converting any other, lest a step compile anew.

A ground module of the core: it imports nothing of ``sim_server``. Read :data:`CACHED` as
``compiled.CACHED`` (an attribute of this module that :func:`jit` may set to False), never with
``from sim_server.core.compiled import CACHED``, which copies its value at import time.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numba
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: Options of every compiled function: cached on disk; NumPy's error model, since every division
#: that could be by zero is guarded (Python's model checks each division: about 5 % slower).
JIT_OPTIONS: dict[str, Any] = {"cache": True, "error_model": "numpy"}
#: The order in which numba tries its threading layers for ``prange`` loops (it must name all
#: three): OpenMP, else the workqueue, which is always there, so TBB is never reached.
THREADING_LAYER_PRIORITY = ["omp", "workqueue", "tbb"]
#: Values of ``NUMBA_THREADING_LAYER`` that would load TBB where it is installed.
TBB_LAYERS = frozenset({"tbb", "safe", "threadsafe", "forksafe"})


def choose_threading_layer() -> None:
    """Make numba run parallel loops on OpenMP or its workqueue, never TBB (see the module's
    docstring). Takes effect when the first parallel loop runs; this module calls it on import."""
    requested = str(numba.config.THREADING_LAYER).lower()
    if requested in TBB_LAYERS:
        warnings.warn(
            f"NUMBA_THREADING_LAYER={requested}: sim_server runs numba's parallel loops on OpenMP or the "
            "workqueue, never TBB (a process using it was seen to hang at exit); using those instead",
            RuntimeWarning,
            stacklevel=2,
        )
        numba.config.THREADING_LAYER = "default"
    numba.config.THREADING_LAYER_PRIORITY = list(THREADING_LAYER_PRIORITY)


choose_threading_layer()


def load_array_functions_without_blas_check() -> None:
    """Import numba's array functions (``numba.np.arraymath``) without its BLAS check, which
    imports ``scipy.linalg`` where SciPy is installed: 14 MiB resident for a process that never
    multiplies matrices in compiled code (measured on the server at rest, 2026-11-28). numba
    imports the module at its first compile or cache load anyway; here ``scipy.linalg`` is hidden
    while it does, so numba's ``np.correlate`` and ``np.convolve`` use their own loop for inner
    products. ``np.dot`` and ``np.linalg`` in compiled code import SciPy when compiled, as before,
    and so does any Python code. Nothing is done when SciPy's linear algebra is already loaded
    (it then costs nothing more) or numba's array functions already are."""
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules["scipy.linalg"] = None  # type: ignore[assignment] - makes its import fail at once
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if "scipy.linalg" in sys.modules and sys.modules["scipy.linalg"] is None:
            del sys.modules["scipy.linalg"]


load_array_functions_without_blas_check()

#: Whether numba found a writable place for its on-disk cache (``__pycache__`` next to the
#: compiled module, else ``NUMBA_CACHE_DIR`` or the user's cache directory); without one every
#: process compiles. :func:`jit` sets it to False the first time it finds none.
CACHED = True


#: The options each cached function was compiled with, by its file, name and line: numba's on-disk
#: cache tells machine code by those and the signature, not by the options.
_CACHED_OPTIONS: dict[tuple[str, str, int], dict[str, Any]] = {}


def jit(function: Callable[..., Any], **options: Any) -> Callable[..., Any]:
    """``njit`` with :data:`JIT_OPTIONS` (and ``options``); without the on-disk cache when numba
    finds nowhere to write it (it raises at decoration then), rather than failing the import.

    A function is compiled with one set of options only: numba's cache keys a function's machine
    code by its file, name, line and signature, so a second compilation of it with other options
    (serial and parallel, say) would load the first one's code; that raises ``ValueError`` here.

    Returns:
        numba's dispatcher of ``function`` (``function`` itself under ``NUMBA_DISABLE_JIT``).
    """
    global CACHED
    try:
        dispatcher = njit(**JIT_OPTIONS, **options)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available for file ..."
        CACHED = False
        return njit(**{**JIT_OPTIONS, **options, "cache": False})(function)
    code = getattr(function, "__code__", None)
    if code is not None:
        key = (code.co_filename, function.__qualname__, code.co_firstlineno)
        if _CACHED_OPTIONS.setdefault(key, options) != options:
            raise ValueError(
                f"{function.__qualname__} ({code.co_filename}:{code.co_firstlineno}) compiled with {options} and "
                f"{_CACHED_OPTIONS[key]}: numba's cache would give both the same machine code; compile two functions"
            )
    return dispatcher


def jit_parallel(function: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`jit` with ``parallel=True``: ``prange`` loops share their iterations out among
    numba's threads (``NUMBA_NUM_THREADS``, default one per core)."""
    return jit(function, parallel=True)


#: Held while a parallel loop runs (:func:`parallel_turn`).
_PARALLEL_TURN = threading.Lock()
#: Whether this process has run a parallel loop (numba's threads have started) ...
_threads_started = False
#: ... and whether it is a child forked from a process that had: GNU OpenMP cannot run in it
#: (numba ends such a child: "fork() called from a process already using GNU OpenMP").
_forked_after_threads = False


def _forked() -> None:
    """In a child just forked: no parallel loop here if the parent's threads had started."""
    global _forked_after_threads
    _forked_after_threads = _forked_after_threads or _threads_started


os.register_at_fork(after_in_child=_forked)


@contextmanager
def parallel_turn(wanted: bool) -> Iterator[bool]:
    """Whether the caller may run a parallel loop now, for the ``with`` block: when ``wanted``, no
    other parallel loop of this process runs and the process is not a child forked (as
    ``multiprocessing`` and Gymnasium's async vector environments do on Linux) from one that had
    run a parallel loop. One at a time: numba's fallback thread pool (the workqueue, where
    OpenMP is not found) aborts the process on concurrent use; and GNU OpenMP cannot run in such
    a child (numba ends it). A caller told no runs its loop serially, so every parallel kernel
    gives the same results either way. (Callers want it only where numba has several threads,
    :func:`numba.get_num_threads`, but to compile a parallel kernel ahead.)"""
    global _threads_started
    allowed = wanted and not _forked_after_threads and _PARALLEL_TURN.acquire(blocking=False)
    if allowed:
        _threads_started = True
    try:
        yield allowed
    finally:
        if allowed:
            _PARALLEL_TURN.release()


class ThreadChoice:
    """Whether one kernel's parallel loop should run on numba's threads or on one, learnt from how
    long its calls took each way, lately. On a quiet machine two threads halve a large loop's
    time; while another process keeps a core busy, a parallel loop waits for its other thread at
    its end and can take three times as long as on one thread (the social force's pairs of 200
    people, 2026-11-28). So each way's time per unit of work is kept as a running average, the
    faster way taken, and the other tried again every :attr:`TRIAL_EVERY` calls (a trial's time
    replaces that way's average, which is older than the trial). Usable only
    where both ways give the same results (as :func:`parallel_turn`'s callers do)."""

    #: Calls between trials of the way not taken (each trial may cost a call's time twice or three times over).
    TRIAL_EVERY = 50
    #: Weight of a call's time in its way's running average.
    WEIGHT = 0.3

    def __init__(self) -> None:
        #: Each way's running average (s per unit of work; None: not measured yet), and its calls.
        self._seconds: dict[bool, float | None] = {False: None, True: None}
        self._calls = {False: 0, True: 0}
        self._since_trial = 0
        self._trying: bool | None = None

    def parallel(self) -> bool:
        """Whether the next call should run on the threads (the caller still asks
        :func:`parallel_turn`, and reports the way it ran to :meth:`took`; :meth:`turn` does all
        three)."""
        serial, threaded = self._seconds[False], self._seconds[True]
        if threaded is None or serial is None:
            return threaded is None  # each way measured first, the threads before one thread
        faster = threaded < serial
        self._since_trial += 1
        if self._since_trial >= self.TRIAL_EVERY:
            self._since_trial = 0
            self._trying = not faster
            return not faster
        return faster

    @contextmanager
    def turn(self, work: float) -> Iterator[bool]:
        """For the ``with`` block: whether its parallel loop runs on the threads (those were
        faster lately, :meth:`parallel`, and :func:`parallel_turn` allows it); the block's time
        then counts for the way it ran (:meth:`took`), over ``work`` units (agents, beams). A block
        that raises counts for nothing."""
        with parallel_turn(self.parallel()) as parallel:
            started = time.perf_counter()
            yield parallel
            self.took(parallel, time.perf_counter() - started, work)

    def took(self, parallel: bool, seconds: float, work: float) -> None:
        """A call ran on the threads (``parallel``) or on one, in ``seconds`` for ``work`` units
        (any measure of its size: agents, beams). The first call each way is left out: it may
        have compiled or loaded its machine code."""
        self._calls[parallel] += 1
        if self._calls[parallel] == 1:
            return
        per_unit = seconds / max(work, 1.0)
        average = self._seconds[parallel]
        trial, self._trying = self._trying == parallel, None
        self._seconds[parallel] = per_unit if average is None or trial else average + self.WEIGHT * (per_unit - average)


@intrinsic
def take_next(typing_context: Any, counter: Any) -> tuple:
    """In compiled code: ``counter[0]`` (an int64 array) before adding one to it, atomically. A
    parallel loop over its threads shares items out as the threads come for them with it (each
    thread takes ``take_next(counter)`` until the items run out), so a thread that another
    process keeps waiting holds up one item, not a fixed share of them; where each item writes
    only its own output, the results do not depend on which thread took it."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def generate(context: Any, builder: Any, signature: Any, arguments: Any) -> Any:
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, arguments[0])
        pointer = cgutils.get_item_pointer(context, builder, array_type, array, [context.get_constant(types.intp, 0)])
        return builder.atomic_rmw("add", pointer, context.get_constant(types.int64, 1), "monotonic")

    return types.int64(counter), generate


def typed(array: Any, dtype: type | np.dtype) -> np.ndarray:
    """``array`` as the compiled functions take it: a C-contiguous, aligned, writeable array of
    ``dtype``. It is returned as is when it is one already (the usual case, so no copy), else
    copied: numba compiles a new specialisation for any other dtype, layout or a read-only
    array, and that would happen in the middle of a step."""
    if (
        isinstance(array, np.ndarray)
        and array.dtype == dtype
        and array.flags.c_contiguous
        and array.flags.aligned
        and array.flags.writeable
    ):
        return array
    return np.array(array, dtype=dtype, order="C")  # always a fresh, writeable copy
