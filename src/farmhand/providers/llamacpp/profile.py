"""How the embedded provider treats one model's turns, as one value: `EmbeddedProfile`.

The levers were each measured on their own (bench/accuracy_levers.py, bench/README.md) and
are on by default; a model's config entry switches some off (`grounding: false`) and a
catalog model brings what was measured for it (`CatalogModel.gate_go_on`). `profile_for`
is the one place a config entry becomes a profile; the defaults are this module's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from farmhand.config.models import ModelConfig
from farmhand.errors import ModelError
from farmhand.models.catalog import lookup
from farmhand.providers.llamacpp.call_gate import GateThresholds

DEFAULT_TEMPERATURE = 0.2
# Measured with bench/accuracy_levers.py: pushing on after a call took BFCL parallel from 0%
# to 40% with simple unchanged; the first-token decision (call=...) did not help, so it is off.
DEFAULT_GATE = GateThresholds(call=None, after_result=None, another=0.05)
# Measured likewise (bench/README.md): dropping ungrounded further calls took parallel from
# 40% to 50% on BFCL and 2/6 to 6/6 on the built-in suite; answering a first question in
# text when under half of its first call's required values are grounded took irrelevance
# from 30% to 50% and no_call from 6/8 to 8/8; neither changed another category. Leaving out
# optional arguments with ungrounded values (`ground_optional`), replayed on the stored calls
# of BFCL's whole slice, passed 5 more items (simple 1, multiple 1, parallel 3) and failed none;
# answering a first question in text when its call's tool shares no word with it
# (`ground_topic`) passed 9 more irrelevance items and failed none.
DEFAULT_GROUND_FIRST = 0.5


@dataclass(frozen=True)
class EmbeddedProfile:
    """`temperature`: when the request names none. `constrained`: constrain tool_choice auto
    turns too (required and named always are), with a lazy grammar: free text costs
    nothing, and once the model opens a call the call must name an offered tool with
    schema-valid arguments. `tool_parser`: the family calls are read in (None: from the
    chat template). `tool_rules`: added to the system prompt of turns that offer tools.
    `answer_after_results`: after results that all succeeded, answer from them
    (`prompting.guidance.answer_turn`). `call_gate`: answer or call decided from the
    model's odds, and the push for another call (`call_gate.py`); None: off.

    Grounding (`grounding.py`, `turn_calls.py`): `ground_extra` drops a further call of a
    turn whose values the conversation never mentioned, and stops the turn there;
    `ground_first` (a share, 0-1] answers a conversation's first question in text when the
    turn's first call has less than that share of its required values grounded
    (`ANY_GROUNDED`: only when none is); `ground_topic` does the same when the tool of that
    call shares no word with the question (`relevance.py`); `ground_optional` leaves out a
    call's optional arguments whose values the conversation never mentioned;
    `ground_siblings` pushes the model into another call while the question lists values
    its calls have not used (`siblings.py`, through the call gate). `repair_calls`: a call
    that misses its schema the way small models do is repaired (`tools/repair.py`).
    `retag_calls`: on a constrained turn, a first token that starts a call another way (a
    fence, a bare `{`) is written as the call tag, so the call is under the grammar."""

    temperature: float = DEFAULT_TEMPERATURE
    constrained: bool = False
    tool_parser: str | None = None
    tool_rules: str | None = None
    answer_after_results: bool = True
    call_gate: GateThresholds | None = DEFAULT_GATE
    ground_extra: bool = True
    ground_first: float | None = DEFAULT_GROUND_FIRST
    ground_optional: bool = True
    ground_topic: bool = True
    ground_siblings: bool = True
    repair_calls: bool = True
    retag_calls: bool = False


def profile_for(model: ModelConfig, source: str) -> EmbeddedProfile:
    """The profile of `model`'s config entry; `source` is the catalog name or GGUF path
    the model is loaded from (a catalog model's measured gate applies)."""
    grounding = model.grounding
    defaults = EmbeddedProfile()
    return EmbeddedProfile(
        temperature=defaults.temperature if model.temperature is None else model.temperature,
        constrained=model.constrained,
        tool_parser=model.tool_parser,
        call_gate=replace(DEFAULT_GATE, go_on=catalog_go_on(source)),
        ground_extra=grounding,
        ground_first=DEFAULT_GROUND_FIRST if grounding else None,
        ground_optional=grounding,
        ground_topic=grounding,
        ground_siblings=grounding,
    )


def catalog_go_on(source: str) -> float | None:
    """The call gate's `go_on` measured for a catalog model; None for any other GGUF."""
    try:
        return lookup(source).gate_go_on
    except ModelError:
        return None
