"""The summary ``make bench`` prints: every crowd scenario's line, whatever it measured."""

from __future__ import annotations

from bench.__main__ import crowd_lines


def test_every_crowd_scenario_has_its_line() -> None:
    # The keys each producer really returns: crowd_scenarios.run_node, social_force_oracle.speed_comparison,
    # orca_oracle.circle_comparison and orca_oracle.wall_comparison (make bench once stopped at the last).
    crowds = {
        "office, 200 people": {"rtf": 31.0, "ms_per_step": 0.16, "startup_s": 0.8, "people": 200},
        "social force vs pysocialforce": {"pysocialforce_ms": 640.0, "ours_ms": 5.6, "ratio": 114.0, "rounds": 3},
        "ORCA vs RVO2": {"ours_ms": 0.26, "rvo2_ms": 0.41, "ratio": 1.6, "ours_overlap_m": 0.52, "rvo2_overlap_m": 0.57,
                         "ours_arrived": 250, "rvo2_arrived": 249, "ours_mean_arrival_s": 654.0,
                         "rvo2_mean_arrival_s": 651.0},
        "ORCA among walls vs RVO2": {"ours_ms": 0.5, "rvo2_ms": 0.7, "ratio": 1.4, "ours_loop_ms": 0.6, "rvo2_loop_ms": 0.9,
                                     "ratio_loop": 1.5, "segments": 100, "agents": 250, "ours_overlap_m": 0.1,
                                     "rvo2_overlap_m": 0.2, "ours_clearance_m": 0.48, "rvo2_clearance_m": 0.47,
                                     "ours_arrived": 240, "rvo2_arrived": 238},
    }
    lines = crowd_lines(crowds)
    assert len(lines) == len(crowds)
    assert "31.0x real time" in lines[0]
    assert "against 640 ms (114x)" in lines[1]
    assert "arrived 250 and 249 of 250, on average after 654 s and 651 s" in lines[2]
    assert lines[3].startswith("  ORCA among walls vs RVO2") and "(1.4x)" in lines[3]
    assert "arrived 240 and 238 of 250" in lines[3] and "0.480 m of a wall against 0.470 m" in lines[3]
