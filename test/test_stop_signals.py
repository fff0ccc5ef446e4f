"""Stop signals of the programs (sim_server.stop_signals): the first is noted (and interrupts what
runs inside ``interrupting``), later ones once the end began change nothing, the command line
leaves them ignored and a program gets its own handlers back. Helpers here send real signals to
real processes at chosen moments (test/test_record.py, test/test_serve.py, test/test_main.py)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from sim_server.stop_signals import STOP_SIGNALS, Interrupted, StopSignals

#: Seconds a test waits for a condition of a process (a line, a file) before it fails.
PATIENCE = 60.0
#: Seconds between two signals sent in a row (as a terminal's Ctrl-C twice, or ros2 launch's).
SIGNAL_GAP = 0.05


# ---------------------------------------------------------------------------------- real processes
def handles_signal(process: subprocess.Popen, signum: int) -> bool:
    """Whether ``process`` has a handler of its own for ``signum`` (Linux: the caught signals of
    ``/proc/PID/status``; elsewhere: whether it runs). Python catches SIGTERM only once a program
    sets a handler: the moment sim_server's programs take the stop signals over, about a tenth of
    a second after the start (a signal before it gets Python's defaults)."""
    try:
        status = Path(f"/proc/{process.pid}/status").read_text()
    except OSError:
        return process.poll() is None
    caught = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (signum - 1) & 1)


class Watched:
    """A process whose output is read as it comes (threads), so a test waits on what it says."""

    def __init__(self, arguments: list[str], cwd: Path, merge: bool = False,
                 preexec_fn: Callable[[], None] | None = None) -> None:
        self.process = subprocess.Popen([sys.executable, *arguments], cwd=cwd, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT if merge else subprocess.PIPE, text=True,
                                        preexec_fn=preexec_fn)
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(self.process.stdout, self.out), daemon=True)]
        if not merge:
            self._readers.append(threading.Thread(target=self._read, args=(self.process.stderr, self.err), daemon=True))
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line)

    def handles(self, signum: int) -> bool:
        """Whether the process has taken ``signum`` over (:func:`handles_signal`)."""
        return handles_signal(self.process, signum)

    def said(self, words: str) -> bool:
        """Whether a line of its output holds ``words``."""
        return any(words in line for line in list(self.out))

    def until(self, condition: Callable[[], bool], what: str) -> None:
        """Wait until ``condition()`` (or the process ended); fails after :data:`PATIENCE` s."""
        deadline = time.monotonic() + PATIENCE
        while not condition():
            if self.process.poll() is not None:
                return
            if time.monotonic() > deadline:
                self.process.kill()
                pytest.fail(f"not {what} within {PATIENCE:g} s: {''.join(self.out + self.err)[-2000:]}")
            time.sleep(0.005)

    def signal(self, signum: int, count: int = 1) -> None:
        """``count`` signals, :data:`SIGNAL_GAP` s apart (those after it ended are not sent)."""
        for index in range(count):
            if self.process.poll() is not None:
                return
            self.process.send_signal(signum)
            if index + 1 < count:
                time.sleep(SIGNAL_GAP)

    def finish(self) -> tuple[int, str, str]:
        """Its exit code and everything it wrote, once it ended (killed after :data:`PATIENCE` s)."""
        try:
            self.process.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for reader in self._readers:
            reader.join(timeout=PATIENCE)
        return self.process.returncode, "".join(self.out), "".join(self.err)


def file_of_size(path: Callable[[], list[Path]], least: int = 0) -> Callable[[], bool]:
    """A condition: one of the files ``path()`` names holds more than ``least`` bytes."""
    def holds() -> bool:
        for file in path():
            try:
                if file.stat().st_size > least:
                    return True
            except OSError:
                pass
        return False
    return holds


# ---------------------------------------------------------------------------------- in-process
@pytest.fixture
def own_handlers():
    """Handlers of the test's own for the stop signals (put back after)."""
    noted: list[int] = []
    saved = {signum: signal.signal(signum, lambda number, frame: noted.append(number)) for signum in STOP_SIGNALS}
    yield noted
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def _deliver(signum: int) -> None:
    """Send ``signum`` to this process: the signal is pending when ``kill`` returns, and CPython
    runs its handler in the main thread before the next instruction."""
    os.kill(os.getpid(), signum)


def test_a_signal_is_noted_and_the_program_s_handlers_come_back(own_handlers) -> None:
    with StopSignals(command_line=False) as signals:
        _deliver(signal.SIGTERM)
        assert signals.received == [signal.SIGTERM] and signals.requested
    _deliver(signal.SIGINT)
    assert own_handlers == [signal.SIGINT]  # the test's handler again


def test_the_command_line_leaves_them_ignored(own_handlers) -> None:
    with StopSignals(command_line=True):
        pass
    assert [signal.getsignal(s) for s in STOP_SIGNALS] == [signal.SIG_IGN] * 2
    _deliver(signal.SIGINT)  # nothing happens
    assert own_handlers == []


def test_interrupting_raises_once_and_a_signal_before_it_raises_at_once(own_handlers) -> None:
    calls = []
    with StopSignals(command_line=False) as signals:
        signals.on_stop = lambda: calls.append("stop")
        with pytest.raises(Interrupted):
            with signals.interrupting():
                _deliver(signal.SIGINT)
                pytest.fail("not interrupted")
        _deliver(signal.SIGINT)  # outside: noted only
        with pytest.raises(Interrupted):
            with signals.interrupting():
                pytest.fail("entered although a signal came before")
        assert signals.received == [signal.SIGINT, signal.SIGINT] and calls == ["stop", "stop"]


def test_once_the_end_began_signals_change_nothing(own_handlers) -> None:
    calls = []
    with StopSignals(command_line=False) as signals:
        signals.on_stop = lambda: calls.append("stop")
        signals.end()
        _deliver(signal.SIGINT)
        _deliver(signal.SIGTERM)
        with signals.interrupting():  # nothing to interrupt any more
            _deliver(signal.SIGINT)
    assert signals.received == [] and calls == []


def test_an_interrupt_lost_in_a_c_callback_prints_nothing(own_handlers, capfd) -> None:
    """Python cannot raise from a callback out of C code; it reports the exception as
    unraisable. The stop signal is still noted, and the report is no error of the user's."""
    @ctypes.CFUNCTYPE(None)
    def callback() -> None:
        _deliver(signal.SIGINT)

    with StopSignals(command_line=False) as signals:
        with pytest.raises(Interrupted):  # as the block is left
            with signals.interrupting():
                callback()
        assert signals.requested
    assert capfd.readouterr().err == ""


def test_an_error_made_of_a_lost_interrupt_leaves_the_block_as_interrupted(own_handlers) -> None:
    """C code that turns the exception into an error of its own (numba's extension modules
    raise ImportError) does not make the stop an error."""
    @ctypes.CFUNCTYPE(None)
    def callback() -> None:
        _deliver(signal.SIGTERM)

    with StopSignals(command_line=False) as signals:
        with pytest.raises(Interrupted) as raised:
            with signals.interrupting():
                callback()
                raise ImportError("numba._devicearray failed to import")
    assert isinstance(raised.value.__context__, ImportError)
    with StopSignals(command_line=False) as signals:  # without a signal an error stays itself
        with pytest.raises(ImportError):
            with signals.interrupting():
                raise ImportError("a module that is not there")


def test_the_wait_looks_at_the_frames_inside_the_block_alone() -> None:
    """``_must_wait`` looks at the innermost frames it is told of (those inside the
    ``interrupting`` block), up to a marked function of ours, and no further."""
    from sim_server.core.called_from_c import called_from_c
    from sim_server.stop_signals import _must_wait

    def plain(inner):
        return inner()

    @called_from_c
    def marked(inner):
        return inner()

    here = sys._getframe
    assert marked(lambda: _must_wait(here(), 2))  # the lambda's frame, then marked's
    assert not marked(lambda: _must_wait(here(), 1))  # the lambda's frame alone
    assert not plain(lambda: _must_wait(here(), 3))  # the lambda, plain, this test: none waits
    assert plain(lambda: _must_wait(here(), 1000))  # further out: pytest's, a library's frames
    assert marked(lambda: plain(lambda: _must_wait(here(), 4)))  # lambda, plain, lambda, marked
    assert not marked(lambda: plain(lambda: _must_wait(here(), 3)))
    assert not _must_wait(None, 5)


def _module_that_signals(folder: Path, name: str, then: str) -> None:
    """A module whose import sends SIGINT to this process, then runs ``then``."""
    (folder / f"{name}.py").write_text(f"import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n{then}\nWHOLE = True\n")


def _wait_for_interrupt(what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        time.sleep(0.001)
    pytest.fail(f"not interrupted {what} within {PATIENCE:g} s")


def test_a_signal_inside_a_function_c_calls_back_interrupts_once_it_returned(own_handlers) -> None:
    """A function of ours that C code calls back (the MCAP writer's sink, say) is marked; the
    Interrupted waits until C has it back, so the C code sees no failure."""
    from sim_server.core.called_from_c import called_from_c

    finished: list[bool] = []

    @called_from_c
    def write() -> None:
        _deliver(signal.SIGINT)
        for _ in range(1000):
            pass
        finished.append(True)

    callback = ctypes.CFUNCTYPE(None)(write)
    with StopSignals(command_line=False) as signals:
        with pytest.raises(Interrupted):
            with signals.interrupting():
                callback()
                finished.append("returned")
                _wait_for_interrupt("after the callback returned")
    assert finished == [True, "returned"]  # (an error inside the block would leave it as Interrupted)


def test_a_signal_inside_an_import_interrupts_once_the_import_is_done(own_handlers, tmp_path, monkeypatch) -> None:
    """Raised inside an import, Interrupted could reach C code that prints it and raises an
    error of its own; it waits for the import to end."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _module_that_signals(tmp_path, "signals_while_imported", "import json")
    with StopSignals(command_line=False) as signals:
        with pytest.raises(Interrupted):
            with signals.interrupting():
                import signals_while_imported  # noqa: F401
                _wait_for_interrupt("after the import")
        assert signals.received == [signal.SIGINT]
    assert sys.modules["signals_while_imported"].WHOLE


def test_a_signal_inside_a_library_interrupts_once_it_returned(own_handlers, tmp_path, monkeypatch) -> None:
    """Library code (a package of site-packages) is not written to be interrupted anywhere;
    the project's code is."""
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "a_library.py").write_text(
        "import os, signal\n"
        "def work(done):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    for _ in range(1000):\n"
        "        pass\n"
        "    done.append(True)\n"
    )
    monkeypatch.syspath_prepend(str(library))
    import a_library

    done: list[bool] = []
    with StopSignals(command_line=False) as signals:
        with pytest.raises(Interrupted):
            with signals.interrupting():
                a_library.work(done)
                done.append("returned")
                _wait_for_interrupt("after the library returned")
    assert done == [True, "returned"]


def test_an_import_that_takes_too_long_is_interrupted_all_the_same(own_handlers, tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr("sim_server.stop_signals.LIBRARY_WAIT", 0.05)
    _module_that_signals(tmp_path, "never_done_importing", f"import time\nend = time.monotonic() + {PATIENCE}\nwhile time.monotonic() < end: time.sleep(0.001)")
    with StopSignals(command_line=False) as signals:
        with pytest.raises(Interrupted):
            with signals.interrupting():
                import never_done_importing  # noqa: F401
        assert signals.received == [signal.SIGINT]
    assert "never_done_importing" not in sys.modules


def test_from_another_thread_no_handler_changes(own_handlers) -> None:
    found = []

    def run() -> None:
        with StopSignals(command_line=True):
            found.append([signal.getsignal(s) for s in STOP_SIGNALS])

    before = [signal.getsignal(s) for s in STOP_SIGNALS]
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert found == [before] and [signal.getsignal(s) for s in STOP_SIGNALS] == before
