"""Side by side with the C++ reference (Flatland): ratios from one interleaved run.

``make bench-reference`` (``tools/bench_reference.sh``) runs the reference's harness
(``sbs.py``, from ``flatland_reference/`` beside the checkout) on each scenario: reference and
ours alternate on byte-identical world files, a listener process subscribes to ``/clock`` (and
the scenario's scans) and measures sim time, CPU and memory over a fixed wall window. This module
reads its ``results.json`` files and writes one summary, ``bench/results/reference-<time>.json``,
with a picture beside it (``.png``):

* per scenario and system, the medians over the runs of the real-time factor, server CPU (%),
  CPU seconds per simulated second, listener CPU and server memory;
* the ratios ours / reference of the median real-time factors, and of the CPU per simulated
  second (below 1: we use less);
* the date, machine and command, and which topics the listener subscribed to.

    python -m bench.reference RESULTS_JSON [RESULTS_JSON ...] [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SYSTEMS = ("ref", "ours")
SYSTEM_NAMES = {"ref": "Flatland C++", "ours": "sim_server"}
#: The issue tracker's targets, ours / reference real-time factor, per scenario (others: 5x, issue 38's).
TARGET_RATIOS: dict[str, float] = {}
DEFAULT_TARGET_RATIO = 5.0


def summarize_run_file(path: Path) -> dict[str, Any]:
    """The medians of one scenario's ``results.json`` (written by ``sbs.py run``)."""
    raw = json.loads(path.read_text())
    summary: dict[str, Any] = {
        "scenario": raw["scenario"],
        "world": raw["world"],
        "subscribed": ["/clock", *raw.get("scan_topics", [])],
        "window_s": raw.get("window_s"),
        "source": str(path),
    }
    for system in SYSTEMS:
        runs = [run for run in raw.get(system, []) if "rtf" in run]
        if not runs:
            summary[system] = {"runs": 0}
            continue
        rtf = [run["rtf"] for run in runs]
        cpu = [run["procs"]["server"]["cpu_pct"] for run in runs]
        summary[system] = {
            "runs": len(runs),
            "rtf": rtf,
            "rtf_median": statistics.median(rtf),
            "server_cpu_pct_median": statistics.median(cpu),
            # CPU seconds the server spends per simulated second (lower is better).
            "cpu_s_per_sim_s_median": statistics.median(c / 100.0 / r for c, r in zip(cpu, rtf) if r > 0),
            "listener_cpu_pct_median": statistics.median(run["procs"]["listener"]["cpu_pct"] for run in runs),
            "server_rss_mib_median": statistics.median(run["procs"]["server"]["rss_mib"] for run in runs),
        }
    ours, ref = summary["ours"], summary["ref"]
    if ours.get("runs") and ref.get("runs"):
        summary["rtf_ratio"] = ours["rtf_median"] / ref["rtf_median"]
        summary["cpu_per_sim_s_ratio"] = ours["cpu_s_per_sim_s_median"] / ref["cpu_s_per_sim_s_median"]
        summary["target_ratio"] = TARGET_RATIOS.get(raw["scenario"], DEFAULT_TARGET_RATIO)
        summary["target_met"] = summary["rtf_ratio"] >= summary["target_ratio"]
    return summary


def table(summaries: list[dict[str, Any]]) -> str:
    """A Markdown table of the summaries."""
    lines = [
        "| scenario | subscribed | Flatland C++ | sim_server | ours / reference | CPU per sim-s, ours / ref | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for item in summaries:
        ours, ref = item["ours"], item["ref"]
        if not (ours.get("runs") and ref.get("runs")):
            lines.append(f"| {item['scenario']} | | no result | | | | |")
            continue
        scans = len(item["subscribed"]) - 1
        subscribed = "/clock" + (f" + {scans} scan topic(s)" if scans else "")
        lines.append(
            f"| {item['scenario']} | {subscribed} | {ref['rtf_median']:.1f}x, {ref['server_cpu_pct_median']:.0f} % CPU "
            f"| {ours['rtf_median']:.1f}x, {ours['server_cpu_pct_median']:.0f} % CPU | **{item['rtf_ratio']:.2f}** "
            f"| {item['cpu_per_sim_s_ratio']:.2f} | {item['target_ratio']:g}x: {'met' if item['target_met'] else 'not met'} |"
        )
    return "\n".join(lines)


def render(summaries: list[dict[str, Any]], out: Path) -> Path | None:
    """A PNG (Pillow) of the ratios: one bar per scenario, its target marked (None: no ratios)."""
    from PIL import Image, ImageDraw, ImageFont

    done = [item for item in summaries if "rtf_ratio" in item]
    if not done:
        return None
    width, row, left, right = 760, 46, 150, 40
    top = 50
    height = top + row * len(done) + 40
    largest = max(max(item["rtf_ratio"], item["target_ratio"]) for item in done) * 1.1
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()

    def x_of(ratio: float) -> int:
        return left + int((width - left - right) * ratio / largest)

    draw.text((10, 10), "Side by side with Flatland C++: ours / reference, real-time factor (medians)", fill=(30, 30, 30), font=font)
    draw.line([(x_of(1.0), top - 8), (x_of(1.0), height - 30)], fill=(160, 160, 160))
    draw.text((x_of(1.0) - 4, height - 26), "1", fill=(30, 30, 30), font=font)
    for index, item in enumerate(done):
        y = top + index * row
        colour = (60, 150, 80) if item["target_met"] else (200, 60, 50)
        draw.text((10, y + 8), item["scenario"], fill=(30, 30, 30), font=font)
        draw.rectangle([left, y + 4, x_of(item["rtf_ratio"]), y + row - 14], fill=colour)
        draw.text((x_of(item["rtf_ratio"]) + 6, y + 8), f"{item['rtf_ratio']:.2f}", fill=(30, 30, 30), font=font)
        target = x_of(item["target_ratio"])
        draw.line([(target, y), (target, y + row - 10)], fill=(30, 30, 30), width=3)
        draw.text((target + 4, y + row - 22), f"target {item['target_ratio']:g}", fill=(30, 30, 30), font=font)
    image.save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.reference", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="results.json files of sbs.py runs")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="folder of the summary (default: bench/results)")
    parser.add_argument("--command", default="", help="the command that made the results (recorded)")
    args = parser.parse_args(argv)
    try:
        summaries = [summarize_run_file(path) for path in args.results]
    except (OSError, ValueError, KeyError) as error:
        print(f"bench.reference: error: cannot read the results: {error}", file=sys.stderr)
        return 1
    stamp = time.strftime("%Y%m%d-%H%M%S")
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "command": args.command,
        "scenarios": summaries,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"reference-{stamp}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(table(summaries))
    picture = render(summaries, out.with_suffix(".png"))
    print(f"\nwritten: {out}" + (f" and {picture}" if picture else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
