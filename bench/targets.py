"""The performance targets of the issue tracker, checked against a benchmark result.

A result is the dictionary ``python -m bench`` writes to ``bench/results/<timestamp>.json``.
Each :class:`Target` reads one figure from it and compares it with its bound; its *margin* is
how far past the bound the figure is (above 1: met), so targets of different units can be drawn
side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from sim_server.learning.ray_example import TARGET_SHARE

Result = dict[str, Any]

SWARM = "swarm: 1000 robots, 32-beam 3 m sensors at 10 Hz, physics 50 Hz"
FLEET = "fleet: 100 robots, 720-beam 30 m lasers at 10 Hz, physics 100 Hz"
STARTUP = "startup 4000x4000 map"
CAMERA = "camera, 10 m, 256 px"
#: The learning scenario of N worlds (``VECTOR_ENV.format(count=N)``).
VECTOR_ENV = "vector, {count} worlds"
#: Worlds of the vector environment's target.
VECTOR_WORLDS = 64
#: The vector environment among people (64 worlds, a robot and ten people each).
CROWD_VECTOR_ENV = "crowd navigation, 64 worlds"
#: The same with people observed only where the robot sees them past the walls.
SIGHTED_CROWD_VECTOR_ENV = "crowd navigation, 64 worlds, line of sight"
#: 500 episodes of CrowdNav's circle crossing with the ORCA policy (its test set).
CROWDNAV_EVALUATION = "CrowdNav evaluation, 500 ORCA episodes"
#: The learning scenario of N Ray actors (``RAY_ACTORS.format(workers=N)``), their counts and
#: the worlds in each.
RAY_WORKERS = (1, 2)
RAY_WORLDS = 64
RAY_ACTORS = "ray, {workers} x " + f"{RAY_WORLDS} worlds"
#: Kinds of robots of the fleet benchmark (:mod:`bench.drive_kinds`) whose plugin must cost per
#: robot no more than a DiffDrive does.
DRIVE_KINDS = ("AckermannDrive", "OmniDrive", "DiffDrive + Imu", "DiffDrive + noisy Imu", "DiffDrive + Range")
#: Largest spread of the cost of one more robot across robot counts that still counts as flat.
FLAT_SPREAD = 2.0
#: Margin shown for a met zero bound (and the most any margin is drawn with).
MAX_MARGIN = 10.0


@dataclass(frozen=True)
class Target:
    """A figure of a result and its bound.

    Attributes:
        name: what is measured, for tables and plots.
        unit: the figure's unit, for display.
        bound: the figure must reach it (``at_least``) or stay within it.
        at_least: whether larger figures are better.
        read: the figure of a result (None when the result lacks it).
    """

    name: str
    unit: str
    bound: float
    at_least: bool
    read: Callable[[Result], float | None]

    def value(self, result: Result) -> float | None:
        """The figure, or None when the result does not have it."""
        try:
            return self.read(result)
        except (KeyError, TypeError, ZeroDivisionError):
            return None

    def met(self, result: Result) -> bool | None:
        """Whether the figure reaches its bound (None when not measured)."""
        value = self.value(result)
        if value is None:
            return None
        return value >= self.bound if self.at_least else value <= self.bound

    def margin(self, result: Result) -> float | None:
        """How far past the bound the figure is: figure / bound for at-least targets, bound /
        figure otherwise; >= 1 when met (a zero bound that is met counts as :data:`MAX_MARGIN`)."""
        value = self.value(result)
        if value is None:
            return None
        if self.at_least:
            return value / self.bound
        if value <= 0.0:
            return MAX_MARGIN if self.bound >= 0.0 else 0.0
        return self.bound / value


def _level_ratio(result: Result, small: str, streamed: str, whole: str, faster: bool) -> float:
    levels = result["levels"]
    if faster:
        return levels[whole]["ms_per_step"] / levels[streamed]["ms_per_step"]
    return levels[streamed]["ms_per_step"] / levels[small]["ms_per_step"]


def _flatness(result: Result) -> float:
    """Spread (max / min) of what each robot beyond the first adds to a step, over the robot
    counts measured: a step's fixed cost (Box2D's call, the loop) is paid once, however many."""
    per_count = {int(count): v["ms_per_step"] for count, v in result["scale"]["scaling"].items()}
    single = per_count.pop(1)
    marginal = [(ms - single) / (count - 1) for count, ms in per_count.items()]
    return max(marginal) / min(marginal)


_LEVELS = ("levels: small world (100 m, 400 models)", "100 levels, 10k models, streamed", "100 levels, 10k models, all loaded")
_MAP = ("map: small world (100 m of the city)", "1 km map, streamed tiles", "1 km map, loaded whole")

TARGETS: tuple[Target, ...] = (
    Target("reference scene", "x real time", 30.0, True, lambda r: r["medians"]["benchmark_world"]["rtf"]),
    Target("office, laser idle", "x real time", 60.0, True, lambda r: r["medians"]["office, laser idle"]["rtf"]),
    Target("fleet, 100 robots", "x real time", 1.0, True, lambda r: r["scale"][FLEET]["rtf"]),
    Target("swarm, 1000 robots", "x real time", 1.0, True, lambda r: r["scale"][SWARM]["rtf"]),
    Target("cost of one more robot, spread", "max/min", FLAT_SPREAD, False, _flatness),
    Target("4000x4000 map start-up", "s", 10.0, False, lambda r: r["scale"][STARTUP]["startup_s"]),
    Target("4000x4000 map memory", "MiB", 2048.0, False, lambda r: r["scale"][STARTUP]["peak_rss_mib"]),
    Target("laser throughput", "M beams/s", 5.0, True, lambda r: r["laser"]["beams_per_s"] / 1e6),
    Target("laser vs Box2D, unexplained", "beams", 0.0, False, lambda r: r["laser"]["beyond_tolerance_unexplained"]),
    Target("10k models streamed vs small", "x", 1.5, False, lambda r: _level_ratio(r, *_LEVELS, faster=False)),
    Target("10k models streamed vs whole", "x faster", 10.0, True, lambda r: _level_ratio(r, *_LEVELS, faster=True)),
    Target("1 km map streamed vs small", "x", 1.5, False, lambda r: _level_ratio(r, *_MAP, faster=False)),
    Target("1 km map streamed vs whole", "x faster", 10.0, True, lambda r: _level_ratio(r, *_MAP, faster=True)),
    Target("camera picture, 256 x 256", "ms", 1.0, False, lambda r: r["rendering"][CAMERA]["ms_per_frame"]),
    Target("office, 200 people", "x real time", 40.0, True, lambda r: r["crowds"]["office, 200 people"]["rtf"]),
    Target("office, 1000 people", "x real time", 7.0, True, lambda r: r["crowds"]["office, 1000 people"]["rtf"]),
    Target("social force vs pysocialforce, its settings", "x faster", 10.0, True,
           lambda r: r["crowds"]["social force vs pysocialforce"]["ratio_matched"]),
    Target("social force vs pysocialforce, our defaults", "x faster", 100.0, True,
           lambda r: r["crowds"]["social force vs pysocialforce"]["ratio_default"]),
    Target("ORCA vs RVO2 doStep, 250 agents", "x faster", 1.5, True, lambda r: r["crowds"]["ORCA vs RVO2"]["ratio"]),
    Target("ORCA vs RVO2 doStep, 250 agents, 100 walls", "x faster", 1.5, True,
           lambda r: r["crowds"]["ORCA among walls vs RVO2"]["ratio"]),
    Target("server at rest, benchmark world", "MiB", 160.0, False, lambda r: r["memory"]["at_rest_mib"]),
    Target("live view, one client, cost", "%", 10.0, False,
           lambda r: 100.0 * r["live_view"]["live view, one client, benchmark world"]["cost"]),
    Target("crowd navigation, 64 worlds", "steps/s", 20_000.0, True,
           lambda r: r["learning"][CROWD_VECTOR_ENV]["steps_per_s"]),
    Target(SIGHTED_CROWD_VECTOR_ENV, "steps/s", 20_000.0, True,
           lambda r: r["learning"][SIGHTED_CROWD_VECTOR_ENV]["steps_per_s"]),
    Target(CROWDNAV_EVALUATION, "s", 60.0, False, lambda r: r["learning"][CROWDNAV_EVALUATION]["seconds"]),
    *(
        Target(f"ray rollouts, {workers} x {RAY_WORLDS} worlds, of the actors' rate", "share", TARGET_SHARE, True,
               lambda r, workers=workers: r["learning"][RAY_ACTORS.format(workers=workers)]["rollout_share"])
        for workers in RAY_WORKERS
    ),
    Target(
        f"vector env, {VECTOR_WORLDS} worlds, one core", "steps/s", 20_000.0, True,
        lambda r: r["learning"][VECTOR_ENV.format(count=VECTOR_WORLDS)]["steps_per_s"],
    ),
    *(
        Target(f"{kind}, cost per robot vs DiffDrive's", "x", 1.0, False,
               lambda r, kind=kind: r["drives"][kind]["cost_vs_diff_drive"])
        for kind in DRIVE_KINDS
    ),
)


def describe(target: Target, result: Result) -> str:
    """One line: the figure, the bound and whether it is met."""
    value = target.value(result)
    if value is None:
        return f"{target.name:32} not measured"
    bound = f"{'>=' if target.at_least else '<='} {target.bound:g}"
    return f"{target.name:32} {value:10.3g} {target.unit:12} (target {bound}) {'met' if target.met(result) else 'NOT MET'}"
