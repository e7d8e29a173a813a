"""The docs: `mkdocs build --strict` passes (no broken link, no page left out of the
navigation), the configuration reference names every key of every config model with its
docstring, the README keeps the two commands it opens with, and every image is a
screenshot a browser test takes (`make docs-screenshots` takes them again)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from farmhand.config.models import FarmhandConfig
from farmhand.config.reference import config_reference

ROOT = Path(__file__).parents[2]
OPENING = '```sh\nmake chat Q="List the files in the examples folder."\nmake test\n```'


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    page = (tmp_path / "site" / "configuration" / "index.html").read_text()
    assert "question_timeout" in page and "config-reference" not in page


def models_under(model: type[BaseModel]) -> set[type[BaseModel]]:
    found = {model}
    for info in model.model_fields.values():
        annotation = info.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        for inner in candidates:
            for arg in [inner, *getattr(inner, "__args__", ())]:
                if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in found:
                    found |= models_under(arg)
    return found


def test_the_reference_has_every_key_and_its_docstring() -> None:
    text = config_reference()
    models = models_under(FarmhandConfig)
    assert len(models) >= 10
    for model in models:
        for name, info in model.model_fields.items():
            assert f"| `{name}` |" in text, (model.__name__, name)
            first_words = " ".join((info.description or "").split()[:4]).replace("|", "\\|")
            assert first_words in text, (model.__name__, name)
    assert "## `runtime.models[]`" in text and "## `mcp.servers[]`" in text


def test_the_readme_opens_with_its_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    assert readme.startswith("# farmhand\n\n" + OPENING)


SCREENSHOT = re.compile(r'screenshot\(\s*path=.*?"([\w.-]+\.png)"')


def test_every_image_is_a_screenshot_a_test_takes_and_every_page_uses_its_images() -> None:
    taken = {
        name
        for source in (ROOT / "tests").rglob("*.py")
        for name in SCREENSHOT.findall(source.read_text())
    }
    images = {path.name for path in (ROOT / "docs" / "images").iterdir()}
    assert images and images <= taken, images - taken
    pages = "".join(page.read_text() for page in (ROOT / "docs").glob("*.md"))
    assert set(re.findall(r"\(images/([\w.-]+)\)", pages)) == images
