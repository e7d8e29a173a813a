"""The embedded model: a GGUF run in-process by llama-cpp-python (`provider.py`).

Everything only the embedded model needs lives here: loading (`load.py`), the engine
thread and its queue (`engine.py`), continuous batching (`batch.py`), sampling
(`sampling.py`, `vocab.py`), the prefix cache, the chat template's render
(`turn_template.py`, `generic_tools.py`), constrained decoding (`grammar.py`), the call
gate (`call_gate.py`, `siblings.py`), grounding (`grounding.py`, `relevance.py`,
`turn_calls.py`), stop strings, embeddings, and the per-model `EmbeddedProfile`
(`profile.py`). Code outside `providers/` imports the names below from this package.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from farmhand.providers.llamacpp.embedding import Embedded, LlamaEmbedder
    from farmhand.providers.llamacpp.engine import (
        SERVED_N_PARALLEL,
        Engine,
        EngineLimits,
        EngineStatus,
    )
    from farmhand.providers.llamacpp.load import (
        DEFAULT_N_CTX,
        free_failed_load,
        load_llama,
        return_freed_memory,
    )
    from farmhand.providers.llamacpp.profile import (
        DEFAULT_GATE,
        DEFAULT_GROUND_FIRST,
        DEFAULT_TEMPERATURE,
        EmbeddedProfile,
        profile_for,
    )
    from farmhand.providers.llamacpp.provider import DEFAULT_N_PARALLEL, LlamaCppProvider

# Each name is imported from its module when first asked for, so that code needing the
# engine's numbers or the loader does not also load numpy, the templates and the parsers.
_HOMES = {
    "DEFAULT_GATE": "profile",
    "DEFAULT_GROUND_FIRST": "profile",
    "DEFAULT_N_CTX": "load",
    "DEFAULT_N_PARALLEL": "provider",
    "DEFAULT_TEMPERATURE": "profile",
    "SERVED_N_PARALLEL": "engine",
    "EmbeddedProfile": "profile",
    "Embedded": "embedding",
    "Engine": "engine",
    "EngineLimits": "engine",
    "EngineStatus": "engine",
    "LlamaCppProvider": "provider",
    "LlamaEmbedder": "embedding",
    "free_failed_load": "load",
    "load_llama": "load",
    "profile_for": "profile",
    "return_freed_memory": "load",
}
__all__ = [
    "DEFAULT_GATE",
    "DEFAULT_GROUND_FIRST",
    "DEFAULT_N_CTX",
    "DEFAULT_N_PARALLEL",
    "DEFAULT_TEMPERATURE",
    "SERVED_N_PARALLEL",
    "Embedded",
    "EmbeddedProfile",
    "Engine",
    "EngineLimits",
    "EngineStatus",
    "LlamaCppProvider",
    "LlamaEmbedder",
    "free_failed_load",
    "load_llama",
    "profile_for",
    "return_freed_memory",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
