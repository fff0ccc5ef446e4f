"""Why our scans differ from the C++ reference's on the same map: ``python -m bench.scan_difference``.

The reference (the Flatland commit in ``flatland_reference/``) builds its walls with OpenCV:
``cv::inRange(bitmap, occupied_thresh, 1.0)`` selects the *free* pixels, ``cv::findContours``
traces the outlines of the free areas, and each contour point, a pixel's (column, row) index, is
placed at ``(resolution * column, resolution * (rows - row))``: the pixel's top-left corner, not
its centre. The free area it encloses is therefore the cells whose four corner pixels are free
(a 2 x 2 erosion of the free mask, anchored top-left): one pixel less on the +x and -y side of
every free area. Where free pixels touch only diagonally, the 8-connected contour also cuts the
corner of the obstacle between them.

We place walls on the pixel boundaries: each pixel covers ``[origin + column * resolution,
origin + (column + 1) * resolution]`` as map_server, RViz and nav2's costmaps read the image, so
our walls lie where the map shown in RViz has them, on every side alike.

This tool takes a side-by-side ``results.json`` (``make bench-reference`` keeps them in
``build/sbs/``), casts noise-free beams from each robot's first-scan pose against both wall
models and reports how much of the measured difference each explains::

    python -m bench.scan_difference build/sbs/<run>/bench-<run>/results.json
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
import yaml

from sim_server.core.format.map_image import extract_edges, occupancy, read_grey_image

#: The laser of the reference's benchmark cleaner: 0.28 m ahead of the body, 270 degrees, 1081 beams, 20 m.
LASER_OFFSET = 0.28
ANGLES = -2.356194490192345 + 0.004363323129985824 * np.arange(1081)
LASER_RANGE = 20.0
#: Beam differences (m) counted as "far apart".
FAR = 1.0
#: Agreement (m) of a model with a published range (above the laser's 0.05 m noise).
AGREES = 0.3
#: The robots' poses in the side-by-side scenarios (sbs.py's MULTI_POSES; the first is the
#: benchmark scene's cleaner).
POSES = [
    (12.02, 0.03), (39.83, 10.28), (2.18, -2.38), (20.52, 13.28), (41.98, 14.72), (18.77, 1.82), (36.73, 4.38),
    (2.62, 3.22), (46.12, -2.48), (12.23, 4.53), (13.68, 14.63), (22.83, 0.67), (-9.88, -0.88), (26.12, 5.38),
    (33.58, 0.72), (39.93, 4.83), (24.12, 11.78), (44.58, 3.78), (4.43, -4.38), (43.62, 9.83),
]
BENCHMARK_POSE = (12.0, 0.0)


def _layer_grids(world_dir: Path) -> list[tuple[np.ndarray, float, tuple[float, float]]]:
    grids = []
    for name in ("map.yaml", "map3d.yaml"):
        meta = yaml.safe_load((world_dir / name).read_text())
        grids.append((occupancy(read_grey_image(world_dir / meta["image"]), meta["occupied_thresh"]),
                      float(meta["resolution"]), (float(meta["origin"][0]), float(meta["origin"][1]))))
    return grids


def pixel_boundary_walls(occupied: np.ndarray, resolution: float, origin: tuple[float, float]) -> np.ndarray:
    """Our walls: (N, 4) segments on the pixel boundaries, in the world frame (m)."""
    edges = extract_edges(occupied, resolution)
    edges[:, [0, 2]] += origin[0]
    edges[:, [1, 3]] += origin[1]
    return edges


def reference_walls(occupied: np.ndarray, resolution: float, origin: tuple[float, float]) -> np.ndarray:
    """The reference's walls where they run along the axes: the boundaries of the free cells
    whose four corner pixels are free (see the module doc; the diagonal corner cuts are left out)."""
    free = ~occupied
    enclosed = np.zeros_like(free)
    enclosed[:-1, :-1] = free[:-1, :-1] & free[1:, :-1] & free[:-1, 1:] & free[1:, 1:]
    return pixel_boundary_walls(~enclosed, resolution, origin)


def cast(walls: np.ndarray, x: float, y: float) -> np.ndarray:
    """Noise-free ranges (m, NaN beyond range) of the benchmark laser at (x, y), heading 0."""
    out = np.full(len(ANGLES), np.inf)
    dx, dy = np.cos(ANGLES)[:, None], np.sin(ANGLES)[:, None]
    for start in range(0, len(walls), 20000):
        part = walls[start:start + 20000]
        ex, ey = (part[:, 2] - part[:, 0])[None], (part[:, 3] - part[:, 1])[None]
        wx, wy = (part[:, 0] - x)[None], (part[:, 1] - y)[None]
        denominator = dx * ey - dy * ex
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (wx * ey - wy * ex) / denominator
            u = (wx * dy - wy * dx) / denominator
        hit = (denominator != 0) & (t >= 0) & (u >= 0) & (u <= 1)
        out = np.minimum(out, np.where(hit, t, np.inf).min(axis=1))
    out[out > LASER_RANGE] = np.nan
    return out


def _published(runs: list[dict], topic: str) -> np.ndarray:
    """The mean over runs of the first scan on ``topic`` (the laser's noise averages out)."""
    scans = np.array([[np.nan if v is None else v for v in run["first_scans"][topic]["ranges"]] for run in runs
                      if topic in run.get("first_scans", {})])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # beams no run hit: NaN, as wanted
        return np.nanmean(scans, axis=0)


def analyse(results: dict, world_dir: Path) -> dict[str, float]:
    """Figures of one side-by-side result: mean difference, beams far apart, and how many of those
    the reference's wall model reproduces."""
    grids = _layer_grids(world_dir)
    ours_walls = np.concatenate([pixel_boundary_walls(*grid) for grid in grids])
    their_walls = np.concatenate([reference_walls(*grid) for grid in grids])
    topics = results["scan_topics"]
    differences, far, explained, model_gap = [], 0, 0, []
    for index, topic in enumerate(topics):
        x, y = BENCHMARK_POSE if len(topics) == 1 else POSES[index]
        ref, ours = _published(results["ref"], topic), _published(results["ours"], topic)
        modelled = cast(their_walls, x + LASER_OFFSET, y)
        ours_model = cast(ours_walls, x + LASER_OFFSET, y)
        both = np.isfinite(ref) & np.isfinite(ours)
        differences.append(ours[both] - ref[both])
        model_gap.append((ours_model - modelled)[np.isfinite(ours_model) & np.isfinite(modelled)])
        apart = both & (np.abs(ours - ref) > FAR)
        far += int(apart.sum())
        explained += int((apart & (np.abs(modelled - ref) < AGREES)).sum())
    difference, gap = np.concatenate(differences), np.concatenate(model_gap)
    return {
        "beams": int(len(difference)),
        "mean_ours_minus_ref_m": float(difference.mean()),
        "mean_ours_model_minus_ref_model_m": float(gap.mean()),
        "share_one_pixel_shorter_in_ref_model": float((gap > 1e-6).mean()),
        "beams_far_apart": far,
        "far_apart_reproduced_by_ref_model": explained,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="explain scan differences against the C++ reference")
    parser.add_argument("results", type=Path, help="a side-by-side results.json (build/sbs/...)")
    parser.add_argument("--world-dir", type=Path, default=Path(__file__).resolve().parent / "worlds" / "benchmark_world",
                        help="the folder with map.yaml and map3d.yaml")
    args = parser.parse_args(argv)
    figures = analyse(json.loads(args.results.read_text()), args.world_dir)
    print(f"{figures['beams']} beams hit in both: ours - reference {figures['mean_ours_minus_ref_m']:+.4f} m on average; "
          f"the two wall models, noise-free: {figures['mean_ours_model_minus_ref_model_m']:+.4f} m, "
          f"{100 * figures['share_one_pixel_shorter_in_ref_model']:.0f} % of beams one pixel shorter in the reference's")
    print(f"{figures['beams_far_apart']} beams differ by more than {FAR:g} m; the reference's wall model gives the "
          f"reference's range on {figures['far_apart_reproduced_by_ref_model']} of them (the rest graze corners that its "
          "8-connected contours cut diagonally)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
