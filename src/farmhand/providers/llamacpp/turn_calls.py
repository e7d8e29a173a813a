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
- with `Grounding.repair`, a call that misses its schema the way small models do is
  repaired first (`tools/repair.py`: a number for a string, several values packed into one
  call), possibly into several calls, each then judged as if the model had written it;
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
from farmhand.providers.llamacpp.grounding import (
    Evidence,
    further_call_grounded,
    grounded_share,
    ungrounded_optional,
)
from farmhand.tools.repair import repaired

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
    repair: bool = False  # repair calls that miss their schema (tools/repair.py)
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
        self._shift = 0  # calls a repair added: the parser's later indexes move up by this

    @property
    def stopped(self) -> bool:
        """Nothing more of this turn is wanted: stop generating."""
        return self.looping or self.answer_instead

    def admit(self, events: Sequence[StreamEvent]) -> list[StreamEvent]:
        admitted: list[StreamEvent] = []
        for event in events:
            if self.stopped:
                break
            if isinstance(event, ToolCallDelta) and self._shift:
                event = dataclasses.replace(event, index=event.index + self._shift)
            if isinstance(event, ToolCallEvent):
                held, self._held = self._held, []
                admitted += self._calls_of(held, event)
            elif self._held or (isinstance(event, ToolCallDelta) and self._judged_next()):
                self._held.append(event)
            else:
                admitted.append(event)
        return admitted

    def admit_last(
        self, events: Sequence[StreamEvent], *, out_of_tokens: bool
    ) -> list[StreamEvent]:
        """The parser's last events (what `finish()` gave). When the token limit cut off a
        run of calls, its unfinished last call is dropped and the calls before it stand:
        the model ran out of room, it did not write a broken call. Only when calls are held
        back whole until judged (`_judged_next`), so nothing of it reached the stream."""
        if out_of_tokens and self.kept and self._judged_next():
            cut = [e for e in events if isinstance(e, ToolCallEvent) and e.call.parse_error]
            if cut:
                self._held = []
                self.dropped += [e.call for e in cut]
                events = [e for e in events if e not in cut]
        return self.admit(events)

    def _judged_next(self) -> bool:
        """Whether the next call may be dropped, repaired or trimmed (so is held back)."""
        rules = self.grounding
        if rules is None:
            return False
        if rules.optional or rules.repair:
            return True
        if self.kept:
            return rules.extra
        return rules.first_share is not None or rules.topic is not None

    def _calls_of(self, held: list[StreamEvent], event: ToolCallEvent) -> list[StreamEvent]:
        """What the stream gets for a call the parser completed: the call as written, or
        the calls it is repaired into (`tools/repair.py`) and trimmed to, each judged. A
        changed call's deltas are replaced by two that spell what is run, so that a client
        reading deltas sees that; later calls' deltas move up past any added by a repair."""
        rules, written = self.grounding, event.call
        calls = [written]
        if rules is not None and rules.repair:
            calls = repaired(written, rules.schemas.get(written.name))
            self._shift += len(calls) - 1
        opening = next((e for e in held if isinstance(e, ToolCallDelta) and e.name), None)
        out: list[StreamEvent] = []
        for number, call in enumerate(calls):
            if self.stopped or not self._keeps(call):
                continue
            final = self._trimmed(call)
            self.kept[-1] = final
            if final is written:
                return [*held, event]  # as the model wrote it: its deltas stand
            if opening is not None:
                index, call_id = opening.index + number, opening.id if number == 0 else final.id
                out.append(ToolCallDelta(index, name=opening.name, id=call_id))
                out.append(ToolCallDelta(index, arguments=final.arguments_json()))
            out.append(ToolCallEvent(final))
        if not out:
            return []  # dropped: nothing of it reaches the stream
        return [*(e for e in held if not isinstance(e, ToolCallDelta)), *out]

    def _trimmed(self, call: ToolCall) -> ToolCall:
        """The call without its ungrounded optional arguments (itself when none)."""
        rules = self.grounding
        if rules is None or not rules.optional or call.parse_error:
            return call
        drop = ungrounded_optional(call, rules.schemas, rules.evidence)
        if not drop:
            return call
        return dataclasses.replace(
            call, arguments={k: v for k, v in call.arguments.items() if k not in drop}
        )

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
