"""The key catalogue (sim_server.core.format.key_catalog) made from the exemplars' reads: every key
has a meaning, a key without a note (or a note of no key, a raw value without a type, defaults
that vary without words) is reported, branches of the readers are told apart, and the page has a
row per key."""

from __future__ import annotations

from pathlib import Path

from sim_server.core.format import key_notes
from sim_server.core.format.key_catalog import ANY_NAME, Catalog, KeyRecorder, build_catalog, render_markdown


def test_every_key_has_a_meaning_and_every_note_a_key(catalog: Catalog) -> None:
    assert catalog.problems == [], "\n".join(catalog.problems)
    assert all(entry.note is not None and entry.note.meaning for entry in catalog.entries)


def test_a_key_without_a_note_and_a_note_without_a_key_are_reported(recorded: tuple[KeyRecorder, Path]) -> None:
    notes = dict(key_notes.NOTES)
    del notes["model:bodies[].footprints[].radius"]
    notes["world:no_such_key"] = key_notes.Note("read by nobody")
    problems = build_catalog(recorded[0].reads, notes).problems
    assert any(line.startswith("model: bodies[].footprints[].radius (read by sim_server.core.format.model_file) "
                               "has no note") for line in problems), problems
    assert 'note "world:no_such_key" is of no key the readers read' in problems
    assert len(problems) == 2


def test_a_value_read_raw_needs_a_type_and_varying_defaults_need_words(recorded: tuple[KeyRecorder, Path]) -> None:
    notes = dict(key_notes.NOTES)
    notes["world:pedestrians[].agents[].start"] = key_notes.Note("where they start")
    notes["plugin:frame"] = key_notes.Note("its frame")
    problems = build_catalog(recorded[0].reads, notes).problems
    assert any("agents[].start" in line and "its note must give its type" in line for line in problems), problems
    assert any(line.startswith("plugin Laser: frame") and "defaults that depend on where it is" in line
               for line in problems), problems


def test_branches_are_told_apart(catalog: Catalog) -> None:
    """Keys of one kind of entry are marked with it; the others are not; defaults, ranges,
    choices and whether required come from the reads."""
    radius = catalog.find("model", "bodies[].footprints[].radius")
    assert radius is not None and radius.variants == ("circle",) and radius.required
    assert radius.range_text == "[0.0001, 10000]" and radius.unit == "m"
    points = catalog.find("model", "bodies[].footprints[].points")
    assert points is not None and points.variants == ("polygon",)
    density = catalog.find("model", "bodies[].footprints[].density")
    assert density is not None and density.variants == () and density.required
    limits = catalog.find("model", "joints[].limits")
    assert limits is not None and limits.variants == ("revolute",) and not limits.required
    frequency = catalog.find("model", "joints[].frequency")
    assert frequency is not None and frequency.variants == ("weld",) and frequency.default_text == "`0`"
    scale = catalog.find("map", "scale")
    assert scale is not None and scale.variants == ("line_segments",)
    negate = catalog.find("map", "negate")
    assert negate is not None and negate.variants == ("",) and not negate.required
    horizon = catalog.find("world", "pedestrians[].parameters.time_horizon")
    assert horizon is not None and horizon.variants == ("orca",)
    stop = catalog.find("world", "pedestrians[].parameters.stop_distance")
    assert stop is not None and stop.variants == () and stop.default_text == "0.5 (social_force), 0.2 (orca)"
    walls = catalog.find("world", "pedestrians[].pedsim_walls")
    assert walls is not None and walls.variants == ()
    region = catalog.find("world", f"pedestrians[].regions.{ANY_NAME}")
    assert region is not None and not region.required
    speed = catalog.find("world", "pedestrians[].speed")
    assert speed is not None and set(speed.type_text.split(" or ")) == {"number", "list of 2 numbers"}
    mode = catalog.find("plugin Tween", "mode")
    assert mode is not None and "`trigger`" in mode.range_text and mode.default_text == '`"yoyo"`'
    rate = catalog.find("plugin Gps", "update_rate")
    assert rate is not None and rate.unit == "Hz" and rate.default_text == "`10`"
    for scope in ("world", "model"):
        assert catalog.find(scope, "plugins[].enabled") is not None
    assert catalog.find("model", "bodies[].enabled") is not None


def test_the_page_has_a_row_per_key_under_its_section(catalog: Catalog) -> None:
    page = render_markdown(catalog)
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) == len(catalog.entries)
    assert "## Plugin Laser" in page and "### `bodies[].footprints[]`" in page
    assert "| `radius` (circle) | number | m |  | [0.0001, 10000] | yes | the circle's radius |" in page
    assert "| `scale` (line-segment map) |" in page
    assert "*(ours)*" in page


def test_recording_patches_the_readers_for_the_block_alone(tmp_path: Path) -> None:
    from sim_server.core.format import map_file, model_file, world_file
    from sim_server.core.format.key_catalog import RecordingReader, recording
    from sim_server.core.format.world_file import load_world_text
    from sim_server.core.format.yaml_reader import YamlReader

    text = "properties: {velocity_iterations: 4}\nlayers: []\nmodels: []\n"
    with recording() as recorder:
        assert all(issubclass(module.YamlReader, RecordingReader) for module in (world_file, model_file, map_file))
        load_world_text(text, tmp_path / "world.yaml")
    assert all(module.YamlReader is YamlReader for module in (world_file, model_file, map_file))
    read = next(read for read in recorder.reads if read.path == ("properties", "velocity_iterations"))
    assert (read.scope, read.method, read.default, read.module) == (
        "world", "get_int", 10, "sim_server.core.format.world_file")
    count = len(recorder.reads)
    load_world_text(text, tmp_path / "world.yaml")
    assert len(recorder.reads) == count
