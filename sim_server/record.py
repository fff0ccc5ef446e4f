"""``python -m sim_server.record WORLD --seconds N --out run.gif``: watch a world without a display.

Loads the world in-process (no ROS), runs it for N seconds of sim time and writes its pictures
as an animated GIF, an H.264 MP4 or a PNG of the last moment (see
:mod:`sim_server.rendering.recording`), or, for ``--out run.mcap``, the live view's channels
(scene, transforms, scans; :mod:`sim_server.live.log`) for the Foxglove app to replay. Robots can be driven with a constant command
(``--drive MODEL LINEAR ANGULAR``, as a cmd_vel would: for a DiffDrive m/s and rad/s, for a
TricycleDrive the wheel speed and the steering angle) or by a script (``--script FILE``, a Python
file defining ``control(world)``, called before every step). The view is everything loaded
(default), a fixed rectangle (``--view``) or one that follows a model (``--follow``, with
``--turn`` to keep its heading up). Ctrl-C or SIGTERM stops early and keeps what was recorded
(:mod:`sim_server.stop_signals`: before the world has loaded it ends the program with nothing
written; more signals while the file is written change nothing).

Exit codes: 0 done (also when stopped early: the file holds what was recorded); 1 the world file
is missing or does not load, the script failed, a write failed (a full disk: one line names the
file and the reason) or the run could not go on (no file is left, what was at the target stays);
2 arguments that cannot be used (nothing is run). Errors are one line on stderr.
"""

from __future__ import annotations

from sim_server.stop_signals import Interrupted, StopSignals, exit_at_once_while_starting

if __name__ == "__main__":  # before the slow imports: a stop signal during them ends at once
    exit_at_once_while_starting()

import argparse  # noqa: E402 (after the handlers above)
import contextlib  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Iterator  # noqa: E402

from sim_server.core.errors import SimError, one_line  # noqa: E402
from sim_server.core.limits import SEED, STEP_SIZE  # noqa: E402
from sim_server.live.discovery import drive_command  # noqa: E402
from sim_server.live.files import DEFAULT_FILE_BYTES, DEFAULT_FILES_KEPT, RecordWriteError  # noqa: E402
from sim_server.live.log import MCAP_SUFFIX, LogError, record_mcap  # noqa: E402
from sim_server.live.view import RECORD_ENCODINGS  # noqa: E402
from sim_server.rendering.recording import FORMATS, Recording, RecordingError, record  # noqa: E402
from sim_server.core.pictures.renderer import MAX_PIXELS_SIDE, MIN_VIEW_SIZE, View  # noqa: E402

#: The field (m) of a view that follows a model, when not given.
DEFAULT_FOLLOW_FIELD = (20.0, 20.0)


#: How the program names itself in errors (as argparse does).
PROG = "python -m sim_server.record"


class UsageError(Exception):
    """Arguments that cannot be used (an unknown model, a view of no size): exit 2."""


class RunError(Exception):
    """The run could not go on (the followed model left the world): exit 1."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run a world headless (no ROS, no display) and write a GIF, MP4 or PNG of it.",
    )
    parser.add_argument("world", type=Path, help="the world file (Flatland YAML)")
    parser.add_argument("--out", type=Path, default=Path("run.gif"),
                        help=f"the file to write ({', '.join(FORMATS)}, or {MCAP_SUFFIX}: the live view's channels; default run.gif)")
    parser.add_argument("--seconds", type=float, default=10.0, help="sim time to record, s (default 10; 0: one picture)")
    parser.add_argument("--fps", type=float, default=10.0,
                        help="frames a second of the video, or updates a second of sim time of an .mcap (default 10)")
    parser.add_argument("--speed", type=float, default=1.0, help="sim seconds per second of video (default 1)")
    parser.add_argument("--max-mib", type=int, default=DEFAULT_FILE_BYTES // 2**20,
                        help=f"an .mcap: MiB of one file; then the next begins, run.1.mcap, ... (default {DEFAULT_FILE_BYTES // 2**20})")
    parser.add_argument("--encoding", choices=RECORD_ENCODINGS, default="foxglove",
                        help="an .mcap: foxglove (the live view's messages, default) or ros2 (ROS 2 messages for "
                             "/tf, /clock and the scans, which ROS tools read)")
    parser.add_argument("--keep", type=int, default=DEFAULT_FILES_KEPT,
                        help=f"an .mcap: the newest files kept (default {DEFAULT_FILES_KEPT})")
    parser.add_argument("--pixels", type=int, default=512, help="pixels on the picture's longer side (default 512)")
    parser.add_argument("--view", type=float, nargs=4, metavar=("X", "Y", "WIDTH", "HEIGHT"),
                        help="a fixed view: its centre and size, m (default: everything loaded at the start)")
    parser.add_argument("--follow", metavar="MODEL", help="centre every frame on this model")
    parser.add_argument("--field", type=float, nargs=2, metavar=("WIDTH", "HEIGHT"),
                        help=f"size of the followed view, m (default {DEFAULT_FOLLOW_FIELD[0]:g} x {DEFAULT_FOLLOW_FIELD[1]:g})")
    parser.add_argument("--turn", action="store_true", help="with --follow: turn with the model, its heading up")
    parser.add_argument("--drive", nargs=3, action="append", default=[], metavar=("MODEL", "LINEAR", "ANGULAR"),
                        help="a constant command for a model's drive, set before the run (repeatable: a later one "
                             "for the same model wins; a --script may change it)")
    parser.add_argument("--script", type=Path, help="a Python file defining control(world), called before every step")
    parser.add_argument("--lasers", action="store_true", help="draw the lasers' rays")
    parser.add_argument("--trails", action="store_true", help="draw the path of every model")
    parser.add_argument("--step-size", type=float, default=None, help="physics step, s (default: the simulator's)")
    parser.add_argument("--seed", type=int, default=None, help="seed of every noise source (default: none, runs differ)")
    parser.add_argument("--levels", action="store_true", help="stream the world's levels as performers move (as enable_levels)")
    return parser.parse_args(argv)


def check_args(args: argparse.Namespace) -> None:
    """Refuse arguments that parse but cannot be used (:class:`UsageError`, one line)."""
    if not 1 <= args.pixels <= MAX_PIXELS_SIDE:
        raise UsageError(f"--pixels must be from 1 to {MAX_PIXELS_SIDE}, got {args.pixels}")
    if not all(math.isfinite(v) for v in [*(args.view or []), *(args.field or [])]):
        raise UsageError("--view and --field take finite numbers")
    if args.view and (args.view[2] <= 0 or args.view[3] <= 0):
        raise UsageError(f"--view needs a width and a height > 0, got {args.view[2]:g} x {args.view[3]:g}")
    if args.field and (args.field[0] <= 0 or args.field[1] <= 0):
        raise UsageError(f"--field needs a width and a height > 0, got {args.field[0]:g} x {args.field[1]:g}")
    if args.view and args.follow:
        raise UsageError("--view and --follow cannot be used together")
    if (args.field or args.turn) and not args.follow:
        raise UsageError("--field and --turn go with --follow")
    for model, linear, angular in args.drive:
        if not (_is_number(linear) and _is_number(angular)):
            raise UsageError(f"--drive {model} {linear} {angular}: LINEAR and ANGULAR must be numbers")
    if args.step_size is not None and not STEP_SIZE.contains(args.step_size):
        raise UsageError(f"--step-size must be {STEP_SIZE.describe()}, got {args.step_size}")
    for option, sides in (("--view", (args.view or [0, 0, MIN_VIEW_SIZE, MIN_VIEW_SIZE])[2:]), ("--field", args.field or [])):
        if any(side < MIN_VIEW_SIZE for side in sides):
            raise UsageError(f"{option} needs sides of at least {MIN_VIEW_SIZE:g} m, got {sides[0]:g} x {sides[1]:g}")
    if args.seed is not None and not SEED.contains(args.seed):
        raise UsageError(f"--seed must be a whole number from 0 to {int(SEED.high)}, got {args.seed}")


def _is_number(text: str | float) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def view_maker(world, args: argparse.Namespace) -> Callable:
    """The view of each frame as the arguments ask (default: everything loaded now)."""
    if args.view:
        x, y, width, height = args.view
        fixed = View.sized(x, y, width, height, args.pixels)
        return lambda _: fixed
    if args.follow:
        if args.follow not in world.models:
            raise UsageError(f'--follow: the world has no model "{args.follow}" (it has: {_names(world)})')
        width, height = args.field or DEFAULT_FOLLOW_FIELD

        def follow(current) -> View:
            model = current.models.get(args.follow)
            if model is None:
                raise RunError(f'--follow: model "{args.follow}" left the world at {current.time.sim_time:.3f} s')
            pose = model.pose
            yaw = pose.theta - 0.5 * math.pi if args.turn else 0.0
            return View.sized(pose.x, pose.y, width, height, args.pixels, yaw)

        return follow
    whole = View.fit(world, args.pixels)
    return lambda _: whole


def set_drives(world, drives: list[list[str]]) -> None:
    """Give each named model's drive its constant command."""
    for model_name, linear, angular in drives:
        model = world.models.get(model_name)
        if model is None:
            raise UsageError(f'--drive: the world has no model "{model_name}" (it has: {_names(world)})')
        commands = [c for c in map(drive_command, world.plugins.plugins_of(model)) if c is not None]
        if not commands:
            raise UsageError(f'--drive: model "{model_name}" has no drive (a plugin with a velocity command, as DiffDrive)')
        try:
            for command in commands:
                command.linear, command.angular = float(linear), float(angular)
        except ValueError as error:
            raise UsageError(f"--drive {model_name}: {error}") from None


def run_script(signals: StopSignals, path: Path, function: Callable, *args):
    """``function(*args)`` of the user's script: its failures as :class:`ScriptError`; a stop
    signal interrupts it (a script that never returns stops too) and None is returned."""
    try:
        with signals.interrupting():
            return function(*args)
    except Interrupted:
        return None
    except BaseException as error:  # noqa: BLE001 - the user's own code, sys.exit included
        raise ScriptError(path, error) from None


def load_script(path: Path, signals: StopSignals) -> Callable:
    """The ``control(world)`` function of a script file."""
    if not path.is_file():
        raise UsageError(f'--script: "{path}" is not a file')
    namespace = run_script(signals, path, runpy.run_path, str(path))
    if namespace is None:  # stopped while it loaded
        return lambda world: None
    control = namespace.get("control")
    if not callable(control):
        raise UsageError(f'--script: "{path}" defines no function control(world)')
    return control


class ScriptError(Exception):
    """The user's script raised: one line naming the script's line and the error."""

    def __init__(self, path: Path, error: BaseException) -> None:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).resolve() == path.resolve()]
        if isinstance(error, SyntaxError) and error.lineno is not None:
            where, message = f"{path}:{error.lineno}", error.msg
        elif isinstance(error, SystemExit):
            where, message = (f"{path}:{frames[-1].lineno}" if frames else str(path)), f"the script exited ({error.code})"
        else:
            where, message = (f"{path}:{frames[-1].lineno}" if frames else str(path)), str(error)
        lines = message.splitlines() or [""]
        super().__init__(f"{where}: {type(error).__name__}: {lines[0]}{' ...' if len(lines) > 1 else ''}")


def _names(world) -> str:
    names = list(world.models)
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return shown or "no models"


class _OneLine(logging.Formatter):
    """The simulator's warnings (a plugin disabled, say) as one line each, without traceback."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{PROG}: {record.levelname.lower()}: {one_line(record.getMessage(), 1000)}"


@contextlib.contextmanager
def _log_in_one_line() -> Iterator[None]:
    """Route the ``sim_server`` logger to stderr in :class:`_OneLine` form while recording (and
    put it back after: a program calling :func:`main` keeps its logging)."""
    logger = logging.getLogger("sim_server")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    logger.handlers[:], logger.propagate = [handler], False
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.handlers[:], logger.propagate = saved[0], saved[2]
        logger.setLevel(saved[1])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_args(args)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    with _log_in_one_line(), StopSignals(command_line=argv is None) as signals:
        return _record(args, signals)


def _record(args: argparse.Namespace, signals: StopSignals) -> int:
    from sim_server.core.world import World  # after the arguments: --help is quick

    world = None
    try:
        options = {"step_size": args.step_size} if args.step_size is not None else {}
        with signals.interrupting():  # a world that takes long to load: a signal ends it
            world = World.from_file(args.world, seed=args.seed, enable_levels=args.levels, **options)
        set_drives(world, args.drive)
        control = load_script(args.script, signals) if args.script else None

        def before_step(current) -> None:
            run_script(signals, args.script, control, current)

        if args.out.suffix.lower() == MCAP_SUFFIX:
            log = record_mcap(world, args.out, args.seconds, rate=args.fps, before_step=before_step if control else None,
                              stop=lambda: signals.requested, max_bytes=args.max_mib * 2**20, keep=args.keep,
                              encoding=args.encoding)
            how = " (stopped early)" if log.interrupted else ""
            more = f" (and {', '.join(f.name for f in log.files[1:])})" if len(log.files) > 1 else ""
            print(f"wrote {log.path}{more}: {log.updates} update(s) of the scene, transforms and scans over "
                  f"{log.sim_seconds:g} s of sim time in {log.wall_seconds:.1f} s{how}")
            return 0
        result: Recording = record(
            world, args.out, args.seconds, fps=args.fps, speed=args.speed, view=view_maker(world, args),
            lasers=args.lasers, trails=args.trails, before_step=before_step if control else None,
            stop=lambda: signals.requested,
        )
    except (UsageError, RecordingError, LogError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except (SimError, ScriptError, RunError, RecordWriteError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except Interrupted:  # while the world loaded: nothing was recorded
        print("stopped before the recording began; nothing written")
        return 0
    except OSError as error:  # the file, while writing it (a full disk, say)
        print(f"{PROG}: error: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - a script that broke the world's internals, or a bug: one line
        print(f"{PROG}: error: the run failed: {type(error).__name__}: {one_line(str(error))}", file=sys.stderr)
        return 1
    finally:
        if world is not None:
            world.close()
    how = " (stopped early)" if result.interrupted else ""
    print(
        f"wrote {result.path}: {result.frames} frame(s) of {result.width} x {result.height} pixels, "
        f"{result.sim_seconds:.2f} s of sim time{how}, in {result.wall_seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
