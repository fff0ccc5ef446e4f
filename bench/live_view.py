"""The live view's cost: the benchmark world (``bench/worlds/benchmark_world``, the cleaner and its
1081-beam laser at 40 Hz) stepped in-process as fast as it goes, without a view and with a
:class:`~sim_server.live.LiveView` at its default rate (20 Hz of sim time, every scan) and one
client subscribed to every channel. The client runs in a process of its own (as Foxglove would)
and reads everything. Runs with and without alternate, so that the shared host's drift falls on
both alike; the cost is one minus the ratio of the medians. The issue tracker's target: at most
10 % of the real-time factor.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from sim_server.core import World
from sim_server.live import LiveView

BENCHMARK_WORLD = Path(__file__).resolve().parent / "worlds" / "benchmark_world" / "world.yaml"
STEP_SIZE = 0.005
#: Runs of each kind (alternating).
ROUNDS = 3
#: Name of the scenario in the results.
LIVE_VIEW = "live view, one client, benchmark world"

#: The client: subscribes to every channel advertised, reads until the server closes, prints
#: how many messages and bytes it got.
CLIENT = """
import json, sys
from websockets.sync.client import connect
messages = size = 0
with connect(sys.argv[1], subprotocols=["foxglove.sdk.v1", "foxglove.websocket.v1"], max_size=2**26) as socket:
    subscribed = set()
    try:
        while True:
            frame = socket.recv(timeout=60)
            if isinstance(frame, str):
                message = json.loads(frame)
                if message["op"] == "advertise":
                    wanted = [c["id"] for c in message["channels"] if c["id"] not in subscribed]
                    subscribed.update(wanted)
                    socket.send(json.dumps({"op": "subscribe", "subscriptions": [
                        {"id": channel, "channelId": channel} for channel in wanted]}))
            else:
                messages += 1
                size += len(frame)
    except Exception:
        pass
print(messages, size)
"""


def _steps_per_second(world: World, seconds: float) -> float:
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        world.step(100)
        steps += 100
    return steps / (time.perf_counter() - started)


def run(seconds: float) -> dict[str, dict[str, float]]:
    """``{LIVE_VIEW: {"rtf_without", "rtf_with", "cost", "messages_per_s", "mib_per_s"}}``."""
    world = World.from_file(BENCHMARK_WORLD, step_size=STEP_SIZE)
    try:
        world.step(10)
        without, with_view = [], []
        received = [0, 0]
        wall = 0.0
        for _ in range(ROUNDS):
            without.append(_steps_per_second(world, seconds))
            with LiveView(world, port=0) as view:
                client = subprocess.Popen([sys.executable, "-c", CLIENT, view.url], stdout=subprocess.PIPE, text=True)
                deadline = time.monotonic() + 30.0
                while not view._live.has_sinks() and time.monotonic() < deadline:  # noqa: SLF001 - the bench's own look
                    world.step(1)
                started = time.perf_counter()
                with_view.append(_steps_per_second(world, seconds))
                wall += time.perf_counter() - started
            output, _ = client.communicate(timeout=60)
            messages, size = (int(v) for v in output.split()) if output.strip() else (0, 0)
            received[0] += messages
            received[1] += size
    finally:
        world.close()
    plain, viewed = statistics.median(without), statistics.median(with_view)
    return {LIVE_VIEW: {
        "rtf_without": plain * STEP_SIZE, "rtf_with": viewed * STEP_SIZE, "cost": 1.0 - viewed / plain,
        "messages_per_s": received[0] / wall, "mib_per_s": received[1] / wall / 2**20,
    }}


if __name__ == "__main__":
    for name, figures in run(5.0).items():
        print(name, {key: round(value, 4) for key, value in figures.items()})
