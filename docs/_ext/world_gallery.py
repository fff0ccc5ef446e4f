"""The gallery's pictures, made as the documentation builds (``docs/gallery.md``).

The directive ``world-picture`` takes a world file's path, relative to the repository's root. As
the page is read it loads that world in-process (no ROS), runs it for a moment of sim time (so
people walk and robots move off their spawn poses), draws it with ``sim_server.rendering.render``
and writes the picture as a PNG into the build's own folder (beside the doctrees, never into
``docs/``); Sphinx copies it into the HTML output's ``_images/`` as any image. Below the
picture come the world's ``description`` (the directive's content where the file has none) and
its path.

Every world runs from a fixed seed, so the pictures are the same on every build. A world that
does not load fails the build with one line naming it::

    Gallery error:
    config/worlds/foo/world.yaml: the gallery cannot load this world: ...

Options: ``:pixels:`` the picture's longer side (default 480), ``:seconds:`` sim time to run
before the picture (default 1), ``:alt:`` the picture's alternative text.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
#: The folder, in the build's doctree folder, that the pictures are written to.
OUT_FOLDER = "gallery"
DEFAULT_PIXELS = 480
DEFAULT_SECONDS = 1.0
SEED = 1


class GalleryError(SphinxError):
    category = "Gallery error"


def picture_name(world_path: str) -> str:
    """The PNG's file name for a world: ``gallery_<its folder's name>.png``."""
    return f"gallery_{Path(world_path).parent.name}.png"


def write_picture(world_path: str, out: Path, pixels: int, seconds: float) -> str:
    """Load the world, run it ``seconds`` of sim time and write its picture to ``out``; returns
    the world file's ``description`` ("" where it has none), as the loader read it."""
    from PIL import Image

    from sim_server.core import World
    from sim_server.rendering import render

    quiet = logging.getLogger("sim_server")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the loaders' notes (a pedsim crowd's differences) are not the build's
    try:
        world = World.from_file(ROOT / world_path, seed=SEED)
        try:
            description = world.spec.description.strip()
            world.step(round(seconds / world.time.step_size))
            picture = render(world, pixels=pixels)
        finally:
            world.close()
    finally:
        quiet.setLevel(level)
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(picture).save(out)
    return description


class WorldPicture(SphinxDirective):
    """``world-picture PATH``: a bundled world's picture, description and path."""

    required_arguments = 1
    has_content = True
    option_spec = {
        "pixels": directives.positive_int,
        "seconds": directives.unchanged,
        "alt": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        world_path = self.arguments[0]
        world_file = ROOT / world_path
        out = Path(self.env.app.doctreedir) / OUT_FOLDER / picture_name(world_path)
        try:
            seconds = float(self.options.get("seconds", DEFAULT_SECONDS))
            description = write_picture(world_path, out, self.options.get("pixels", DEFAULT_PIXELS), seconds)
        except Exception as error:  # noqa: BLE001 (any failure is the world's: one line naming it)
            message = " ".join(f"{type(error).__name__}: {error}".split())
            raise GalleryError(f"{world_path}: the gallery cannot load this world: {message}") from error
        caption = description or " ".join(self.content).strip()
        if not caption:
            raise GalleryError(f"{world_path}: the world has no description: write one under the directive")

        self.env.note_dependency(str(world_file))
        # Sphinx finds images relative to the page; the picture is outside docs/, so a relative path.
        page_folder = Path(self.env.doc2path(self.env.docname)).parent
        image = nodes.image(uri=Path(os.path.relpath(out, page_folder)).as_posix(),
                            alt=self.options.get("alt", f"The {Path(world_path).parent.name} world"))
        text = nodes.paragraph()
        text += nodes.emphasis(text=caption)
        where = nodes.paragraph()
        where += nodes.Text("File: ")
        where += nodes.literal(text=world_path)
        return [image, text, where]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("world-picture", WorldPicture)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
