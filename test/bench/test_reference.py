"""The side-by-side summary: medians, ratios and targets from sbs.py's results files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import reference


def _run(rtf: float, cpu: float) -> dict:
    return {"rtf": rtf, "procs": {"server": {"cpu_pct": cpu, "rss_mib": 80.0}, "listener": {"cpu_pct": 10.0}}}


def _results(tmp_path: Path, scenario: str, ref: list[dict], ours: list[dict]) -> Path:
    path = tmp_path / f"{scenario}.json"
    path.write_text(json.dumps({"scenario": scenario, "world": "w.yaml", "scan_topics": ["/scan"], "window_s": 20,
                                "ref": ref + [{"error": "listener gave no result"}], "ours": ours}))
    return path


def test_ratios_of_medians_and_cpu_per_simulated_second(tmp_path: Path) -> None:
    path = _results(tmp_path, "bench", [_run(20, 150), _run(25, 150), _run(30, 150)],
                    [_run(130, 100), _run(120, 100), _run(140, 100)])
    summary = reference.summarize_run_file(path)
    assert summary["ref"]["runs"] == 3 and summary["ref"]["rtf_median"] == 25
    assert summary["rtf_ratio"] == pytest.approx(130 / 25)
    # CPU seconds per simulated second: 1.5 / 25 for the reference, 1.0 / 130 for ours.
    assert summary["cpu_per_sim_s_ratio"] == pytest.approx((1.0 / 130) / (1.5 / 25))
    assert summary["subscribed"] == ["/clock", "/scan"] and summary["target_met"]  # 5.2x, the target 5x


def test_summary_file_table_and_picture(tmp_path: Path, capsys) -> None:
    office = _results(tmp_path, "office", [_run(100, 130)], [_run(120, 99)])
    assert reference.main([str(office), "--out", str(tmp_path / "out"), "--command", "make bench-reference"]) == 0
    (written,) = (tmp_path / "out").glob("reference-*.json")
    record = json.loads(written.read_text())
    assert record["command"] == "make bench-reference" and record["scenarios"][0]["target_ratio"] == 5.0
    assert not record["scenarios"][0]["target_met"]  # 1.2 < 5
    assert written.with_suffix(".png").is_file()
    assert "| office | /clock + 1 scan topic(s) |" in capsys.readouterr().out


def test_unreadable_results_are_one_line(tmp_path: Path, capsys) -> None:
    assert reference.main([str(tmp_path / "missing.json"), "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().err.count("\n") == 1
