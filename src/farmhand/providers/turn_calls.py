"""The calls of one model turn, as the embedded provider admits them.

Small models do not stop: they write the same call over and over, or sweep on, one call per
value nobody asked for, until the token limit. `CallsOfTurn` sits between the parser and the
caller and decides, call by call:

- a call already written this turn is dropped, and the turn stops (`looping`);
- with `Grounding.extra`, a further call that is not grounded in the conversation
  (`grounding.further_call_grounded`) is dropped, and the turn stops too;
- with `Grounding.first_share`, a turn whose first call has less than that share of its
  required values grounded (`grounding.grounded_share`) is to be answered in text instead
  (`answer_instead`): the provider regenerates it with calls banned;
- with `Grounding.topic`, a first call of a tool that shares no word with the question
  (`relevance.py`) must have all its required values grounded, or is answered in text
  the same way;
- with `Grounding.optional`, a kept call loses the optional arguments whose values are not
  grounded (`grounding.ungrounded_optional`); its held deltas are rewritten to match.

A call that may be dropped is held back whole (its `ToolCallDelta`s and whatever follows
them) until the parser completes it, so that a dropped call leaves nothing in the stream.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from farmhand.messages import StreamEvent, ToolCall, ToolCallDelta, ToolCallEvent
from farmhand.providers.grounding import (
    Evidence,
    further_call_grounded,
    grounded_share,
    ungrounded_optional,
)

# A `first_share` that only a first call with no grounded value at all falls below.
ANY_GROUNDED = 1e-9


@dataclass(frozen=True)
class Grounding:
    """What a turn's calls are checked against, and which checks apply."""

    evidence: Evidence
    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    extra: bool = False  # drop an ungrounded further call and stop the turn
    first_share: float | None = None  # answer instead when the first call's share is lower
    optional: bool = False  # leave out optional arguments whose values are not grounded
    # The question's topic words and each tool's (relevance.py): a first call of a tool
    # with none of them needs all its required values grounded. None: not judged.
    topic: frozenset[str] | None = None
    tool_words: Mapping[str, frozenset[str]] = field(default_factory=dict)


class CallsOfTurn:
    def __init__(self, grounding: Grounding | None = None) -> None:
        self.grounding = grounding
        self.kept: list[ToolCall] = []
        self.looping = False  # a repeated or ungrounded further call ended the turn
        self.answer_instead = False  # the first call was ungrounded: answer in text
        self.dropped: list[ToolCall] = []
        self._seen: set[str] = set()
        self._held: list[StreamEvent] = []

    @property
    def stopped(self) -> bool:
        """Nothing more of this turn is wanted: stop generating."""
        return self.looping or self.answer_instead

    def admit(self, events: Sequence[StreamEvent]) -> list[StreamEvent]:
        admitted: list[StreamEvent] = []
        for event in events:
            if self.stopped:
                break
            if isinstance(event, ToolCallEvent):
                held, self._held = self._held, []
                if self._keeps(event.call):
                    admitted += self._trimmed(held, event)
            elif self._held or (isinstance(event, ToolCallDelta) and self._judged_next()):
                self._held.append(event)
            else:
                admitted.append(event)
        return admitted

    def _judged_next(self) -> bool:
        """Whether the next call may be dropped or trimmed for its grounding (so is held
        back)."""
        rules = self.grounding
        if rules is None:
            return False
        if rules.optional:
            return True
        if self.kept:
            return rules.extra
        return rules.first_share is not None or rules.topic is not None

    def _trimmed(self, held: list[StreamEvent], event: ToolCallEvent) -> list[StreamEvent]:
        """The held events and the call, without the call's ungrounded optional arguments.
        The deltas the parser wrote are replaced by two that spell the trimmed call, so
        that a client reading deltas sees what is run."""
        rules, call = self.grounding, event.call
        if rules is None or not rules.optional or call.parse_error:
            return [*held, event]
        drop = ungrounded_optional(call, rules.schemas, rules.evidence)
        if not drop:
            return [*held, event]
        trimmed = dataclasses.replace(
            call, arguments={k: v for k, v in call.arguments.items() if k not in drop}
        )
        self.kept[-1] = trimmed
        out: list[StreamEvent] = []
        for piece in held:
            if not isinstance(piece, ToolCallDelta):
                out.append(piece)
            elif piece.name:  # the call's first delta: the whole trimmed call in its place
                out.append(dataclasses.replace(piece, arguments=""))
                out.append(ToolCallDelta(piece.index, arguments=trimmed.arguments_json()))
        return [*out, ToolCallEvent(trimmed)]

    def _keeps(self, call: ToolCall) -> bool:
        key = call.key()
        if key in self._seen:
            self.looping = True
            return False
        self._seen.add(key)
        rules = self.grounding
        if rules is not None and not call.parse_error:
            if self.kept and rules.extra:
                if not further_call_grounded(call, self.kept, rules.schemas, rules.evidence):
                    self.dropped.append(call)
                    self.looping = True
                    return False
            elif not self.kept and _off_topic_or_ungrounded(call, rules):
                self.dropped.append(call)
                self.answer_instead = True
                return False
        self.kept.append(call)
        return True


def _off_topic_or_ungrounded(first: ToolCall, rules: Grounding) -> bool:
    """Whether a turn's first call is to be answered in text instead: it has less than the
    share of its required values grounded that it needs, all of them for a tool off the
    question's topic. The topic alone decides nothing: "Is it warm in Lisbon?" shares no
    word with `get_weather`, but its call holds only what the user wrote."""
    bar = rules.first_share
    if rules.topic is not None and not rules.topic & rules.tool_words.get(first.name, frozenset()):
        bar = 1.0
    if bar is None:
        return False
    share = grounded_share(first, rules.schemas, rules.evidence)
    return share is not None and share < bar
