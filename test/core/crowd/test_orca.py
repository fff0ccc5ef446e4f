"""ORCA against RVO2 (its C++ library through the pyrvo binding), an independent implementation,
in open space and among walls; the walls as RVO2's obstacles; no body enters a wall.

Among walls the comparison starts every step from RVO2's own state (its float32 positions and
velocities), so that each step's difference is the rounding of that step alone: RVO2 computes in
float32 (a relative 6e-8), we in float64, which bounds the ORCA lines' differences by about 1e-6
m/s, and we allow 1e-5. Two places lose more digits, in RVO2 as in any float32 code, and the
tests name them rather than widen the tolerance: bodies within 0.1 mm of touching (the legs'
length sqrt(d^2 - r^2) cancels), and linear programs whose answer moves by more than 1e-5 when
their lines are rounded (nearly parallel lines); for those the velocity RVO2 gives is the one a
float32 transcription of its linear programs gives on its lines, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.orca_oracle import (
    CIRCLE_AGENT, WALL_AGENT, WALL_BODY, WALL_STEP, OrcaWalls, WallScene, arrival_steps, circle_starts, deepest_overlap,
    orca_among_walls, orca_parameters, orca_velocities, preferred_velocities, run_orca, run_rvo2, rvo2_wall_comparison,
    wall_clearance, wall_scenes,
)
from sim_server.core.crowd.neighbors import build_grid
from sim_server.core.crowd.orca import nearest_neighbors, neighbor_cell, obstacle_neighbors, orca_lines
from sim_server.core.crowd.orca_obstacles import OrcaObstacles
from sim_server.core.format.crowd_file import OrcaParameters

#: Velocities (m/s) and ORCA lines agree with RVO2's within this (float32's rounding is ~1e-6).
TOLERANCE = 1.0e-5
#: Steps of each comparison among walls (0.25 s each).
WALL_STEPS = 150
#: A body may come this much (m) within its radius of a wall (rounding), no more.
ENTRY = 1.0e-9
SCENES = wall_scenes()


def test_velocities_follow_rvo2_s_step_by_step() -> None:
    import pyrvo

    rng = np.random.default_rng(3)
    count, dt = 40, 0.25
    starts, goals = rng.uniform(-8, 8, (count, 2)), rng.uniform(-8, 8, (count, 2))
    simulator = pyrvo.RVOSimulator(dt, 15.0, 10, 10.0, 10.0, 0.5, 2.0)
    for x, y in starts:
        simulator.add_agent((float(x), float(y)))
    parameters = OrcaParameters(neighbor_distance=15.0, max_neighbors=10, time_horizon=10.0, time_horizon_obstacles=10.0)
    position, velocity = starts.copy(), np.zeros((count, 2))
    walls, stamp = OrcaWalls.none(), 1
    for _ in range(15):
        preferred = preferred_velocities(position, goals)
        for i in range(count):
            here = simulator.get_agent_position(i)
            gx, gy = goals[i, 0] - here.x, goals[i, 1] - here.y
            length = math.hypot(gx, gy)
            simulator.set_agent_pref_velocity(i, (gx / length, gy / length) if length > 1.0 else (gx, gy))
        simulator.do_step()
        velocity, stamp = orca_velocities(parameters.array(), dt, position, velocity, np.full(count, 0.5), preferred,
                                          np.full(count, 2.0), walls, stamp)
        position = position + velocity * dt
        theirs = np.array([(simulator.get_agent_velocity(i).x, simulator.get_agent_velocity(i).y) for i in range(count)])
        # RVO2 computes in float32, and here both run on from their own positions
        assert np.abs(theirs - velocity).max() < 1e-4


def test_circle_swaps_overlap_no_more_than_in_rvo2_and_take_as_long() -> None:
    # RVO2's circle example, smaller, the starts jittered (a perfectly symmetric swap can lock
    # up in both). Near the centre RVO2 itself lets bodies overlap (its steps are 0.25 s).
    rng = np.random.default_rng(0)
    for count, radius, body in ((20, 15.0, 0.5), (30, 20.0, 0.3), (40, 25.0, 0.5)):
        starts = circle_starts(count, radius) + rng.uniform(-0.5, 0.5, (count, 2))
        ours, _ = run_orca(starts, 800, body=body)
        theirs, _ = run_rvo2(starts, 800, body=body)
        assert deepest_overlap(ours, body) <= deepest_overlap(theirs, body) + 0.01
        our_arrival, their_arrival = arrival_steps(ours, -starts), arrival_steps(theirs, -starts)
        assert (our_arrival >= 0).all() and (their_arrival >= 0).all()
        assert abs(our_arrival.mean() - their_arrival.mean()) < 0.1 * their_arrival.mean()


def test_robots_are_avoided_without_their_help() -> None:
    # An agent walking at a standing robot: it takes the whole avoidance on itself.
    parameters = OrcaParameters().array()
    position = np.array([[0.0, 0.0], [3.0, 0.05]])  # agent, robot
    velocity = np.array([[1.0, 0.0], [0.0, 0.0]])
    radii = np.array([0.3, 0.4])
    walls, stamp = OrcaWalls.none(), 1
    for _ in range(100):
        new, stamp = orca_velocities(parameters, 0.1, position, velocity, radii, np.array([[1.0, 0.0]]), np.array([1.0]),
                                     walls, stamp, count=1)
        velocity[0] = new[0]
        position[0] += new[0] * 0.1
        assert np.linalg.norm(position[0] - position[1]) >= 0.7 - 1e-6
    assert position[0, 0] > 4.0  # and passed it


def test_neighbours_are_the_nearest_within_range_nearest_first() -> None:
    rng = np.random.default_rng(1)
    points = np.vstack([rng.uniform(0, 20, (300, 2)), rng.uniform(8, 9, (40, 2))])  # a crowded spot too
    copies = np.zeros(len(points), dtype=np.int64)
    copies[::7] = 1  # another copy of the world: never a neighbour
    for reach in (0.7, 3.0, 12.0):
        grid = build_grid(points, len(points), neighbor_cell(reach))
        index, distance_sq = np.empty(10, dtype=np.int64), np.empty(10)
        for i in range(0, len(points), 11):
            found = nearest_neighbors(points, points[i, 0], points[i, 1], i, reach, *grid, index, distance_sq, copies)
            d = np.sum((points - points[i]) ** 2, axis=1)
            d[i] = np.inf
            d[copies != copies[i]] = np.inf
            expected = [j for j in np.argsort(d, kind="stable") if d[j] <= reach * reach][:10]
            assert list(index[:found]) == expected


# ------------------------------------------------------------------------------ obstacles


def _loops(obstacles: OrcaObstacles) -> list[list[tuple[tuple[float, float], bool]]]:
    """Each loop as (point, convex) from its first vertex."""
    return [[(tuple(obstacles.points[v]), bool(obstacles.convex[v])) for v in loop] for loop in obstacles.loop_vertices()]


def test_a_lone_segment_is_rvo2_s_two_vertex_obstacle() -> None:
    obstacles = OrcaObstacles.from_segments(np.array([[0.0, 0.0, 2.0, 0.0]]), 5.0)
    assert _loops(obstacles) == [[((0.0, 0.0), True), ((2.0, 0.0), True)]]
    polygon = OrcaObstacles.from_polygons([np.array([[0.0, 0.0], [2.0, 0.0]])], 5.0)
    assert np.array_equal(polygon.points, obstacles.points) and np.array_equal(polygon.convex, obstacles.convex)


def test_an_open_polyline_is_walked_up_one_side_and_down_the_other() -> None:
    # (0,0)-(1,0)-(2,0)-(2,1): the straight joint at (1,0) is dropped; the bend at (2,0) is convex
    # on its outer side (below right), concave on its inner one; both ends are convex.
    segments = np.array([[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 2.0, 0.0], [2.0, 0.0, 2.0, 1.0]])
    assert _loops(OrcaObstacles.from_segments(segments, 5.0)) == [
        [((0.0, 0.0), True), ((2.0, 0.0), True), ((2.0, 1.0), True), ((2.0, 0.0), False)],
    ]


def test_a_closed_outline_is_seen_from_outside_and_from_inside() -> None:
    box = np.array([[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]])
    loops = _loops(OrcaObstacles.from_segments(box, 5.0))
    assert len(loops) == 2
    inside, outside = sorted(loops, key=lambda loop: loop[0][1])
    assert not any(convex for _, convex in inside) and all(convex for _, convex in outside)
    points = np.array([point for point, _ in outside])
    area = 0.5 * np.sum(points[:, 0] * np.roll(points[:, 1], -1) - np.roll(points[:, 0], -1) * points[:, 1])
    assert area == 1.0  # counterclockwise, as RVO2 wants a polygon seen from outside


def test_at_a_junction_each_corner_between_two_walls_is_a_vertex() -> None:
    # A T: the bar from (-1,0) to (1,0), the stem up from (0,0). Below, the bar is one straight
    # edge; the two corners above are concave.
    segments = np.array([[-1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    (loop,) = _loops(OrcaObstacles.from_segments(segments, 5.0))
    assert loop == [((-1.0, 0.0), True), ((1.0, 0.0), True), ((0.0, 0.0), False), ((0.0, 1.0), True),
                    ((0.0, 0.0), False)]


def test_repeated_reversed_zero_length_and_non_finite_segments_change_nothing() -> None:
    plain = OrcaObstacles.from_segments(np.array([[0.0, 0.0, 2.0, 1.0], [2.0, 1.0, 3.0, 0.0]]), 5.0)
    noisy = OrcaObstacles.from_segments(np.array([
        [0.0, 0.0, 2.0, 1.0], [3.0, 0.0, 2.0, 1.0], [2.0, 1.0, 0.0, 0.0], [5.0, 5.0, 5.0, 5.0],
        [np.nan, 0.0, 1.0, 1.0], [-0.0, 0.0, 2.0, 1.0],
    ]), 5.0)
    assert _loops(noisy) == _loops(plain)
    assert len(OrcaObstacles.from_segments(np.zeros((0, 4)), 5.0)) == 0


def test_edges_are_found_by_the_grid_as_by_looking_at_each() -> None:
    # Every edge within the range whose right side the agent is on, at its distance: the grid's
    # answer equals a look at every edge (what RVO2's k-D tree answers).
    rng = np.random.default_rng(5)
    starts = rng.uniform(-20, 20, (150, 2))
    angles = rng.uniform(0, 2 * math.pi, 150)
    segments = np.hstack([starts, starts + rng.uniform(0.2, 8.0, (150, 1)) * np.column_stack([np.cos(angles), np.sin(angles)])])
    obstacles = OrcaObstacles.from_segments(segments, 6.0)
    arrays = obstacles.arrays()
    a, b = obstacles.points, obstacles.points[obstacles.next_vertex]
    edge = b - a
    found_vertex, found_distance = np.empty(len(obstacles), dtype=np.int64), np.empty(len(obstacles))
    for x, y in rng.uniform(-25, 25, (60, 2)):
        right = (a[:, 0] - x) * edge[:, 1] - (a[:, 1] - y) * edge[:, 0] < 0.0
        along = np.clip(((x - a[:, 0]) * edge[:, 0] + (y - a[:, 1]) * edge[:, 1]) / (edge ** 2).sum(axis=1), 0, 1)
        distance_sq = (x - a[:, 0] - along * edge[:, 0]) ** 2 + (y - a[:, 1] - along * edge[:, 1]) ** 2
        for reach in (1.0, 6.0, 15.0):
            found = obstacle_neighbors(x, y, reach * reach, *arrays[5:], found_vertex, found_distance)
            expected = np.flatnonzero(right & (distance_sq < reach * reach))
            assert sorted(found_vertex[:found]) == list(expected)
            assert np.allclose(found_distance[:found], distance_sq[found_vertex[:found]], rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------ among walls


@pytest.mark.parametrize("name", list(SCENES))
def test_orca_lines_and_velocities_follow_rvo2_s_among_walls(name: str) -> None:
    comparison = rvo2_wall_comparison(SCENES[name], WALL_STEPS, TOLERANCE)
    free = ~comparison.touching
    # the same lines, in the same order, each within float32's rounding where no body touches
    assert (comparison.line_differences >= 0.0).all()
    assert comparison.line_differences[free].max() < TOLERANCE
    # RVO2's velocities are its linear programs' on its lines in float32, bit for bit, and ours
    # are the same programs in float64 on our lines (the step's last check never acts here)
    assert np.nanmax(comparison.float32_error) < 1e-6
    assert np.nanmax(comparison.kernel_error) < 1e-9
    # the velocities agree; where not, a body touches, or rounding the lines alone moves the
    # answer as far (nearly parallel lines)
    apart = comparison.differences > TOLERANCE
    sensitive = np.fmax(comparison.float64_error, comparison.line_sensitivity) >= 0.5 * comparison.differences
    assert not (apart & free & ~sensitive).any()
    assert apart.mean() < 0.01
    # and neither lets a body into a wall (RVO2 by its float32 rounding at most)
    assert comparison.our_clearance >= WALL_BODY - ENTRY
    assert comparison.rvo2_clearance >= WALL_BODY - 1e-5


def test_rvo2_s_split_edges_change_no_velocity() -> None:
    # RVO2's k-D tree splits the L's edges where its lines cross them (12 vertices become 14);
    # our obstacles, not split, give the same velocities.
    comparison = rvo2_wall_comparison(SCENES["concave L"], WALL_STEPS, TOLERANCE, split=False)
    assert comparison.rvo2_vertices > comparison.our_vertices
    assert comparison.differences[~comparison.touching].max() < TOLERANCE


@pytest.mark.parametrize("name, polygons", [
    ("convex box", [[(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]]),
    ("concave L", [[(0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (1.0, 1.0), (1.0, 4.0), (0.0, 4.0)]]),
    ("corridor", [[(-10.0, -1.5), (10.0, -1.5)], [(-10.0, 1.5), (10.0, 1.5)]]),
])
def test_walls_as_segments_act_as_rvo2_s_own_polygons(name: str, polygons: list) -> None:
    # RVO2 given the walls as its users would (a counterclockwise polygon, two-vertex
    # segments), we the same walls as loose segments: the same velocities.
    comparison = rvo2_wall_comparison(SCENES[name], WALL_STEPS, TOLERANCE, polygons=[np.array(p) for p in polygons])
    assert comparison.differences[~comparison.touching].max() < TOLERANCE


def _stuck_scene() -> WallScene:
    """Agents walking straight into walls: at a wall head-on, into a corner, along a wall's line
    into its end (RVO2 sees neither side of a segment whose line passes through the agent), and
    through a door narrower than a body."""
    walls = np.array([
        [5.0, -3.0, 5.0, 3.0],  # head-on
        [10.0, 10.0, 14.0, 10.0], [14.0, 10.0, 14.0, 14.0],  # a corner
        [0.0, -10.0, 4.0, -10.0],  # its line through an agent
        [20.0, -5.0, 20.0, -0.45], [20.0, 0.45, 20.0, 5.0],  # a 0.9 m door for 1 m bodies
    ])
    starts = np.array([[0.0, 0.5], [0.0, -0.5], [9.0, 12.0], [-5.0, -10.0], [16.0, 0.0], [16.0, 1.2]])
    goals = np.array([[10.0, 0.5], [10.0, -0.8], [20.0, 12.5], [10.0, -10.0], [26.0, 0.0], [26.0, 1.0]])
    return WallScene(walls, starts, goals)


@pytest.mark.parametrize("name", [*SCENES, "stuck"])
def test_no_body_enters_a_wall(name: str) -> None:
    scene = _stuck_scene() if name == "stuck" else SCENES[name]
    path = orca_among_walls(scene, 300)
    assert wall_clearance(path, scene.segments) >= WALL_BODY - ENTRY
    assert np.isfinite(path).all()


def test_a_body_on_a_walls_line_is_stopped_at_its_end() -> None:
    # RVO2 looks at an edge only from its right side: an agent exactly on a segment's line sees
    # neither, and RVO2 walks it into the segment's end. The step's last check stops it.
    scene = _stuck_scene()
    path = orca_among_walls(WallScene(scene.segments[3:4], scene.starts[3:4], scene.goals[3:4]), 200)
    assert path[-1, 0, 0] == pytest.approx(-WALL_BODY, abs=1e-6)
    assert (path[:, 0, 1] == -10.0).all()
    import pyrvo

    simulator = pyrvo.RVOSimulator(WALL_STEP, *WALL_AGENT.values(), WALL_BODY, 2.0)
    simulator.add_obstacle([(0.0, -10.0), (4.0, -10.0)])
    simulator.process_obstacles()
    simulator.add_agent((-5.0, -10.0))
    for _ in range(200):
        simulator.set_agent_pref_velocity(0, (1.0, 0.0))
        simulator.do_step()
    assert simulator.get_agent_position(0).x > 0.0  # RVO2's agent went through


def test_walls_beyond_the_obstacle_range_are_not_looked_at() -> None:
    # A wall just beyond time_horizon_obstacles * max_speed + radius gives no line; one just
    # within does.
    parameters = orca_parameters(WALL_AGENT)
    reach = parameters.time_horizon_obstacles * 2.0 + WALL_BODY
    position, velocity = np.zeros((1, 2)), np.zeros((1, 2))
    grid = build_grid(position, 1, neighbor_cell(parameters.neighbor_distance))
    counts = []
    for distance in (reach - 1e-6, reach + 1e-6):
        walls = OrcaWalls.of_segments(np.array([[distance, -1.0, distance, 1.0]]), reach)
        agents = (position, velocity, np.array([WALL_BODY]), np.zeros(1, dtype=np.int64), np.zeros((1, 2)))
        lines, walls_lines = orca_lines(0, parameters.array(), WALL_STEP, 1, agents, np.array([2.0]), grid,
                                        walls.obstacles.arrays())
        counts.append(walls_lines)
    assert counts == [1, 0]
