"""The calls of one model turn, as the embedded provider admits them.

Small models do not stop: they write the same call over and over, or sweep on, one call per
value nobody asked for, until the token limit. `CallsOfTurn` sits between the parser and the
caller and decides, call by call:

- a call already written this turn is dropped, and the turn stops (`looping`);
- with `Grounding.extra`, a further call that is not grounded in the conversation
  (`grounding.further_call_grounded`) is dropped, and the turn stops too;
- with `Grounding.first_share`, a turn whose first call has less than that share of its
  required values grounded (`grounding.grounded_share`) is to be answered in text instead
  (`answer_instead`): the provider regenerates it with calls banned.

A call that may be dropped is held back whole (its `ToolCallDelta`s and whatever follows
them) until the parser completes it, so that a dropped call leaves nothing in the stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from farmhand.messages import StreamEvent, ToolCall, ToolCallDelta, ToolCallEvent
from farmhand.providers.grounding import Evidence, further_call_grounded, grounded_share

# A `first_share` that only a first call with no grounded value at all falls below.
ANY_GROUNDED = 1e-9


@dataclass(frozen=True)
class Grounding:
    """What a turn's calls are checked against, and which checks apply."""

    evidence: Evidence
    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    extra: bool = False  # drop an ungrounded further call and stop the turn
    first_share: float | None = None  # answer instead when the first call's share is lower


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
                    admitted += [*held, event]
            elif self._held or (isinstance(event, ToolCallDelta) and self._judged_next()):
                self._held.append(event)
            else:
                admitted.append(event)
        return admitted

    def _judged_next(self) -> bool:
        """Whether the next call may be dropped for its grounding (so is held back)."""
        rules = self.grounding
        if rules is None:
            return False
        return rules.extra if self.kept else rules.first_share is not None

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
            elif not self.kept and rules.first_share is not None:
                share = grounded_share(call, rules.schemas, rules.evidence)
                if share is not None and share < rules.first_share:
                    self.dropped.append(call)
                    self.answer_instead = True
                    return False
        self.kept.append(call)
        return True
