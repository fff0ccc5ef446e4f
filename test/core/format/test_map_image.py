"""Tests of map image reading and pixel-edge extraction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from sim_server.core.format.map_image import MapImageError, extract_edges, occupancy, read_grey_image


def edge_set(edges: np.ndarray) -> set[tuple[float, ...]]:
    return {tuple(round(v, 9) for v in row) for row in edges.tolist()}


def test_single_pixel_gives_four_edges() -> None:
    occupied = np.array([[False, False, False], [False, True, False], [False, False, False]])
    edges = extract_edges(occupied, resolution=1.0)
    # y is flipped: row 1 spans y in [1, 2].
    assert edge_set(edges) == {(1, 2, 2, 2), (1, 1, 2, 1), (1, 2, 1, 1), (2, 2, 2, 1)}


def test_runs_merge_into_one_segment() -> None:
    occupied = np.zeros((4, 6), dtype=bool)
    occupied[1, 1:5] = True  # a wall 4 pixels long, one thick
    edges = extract_edges(occupied, resolution=0.5)
    assert len(edges) == 4
    assert (0.5, 1.5, 2.5, 1.5) in edge_set(edges)
    assert (0.5, 1.0, 2.5, 1.0) in edge_set(edges)


def test_occupied_border_pixels_get_outer_edges() -> None:
    edges = extract_edges(np.ones((2, 3), dtype=bool), resolution=1.0)
    assert edge_set(edges) == {(0, 2, 3, 2), (0, 0, 3, 0), (0, 2, 0, 0), (3, 2, 3, 0)}


def test_occupancy_threshold_like_reference() -> None:
    grey = np.array([[0, 165, 166, 255]], dtype=np.uint8)
    # 165/255 = 0.647 < 0.65 is occupied, 166/255 = 0.651 is free.
    assert occupancy(grey, 0.65).tolist() == [[True, True, False, False]]


def test_horizontal_edges_come_first_then_vertical() -> None:
    occupied = np.zeros((3, 3), dtype=bool)
    occupied[1, 1] = True
    edges = extract_edges(occupied, 1.0)
    horizontal = edges[:, 1] == edges[:, 3]
    assert horizontal.tolist() == [True, True, False, False]


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "LA", "P", "I;16", "1"])
def test_image_modes_read_as_grey(tmp_path: Path, mode: str) -> None:
    pixels = np.array([[0, 255], [255, 0]], dtype=np.uint8)
    base = Image.fromarray(pixels, "L")
    if mode == "I;16":
        image = Image.fromarray(pixels.astype(np.uint16) * 257)
    elif mode == "1":
        image = base.convert("1")
    else:
        image = base.convert(mode)
    path = tmp_path / f"map_{mode.replace(';', '')}.png"
    image.save(path)
    assert read_grey_image(path).tolist() == pixels.tolist()


def test_colour_uses_opencv_weights(tmp_path: Path) -> None:
    path = tmp_path / "rgb.png"
    Image.fromarray(np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]]], dtype=np.uint8), "RGB").save(path)
    assert read_grey_image(path).tolist() == [[76, 150, 29]]


def test_unreadable_image(tmp_path: Path) -> None:
    path = tmp_path / "bad.png"
    path.write_text("not an image")
    with pytest.raises(MapImageError, match="cannot be read"):
        read_grey_image(path)
    with pytest.raises(MapImageError, match="does not exist"):
        read_grey_image(tmp_path / "missing.png")


def test_large_map_extracts_vectorised() -> None:
    rng = np.random.default_rng(1)
    occupied = rng.random((2000, 2000)) < 0.05
    edges = extract_edges(occupied, 0.05)
    # Every boundary piece is covered exactly once: total edge length equals the boundary count.
    padded = np.pad(occupied, 1)
    boundary_pieces = np.count_nonzero(padded[1:, :] != padded[:-1, :]) + np.count_nonzero(
        padded[:, 1:] != padded[:, :-1]
    )
    lengths = np.hypot(edges[:, 2] - edges[:, 0], edges[:, 3] - edges[:, 1]) / 0.05
    assert round(lengths.sum()) == boundary_pieces
