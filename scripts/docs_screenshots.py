"""Refresh the docs' screenshots from the browser tests: runs them with
FARMHAND_SCREENSHOTS pointing at a scratch folder, then writes each image the docs pages
show (`images/NAME.png`) from the same-named screenshot a test took. The images are the
tests' own, so the docs show the page as the tests last saw it (tests/docs/test_docs.py
checks every image there is one a test takes).

    .venv/bin/python scripts/docs_screenshots.py            # the browser tests, scripted model
    .venv/bin/python scripts/docs_screenshots.py --e2e      # also the embedded model (minutes)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
TESTS = ["tests/playground"]
E2E = ["tests/e2e/test_playground_embedded.py"]


def main(arguments: list[str]) -> int:
    tests = TESTS + (E2E if "--e2e" in arguments else [])
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "FARMHAND_SCREENSHOTS": scratch}
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", *tests], cwd=ROOT, env=env)
        if run.returncode != 0:
            print("the browser tests failed; the docs' images are left as they were")
            return run.returncode
        taken = {path.name: path for path in Path(scratch).glob("*.png")}
        shown = {
            name
            for page in (ROOT / "docs").glob("*.md")
            for name in re.findall(r"\(images/([\w.-]+\.png)\)", page.read_text())
        }
        for name in sorted(shown):
            if name in taken:
                shutil.copyfile(taken[name], IMAGES / name)
                print(f"wrote docs/images/{name}")
            else:
                print(f"kept docs/images/{name} (no test in this run takes it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
