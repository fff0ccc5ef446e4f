"""The walking grid: where a body fits, which places connect, and the ways around walls."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim_server.core.crowd.navigation import WalkingGrid, walking_directions
from sim_server.core.crowd.walls import WallIndex, walls_within

#: A 10 x 6 m room split by a wall at x = 5 with a 1.2 m door from y = 2.4 to 3.6.
ROOM = np.array([
    [0, 0, 10, 0], [10, 0, 10, 6], [10, 6, 0, 6], [0, 6, 0, 0],
    [5, 0, 5, 2.4], [5, 3.6, 5, 6],
], dtype=float)


def test_cells_near_walls_are_blocked_and_the_rest_free() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    assert grid.region_at(2.0, 3.0) >= 0
    assert grid.region_at(5.0, 1.0) == -1  # on the wall
    assert grid.region_at(5.2, 1.0) == -1  # within 0.3 m of it
    assert grid.region_at(5.5, 1.0) >= 0
    assert grid.region_at(-50.0, 0.0) == grid.outside  # beyond the grid: the space round the room
    assert grid.region_at(-0.5, 3.0) == grid.outside  # within the grid, outside the room
    assert grid.region_at(2.0, 3.0) != grid.outside  # the room is closed


def test_the_edge_of_the_grid_is_free_all_round_whatever_the_radius_and_cell() -> None:
    for radius, cell in [(0.05, 0.02), (0.3, 0.2), (2.0, 0.2), (2.0, 10.0), (1.5, 4.0)]:
        grid = WalkingGrid(ROOM, radius, cell)
        edge = np.concatenate([grid.labels[0], grid.labels[-1], grid.labels[:, 0], grid.labels[:, -1]])
        assert (edge == grid.outside).all(), (radius, cell)
        assert grid.x0 + 0.5 * grid.cell < -radius and grid.y0 + 0.5 * grid.cell < -radius
        assert grid.x0 + (grid.nx - 0.5) * grid.cell > 10 + radius


def test_a_door_connects_and_a_closed_room_does_not() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    assert grid.region_at(2.0, 3.0) == grid.region_at(8.0, 3.0)
    closed = np.vstack([ROOM, [[5, 2.4, 5, 3.6]]])
    grid = WalkingGrid(closed, 0.3, 0.1)
    assert grid.region_at(2.0, 3.0) != grid.region_at(8.0, 3.0)
    # a door narrower than a body is closed too
    narrow = np.vstack([ROOM[:4], [[5, 0, 5, 2.8], [5, 3.2, 5, 6]]])
    grid = WalkingGrid(narrow, 0.3, 0.1)
    assert grid.region_at(2.0, 3.0) != grid.region_at(8.0, 3.0)


def test_distances_go_round_the_wall_through_the_door() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    index = grid.field_id(8.0, 1.0, set)
    field = grid.fields[index]
    ix, iy = grid.cell_of(2.0, 1.0)
    through_door = math.dist((2.0, 1.0), (5.0, 3.0)) + math.dist((5.0, 3.0), (8.0, 1.0))
    # path lengths weighted near walls: at least the way through the door, not much more
    assert 0.99 * through_door < field[iy, ix] < 2.0 * through_door
    # the same goal again: the same field
    assert grid.field_id(8.0, 1.0, set) == grid.field_id(8.02, 1.02, set)


def walk(grid: WalkingGrid, start: tuple[float, float], goal: tuple[float, float], steps: int) -> np.ndarray:
    """Follow the walking directions from ``start`` towards ``goal`` in steps of 5 cm (at most
    ``steps``), never into a wall of :data:`ROOM`; where the walk ended."""
    position, target = np.array([start]), np.array([goal])
    field = np.array([grid.field_id(goal[0], goal[1], set)])
    walls = WallIndex(ROOM)
    near = np.empty((8, 3))
    for step in range(steps):
        direction, distance = np.zeros((1, 2)), np.zeros(1)
        walking_directions(position, target, field, *grid.arrays(), direction, distance)
        if distance[0] < 0.1:
            break
        position = position + 0.05 * direction
        found = walls_within(position[0, 0], position[0, 1], 0.3, step + 1, walls.arrays(), near, 8)
        assert found == 0 or near[0, 0] > 0.1  # never into a wall
    return position[0]


def test_following_the_directions_leads_through_the_door() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    assert np.linalg.norm(walk(grid, (2.0, 1.0), (8.0, 1.0), 400) - (8.0, 1.0)) < 0.1


def test_a_goal_beyond_the_grid_is_reached_round_the_walls() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    # west of the room, the goal far east of it: the straight way runs into the room's wall
    assert grid.cell_of(30.0, 3.0) is None
    assert grid.field_id(30.0, 3.0, set) >= 0  # the field of the edge cell nearest to the goal
    assert np.linalg.norm(walk(grid, (-1.0, 3.0), (30.0, 3.0), 2000) - (30.0, 3.0)) < 0.1


def test_in_open_space_the_way_is_straight() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    # away from the walls (more than CLEARANCE beyond where a body touches them)
    position, goal = np.array([[2.0, 2.5]]), np.array([[3.5, 3.7]])
    field = np.array([grid.field_id(3.5, 3.7, set)])
    direction, distance = np.zeros((1, 2)), np.zeros(1)
    walking_directions(position, goal, field, *grid.arrays(), direction, distance)
    assert np.allclose(direction[0], (goal[0] - position[0]) / np.linalg.norm(goal[0] - position[0]))
    assert distance[0] == pytest.approx(np.linalg.norm(goal[0] - position[0]))


def test_large_extents_get_coarser_cells_within_the_limit() -> None:
    from sim_server.core import limits

    far = np.array([[0.0, 0.0, 5000.0, 0.0], [0.0, 0.0, 0.0, 5000.0]])
    grid = WalkingGrid(far, 0.3, 0.1)
    assert grid.nx * grid.ny <= limits.MAX_NAVIGATION_CELLS
    assert grid.cell > 0.1


def test_the_nearest_wall_map_is_within_a_cell_of_the_exact_nearest_wall() -> None:
    from sim_server.core.crowd.walls import nearest_wall

    rng = np.random.default_rng(2)
    segments = np.column_stack([rng.uniform(0, 20, (300, 2)), np.zeros((300, 2))])
    segments[:, 2:4] = segments[:, 0:2] + rng.uniform(-0.3, 0.3, (300, 2))  # short, as a map image's
    index = WallIndex(segments)
    points, x0, y0, cell = index.nearest_map()
    near = np.empty((8, 3))
    for k, (x, y) in enumerate(rng.uniform(-2, 22, (500, 2))):
        mapped = nearest_wall(x, y, points, x0, y0, cell)[0]
        found = walls_within(x, y, 50.0, k + 1, index.arrays(), near, 8)
        assert found and abs(mapped - near[0, 0]) <= 1.5 * cell * math.sqrt(2.0)


def test_fields_beyond_the_memory_limit_replace_the_least_recently_used_not_in_use() -> None:
    grid = WalkingGrid(ROOM, 0.3, 0.1)
    grid.max_fields = 2
    first = grid.field_id(2.0, 1.0, set)
    second = grid.field_id(8.0, 1.0, set)
    asked = []

    def in_use() -> set[int]:
        asked.append(True)
        return {first}

    third = grid.field_id(8.0, 5.0, in_use)
    assert asked and third == second  # the second's slot, the first being in use
    assert grid.field_id(2.0, 1.0, set) == first  # kept
    index = grid.field_id(8.0, 5.0, set)
    ix, iy = grid.cell_of(8.0, 5.0)
    assert index == third and grid.fields[index][iy, ix] == 0.0  # the third goal's own field
    assert grid.field_id(2.0, 1.0, lambda: {0, 1}) == first
    assert grid.field_id(3.0, 3.0, lambda: {0, 1}) == -1  # every slot in use: walk straight
