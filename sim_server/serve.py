"""``python -m sim_server.serve WORLD``: run a world in real time, live in Foxglove, no ROS.

Loads the world in-process and serves it over the Foxglove WebSocket protocol
(:class:`sim_server.live.LiveView`) on ``ws://localhost:8765``: the walls, models, people, scans,
transforms and sim time, the services (``/pause``, ``/resume``, ``/step_world``,
``/reset_world``, ``/spawn_model``, ``/delete_model``, ``/move_model``) and driving robots from
the Teleop panel on their ``cmd_vel`` topics (``--watch-only`` turns both off). ``--record
run.mcap`` also writes the channels to MCAP (written beside the name and put there when it is
complete, as ``python -m sim_server.record`` does; a write that fails, a full disk say, ends
the run with one line naming the file and the reason, exit 1, and the name keeps what it had);
``--layout layout.json`` writes a Foxglove layout for the world (:mod:`sim_server.live.layout`).
Ctrl-C or SIGTERM ends it (exit 0; :mod:`sim_server.stop_signals`).

Exit codes: 0 done or stopped; 1 the world does not load, a write of the recording failed or
the run failed; 2 arguments that cannot be used (a port in use, say). Errors are one line on
stderr.
"""

from __future__ import annotations

from sim_server.stop_signals import Interrupted, StopSignals, exit_at_once_while_starting

if __name__ == "__main__":  # before the slow imports: a stop signal during them ends at once
    exit_at_once_while_starting()

import argparse  # noqa: E402 (after the handlers above)
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from sim_server.core.errors import SimError, one_line  # noqa: E402
from sim_server.core.limits import SEED, STEP_SIZE  # noqa: E402
from sim_server.live.files import DEFAULT_FILE_BYTES, DEFAULT_FILES_KEPT  # noqa: E402
from sim_server.live.view import RECORD_ENCODINGS  # noqa: E402

PROG = "python -m sim_server.serve"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Run a world in real time and serve it live to Foxglove (no ROS).")
    parser.add_argument("world", type=Path, help="the world file (Flatland YAML)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0: any free port)")
    parser.add_argument("--rate", type=float, default=20.0, help="updates a second (Hz, default 20)")
    parser.add_argument("--speed", type=float, default=1.0, help="times real time (default 1; 0: as fast as it goes)")
    parser.add_argument("--seconds", type=float, default=None, help="sim seconds to run (default: until Ctrl-C)")
    parser.add_argument("--paused", action="store_true", help="start paused (then /resume or /step_world)")
    parser.add_argument("--watch-only", action="store_true", help="clients only watch: no services, no driving")
    parser.add_argument("--layout", type=Path, default=None,
                        help="write a Foxglove layout for this world to this .json file (import it in the layout menu)")
    parser.add_argument("--record", type=Path, default=None, help="also write the channels to this .mcap file")
    parser.add_argument("--record-encoding", choices=RECORD_ENCODINGS, default="foxglove",
                        help="foxglove (default) or ros2: ROS 2 messages for /tf, /clock and the scans")
    parser.add_argument("--record-max-mib", type=int, default=DEFAULT_FILE_BYTES // 2**20,
                        help=f"MiB of one file of the recording (default {DEFAULT_FILE_BYTES // 2**20})")
    parser.add_argument("--record-keep", type=int, default=DEFAULT_FILES_KEPT,
                        help=f"files of the recording kept, the newest (default {DEFAULT_FILES_KEPT})")
    parser.add_argument("--step-size", type=float, default=None, help="physics step, s (default: the simulator's)")
    parser.add_argument("--seed", type=int, default=None, help="seed of every noise source (default: none)")
    parser.add_argument("--levels", action="store_true", help="stream the world's levels as performers move")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.step_size is not None and not STEP_SIZE.contains(args.step_size):
        print(f"{PROG}: error: --step-size must be {STEP_SIZE.describe()}, got {args.step_size}", file=sys.stderr)
        return 2
    if args.seed is not None and not SEED.contains(args.seed):
        print(f"{PROG}: error: --seed must be a whole number from 0 to {int(SEED.high)}, got {args.seed}", file=sys.stderr)
        return 2
    with StopSignals(command_line=argv is None) as signals:
        return _serve(args, signals)


def _serve(args: argparse.Namespace, signals: StopSignals) -> int:
    from sim_server.core.world import World  # after the arguments: --help is quick
    from sim_server.live import LiveView

    world = None
    try:
        options = {"step_size": args.step_size} if args.step_size is not None else {}
        with signals.interrupting():  # a world that takes long to load: a signal ends it
            world = World.from_file(args.world, seed=args.seed, enable_levels=args.levels, **options)
        world.time.paused = args.paused
        if args.layout is not None:
            from sim_server.live.layout import write_layout

            write_layout(world, args.layout)
            print(f"wrote the layout {args.layout} (Foxglove: layout menu, Import from file)", flush=True)
        try:
            view = LiveView(world, host=args.host, port=args.port, rate=args.rate, record=args.record,
                            record_max_bytes=args.record_max_mib * 2**20, record_keep=args.record_keep,
                            control=not args.watch_only, record_encoding=args.record_encoding,
                            on_record_error=lambda error: None)  # told below, once
        except ValueError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            return 2
        with view:
            acting = "" if args.watch_only else "; services /pause, /resume, /step_world, ...; drive on <robot>/cmd_vel"
            print(f"serving {args.world} on {view.url} (in Foxglove: Open connection, Foxglove WebSocket{acting}); "
                  "Ctrl-C ends", flush=True)
            try:
                view.run(seconds=args.seconds, speed=args.speed,
                         stop=lambda: signals.requested or view.record_error is not None)
            except ValueError as error:
                print(f"{PROG}: error: {error}", file=sys.stderr)
                return 2
        if view.record_error is not None:  # in the run, or writing the file's end
            print(f"{PROG}: error: {view.record_error}", file=sys.stderr)
            return 1
        print(f"stopped at sim time {world.time.sim_time:.3f} s", flush=True)
        return 0
    except Interrupted:  # while the world loaded
        print("stopped before serving began", flush=True)
        return 0
    except SimError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{PROG}: error: {error.strerror or error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - a bug: one line, not a traceback
        print(f"{PROG}: error: the run failed: {type(error).__name__}: {one_line(str(error))}", file=sys.stderr)
        return 1
    finally:
        if world is not None:
            world.close()


if __name__ == "__main__":
    sys.exit(main())
