"""The parser contract, the base the family parsers share, and reading call objects."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal, Protocol

from farmhand.messages import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    new_call_id,
)
from farmhand.parsing.scan import WHITESPACE, JsonScanner, feed_until, find_near, held_prefix
from farmhand.parsing.thinking import ThinkingSplitter
from farmhand.tools.definition import SEPARATOR

ReasoningFormat = Literal["none", "auto", "deepseek"]
_SLICE = 2048
_NON_WHITESPACE = re.compile(r"[^ \t\r\n]")


class PartialArguments(Protocol):
    def compact_from(self, start: int) -> str: ...


@dataclass(frozen=True)
class ParserOptions:
    """How to read one model turn (the knobs llama.cpp's parsers take, named as there)."""

    known_names: frozenset[str] | None = None
    """The tools offered; None accepts any name (how llama.cpp's own parsers behave)."""
    parse_tool_calls: bool = True
    """False: everything that is not reasoning is text, even if it looks like a call."""
    parallel_tool_calls: bool = True
    """False: only the first call of the turn is kept."""
    reasoning_format: ReasoningFormat = "auto"
    """none: reasoning stays in the text as written; auto/deepseek: split out."""
    reasoning_in_content: bool = False
    """Keep split-out reasoning in the text, wrapped in <think></think>."""
    thinking_forced_open: bool = False
    """The prompt already opened the reasoning block (it ends with `<think>`)."""
    tool_schemas: Mapping[str, Mapping[str, Any]] | None = None
    """Tool name -> its parameters' JSON Schema, for formats that write argument values
    as bare text (`<parameter=n>5</parameter>`): the schema says 5 is an integer."""


class FamilyParser:
    """What every family parser shares: the reasoning split, and emitting events.

    A family implements `_advance(final)`, which consumes the reply text in `self.buf` and
    calls `_text`, `_call_started`, `_call_progress`, `_call_done`. Text that may still turn
    out to be call markup is held in `self.buf` until it is certain. By default `_advance`
    runs the family's modes (see `_run_modes`).
    """

    family: ClassVar[str] = ""
    think_open: ClassVar[str] = "<think>"
    think_close: ClassVar[str] = "</think>"
    # Markers that end reasoning without its closing tag (they are the reply's).
    think_interrupts: ClassVar[tuple[str, ...]] = ()
    # The model may open reasoning again after the prompt did: that tag is skipped.
    think_reopen_skipped: ClassVar[bool] = False
    # The template's header that starts the assistant's turn: the prompt's text after it is
    # part of the reply (see registry.prefill_of).
    assistant_start: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def reply_start(cls, prompt: str) -> int | None:
        """Where the reply starts in `prompt`: after its last assistant header (None if the
        prompt has none of this family's headers)."""
        found = [prompt.rfind(s) + len(s) for s in cls.assistant_start if s in prompt]
        return max(found) if found else None

    @classmethod
    def prefill_of(cls, prompt: str) -> str:
        """What the prompt already wrote of the reply, which the parser is fed first: the
        text after the assistant header (e.g. `<think>\n` that opens reasoning). Without a
        header it knows, a family still takes a reasoning block the prompt ends by opening.
        A lone closing tag (the non-thinking prompt of DeepSeek or GLM ends with `</think>`)
        closes nothing the reply has, so it is not part of the reply."""
        start = cls.reply_start(prompt)
        if start is None:
            start = opened_thinking(prompt, cls.think_open, cls.think_close)
        return "" if start is None else cls.trimmed_prefill(prompt[start:])

    @classmethod
    def trimmed_prefill(cls, prefill: str) -> str:
        """`prefill` without a closing tag it starts with (it closes nothing the reply has)."""
        head = prefill.lstrip(WHITESPACE)
        if cls.think_close and head.startswith(cls.think_close):
            return head[len(cls.think_close) :].lstrip(WHITESPACE)
        return prefill

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        options = options or ParserOptions()
        if known_names is not None:
            options = replace(options, known_names=frozenset(known_names))
        self.options = options
        self.buf = ""
        self._events: list[StreamEvent] = []
        self._thinking = (
            None
            if self.options.reasoning_format == "none"
            else ThinkingSplitter(
                self.think_open,
                self.think_close,
                forced_open=self.options.thinking_forced_open,
                in_content=self.options.reasoning_in_content,
                interrupts=self.think_interrupts,
                repeated_open_skipped=self.think_reopen_skipped,
            )
        )
        self._index = 0  # index of the call being written
        self._announced = False  # a ToolCallDelta opened the current call
        self._call_id = ""  # the id that delta gave the current call
        self._args_sent: list[str] = []  # the argument pieces sent for the current call
        self._args_len = 0
        self._finished = False

    def feed(self, chunk: str) -> list[StreamEvent]:
        # A big chunk (a whole output) goes in slices: a parser that consumes its buffer
        # from the front copies what is left each time, which is cheap only for short buffers.
        for start in range(0, len(chunk), _SLICE):
            self._route(chunk[start : start + _SLICE], final=False)
        return self._take()

    def finish(self) -> list[StreamEvent]:
        if not self._finished:
            self._finished = True
            self._route("", final=True)
        return self._take()

    def _route(self, chunk: str, final: bool) -> None:
        if self._thinking is not None:
            reasoning, chunk = self._thinking.split(chunk, final)
            for event in reasoning:
                self._add(event)
        self.buf += chunk
        if not self.options.parse_tool_calls:
            self._text(self.buf)
            self.buf = ""
            return
        self._advance(final)

    def _advance(self, final: bool) -> None:
        self._run_modes(final)

    # A family written as modes keeps in `_mode` which of its `_in_<mode>` methods reads on.
    _mode: str

    def _run_modes(self, final: bool) -> None:
        """Read mode by mode: each `_in_<mode>(final)` consumes what it can and sets the next
        mode, and returns False when it needs more input."""
        while getattr(self, "_in_" + self._mode)(final):
            pass

    def _in_after(self, final: bool) -> bool:
        """Mode "after": past a call (or a run of calls) whitespace belongs to no one, and
        what follows is text again."""
        self.buf = self.buf.lstrip(WHITESPACE)
        if not self.buf:
            return False
        self._mode = "text"
        return True

    def _take(self) -> list[StreamEvent]:
        """The events of this chunk, each run of text (or of reasoning) joined into one."""
        events: list[StreamEvent] = []
        run: list[str] = []  # the texts of the run that events[-1] stands for
        for event in self._events:
            if isinstance(event, TextDelta | ReasoningDelta):
                if events and type(events[-1]) is type(event):
                    run.append(event.text)
                    continue
                _join_run(events, run)
                run = [event.text]
            else:
                _join_run(events, run)
                run = []
            events.append(event)
        _join_run(events, run)
        self._events = []
        return events

    # What a family reports.

    def _text(self, text: str) -> None:
        if text:
            self._add(TextDelta(text))

    def _call_started(self, name: str, call_id: str | None = None) -> None:
        """The name of the call being written is known. A call whose format carries no id
        gets one here, so a client that streams the call sees the id the call keeps."""
        if not self._announced and self._accepting():
            self._announced = True
            self._args_sent = []
            self._args_len = 0
            self._call_id = call_id or new_call_id()
            name = self._as_offered(name)
            self._add(ToolCallDelta(self._index, name=name, id=self._call_id))

    def _call_progress(self, arguments: str | PartialArguments) -> None:
        """The arguments written so far: compact JSON text, possibly cut off, or a scanner
        that gives the new part (cheaper: no rebuilding the whole text on every chunk)."""
        if not self._announced:
            return
        if isinstance(arguments, str):
            if not arguments.startswith("".join(self._args_sent)):
                return
            piece = arguments[self._args_len :]
        else:
            piece = arguments.compact_from(self._args_len)
        if piece:
            self._args_sent.append(piece)
            self._args_len += len(piece)
            self._add(ToolCallDelta(self._index, arguments=piece))

    def _call_done(self, call: ToolCall) -> None:
        if self._accepting():
            if self._announced and call.id.startswith("call_"):  # farmhand's, not the model's
                call = replace(call, id=self._call_id)
            if (name := self._as_offered(call.name)) != call.name:
                call = replace(call, name=name)
            self._add(ToolCallEvent(call))
            self._index += 1
        self._announced = False

    def _as_offered(self, name: str) -> str:
        """The offered tool's own name for a name written with other case or separators."""
        known = self.options.known_names
        return (offered_name(name, known) or name) if known else name

    def _call_dropped(self) -> None:
        """What looked like a call was not one (its text is reported by the family)."""
        self._announced = False

    def _accepting(self) -> bool:
        return self.options.parallel_tool_calls or self._index == 0

    def _add(self, event: StreamEvent) -> None:
        self._events.append(event)


def opened_thinking(prompt: str, open_tag: str, close_tag: str) -> int | None:
    """Where the reasoning block the prompt ends with starts (`<think>\n`, or the
    `<think></think>` of a non-thinking prompt); None when it ends otherwise."""
    at = prompt.rfind(open_tag) if open_tag else -1
    if at < 0:
        return None
    rest = prompt[at + len(open_tag) :].strip(WHITESPACE)
    return at if rest in ("", close_tag) else None


def _join_run(events: list[StreamEvent], run: list[str]) -> None:
    if len(run) > 1:
        last = events[-1]
        events[-1] = (
            TextDelta("".join(run)) if isinstance(last, TextDelta) else ReasoningDelta("".join(run))
        )


class CursorParser(FamilyParser):
    """A family parser that reads `self.buf` through a cursor, `self._at`, and drops what it
    has read once per chunk: consuming from the front of a string copies all the rest, which
    would make one big chunk (a whole output) quadratic in its number of tokens."""

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._at = 0  # where the unread text starts in self.buf
        self._searched = 0  # how far past the cursor `_read_to_stop` already looked

    def _advance(self, final: bool) -> None:
        self._run_modes(final)
        self.buf = self.buf[self._at :]
        self._at = 0

    def _skip_whitespace(self) -> bool:
        """Step over whitespace; False when nothing else is there (yet)."""
        found = _NON_WHITESPACE.search(self.buf, self._at)
        self._at = found.start() if found else len(self.buf)
        return found is not None

    def _starts(self, marker: str) -> bool:
        return self.buf.startswith(marker, self._at)

    def _may_become(self, marker: str) -> bool:
        """The unread text is the start of `marker` (or nothing)."""
        rest = len(self.buf) - self._at
        return rest < len(marker) and marker.startswith(self.buf[self._at :])

    def _step_over(self, marker: str, final: bool) -> bool:
        """Past whitespace, step over `marker` if it is there (an optional closing token);
        False while what is there may still grow into it."""
        if not self._skip_whitespace() and not final:
            return False
        if self._starts(marker):
            self._at += len(marker)
        elif self._may_become(marker) and not final:
            return False
        return True

    def _between_calls(self, final: bool, *nexts: tuple[str, str]) -> bool:
        """Between calls of a block: past whitespace, the first (token, mode) of `nexts`
        whose token is there, or, when none is and none can still arrive, text again."""
        if not self._skip_whitespace():
            return False
        for token, mode in nexts:
            if self._starts(token):
                self._at += len(token)
                self._mode = mode
                return True
        if not final and any(self._may_become(token) for token, _ in nexts):
            return False
        self._mode = "text"
        return True

    def _certain(self, markers: Sequence[str], final: bool) -> int:
        """Where the text that cannot be the start of a marker ends."""
        if final:
            return len(self.buf)
        return max(self._at, len(self.buf) - held_prefix(self.buf, markers))

    def _text_to(self, end: int) -> None:
        self._text(self.buf[self._at : end])
        self._at = end

    def _text_to_call(self, markers: Sequence[str], final: bool) -> str | None:
        """Like `_text_to_marker`, for markers that open calls: the whitespace before the
        marker goes with the call, so it is held until what follows is known."""
        found = find_near(self.buf, markers, self._at)
        if found is None:
            end = self._certain(markers, final)
            self._text_to(end if final else self._before_space(end))
            return None
        at, marker = found
        self._text_to(self._before_space(at))
        self._at = at + len(marker)
        return marker

    def _before_space(self, end: int) -> int:
        """Where the text before `end` ends, whitespace left out."""
        while end > self._at and self.buf[end - 1] in WHITESPACE:
            end -= 1
        return end

    def _text_to_marker(self, markers: Sequence[str], final: bool) -> str | None:
        """Report the text up to the first of `markers` and step past that marker: which
        one it was, or None while there is none (the text that cannot start one is reported)."""
        found = find_near(self.buf, markers, self._at)
        if found is None:
            self._text_to(self._certain(markers, final))
            return None
        index, marker = found
        self._text_to(index)
        self._at += len(marker)
        return marker

    def _read_to_stop(self, stops: Sequence[str], final: bool) -> str | None:
        """The text from the cursor to the first of `stops` (to the end, once final), read
        past; None while no stop is there yet. What was searched is not searched again."""
        found = find_near(self.buf, stops, self._at + self._searched)
        if found is None and not final:
            self._searched = self._certain(stops, final) - self._at
            return None
        end = found[0] if found else len(self.buf)
        body = self.buf[self._at : end]
        self._at = end
        self._searched = 0
        return body

    def _json_arguments(
        self, args: JsonScanner, stops: Sequence[str], final: bool
    ) -> Literal["whole", "cut", "broken", "wait"]:
        """Feeds a call's JSON arguments from the cursor, never past the first of `stops`,
        and reports them as they grow: "whole" (the JSON ended; cursor past it), "cut" (a
        stop or the end of the output came inside it), "broken" (not JSON; cursor where it
        went wrong), "wait" (more text is needed)."""
        end, fed, stopped = feed_until(args, self.buf, stops, final, self._at)
        if args.invalid:
            self._at = fed
            return "broken"
        self._at = fed if end is None else end
        self._call_progress(args)
        if end is not None:
            return "whole"
        return "cut" if stopped or final else "wait"

    def _in_after(self, final: bool) -> bool:
        """Mode "after" (see FamilyParser), read through the cursor."""
        if not self._skip_whitespace():
            return False
        self._mode = "text"
        return True


@dataclass
class ParsedCall:
    name: str
    arguments: dict[str, Any] | None = None
    arguments_text: str = ""
    id: str = ""
    partial: bool = False
    parse_error: str | None = None


@dataclass
class ParsedMessage:
    """A turn assembled from parser events: what `farmhand parse` prints."""

    content: str = ""
    reasoning_content: str = ""
    tool_calls: list[ParsedCall] = field(default_factory=list)

    @classmethod
    def from_events(cls, events: Iterable[StreamEvent], *, partial: bool = False) -> ParsedMessage:
        """With `partial`, calls still being written are included (as llama.cpp shows a
        partial parse); otherwise only complete calls."""
        message = cls()
        pending: dict[int, ParsedCall] = {}
        done: list[ParsedCall] = []
        for event in events:
            if isinstance(event, TextDelta):
                message.content += event.text
            elif isinstance(event, ReasoningDelta):
                message.reasoning_content += event.text
            elif isinstance(event, ToolCallDelta):
                model_id = "" if event.id.startswith("call_") else event.id
                call = pending.setdefault(
                    event.index, ParsedCall(event.name, id=model_id, partial=True)
                )
                call.arguments_text += event.arguments
            elif isinstance(event, ToolCallEvent):
                c = event.call
                pending.pop(len(done), None)
                done.append(
                    ParsedCall(
                        c.name,
                        c.arguments,
                        c.arguments_json(),
                        "" if c.id.startswith("call_") else c.id,
                        parse_error=c.parse_error,
                    )
                )
        message.tool_calls = done + (list(pending.values()) if partial else [])
        return message

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "reasoning_content": self.reasoning_content,
            "tool_calls": [
                {
                    "name": c.name,
                    "arguments": c.arguments if not c.partial else c.arguments_text,
                    **({"id": c.id} if c.id else {}),
                    **({"partial": True} if c.partial else {}),
                    **({"error": c.parse_error} if c.parse_error else {}),
                }
                for c in self.tool_calls
            ],
        }


def call_from_object(obj: Any) -> ToolCall | None:
    """Read `{"name": ..., "arguments": {...}}` (or OpenAI's nested `function` form).

    Returns None when the object does not look like a call at all; a call whose arguments
    cannot be read comes back with `parse_error` set, so the model can be told.
    """
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        return None
    allowed = {"name", "arguments", "parameters", "id", "type"}
    if set(obj) - allowed:
        return None  # an object with other keys is data the model is showing, not a call
    arguments = obj.get("arguments", obj.get("parameters", {}))
    call_id = obj.get("id")
    extra = {"id": call_id} if isinstance(call_id, str) and call_id else {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            error = f"the arguments of {name} are not valid JSON ({why}): {arguments[:200]}"
            return ToolCall(name, {}, parse_error=error, **extra)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return ToolCall(
            name,
            {},
            parse_error=(
                f"the arguments of {name} must be a JSON object, got {type(arguments).__name__}"
            ),
            **extra,
        )
    return ToolCall(name, arguments, **extra)


def is_known_tool(name: str, known_names: Collection[str]) -> bool:
    """True if `name` is a tool, a tool's name without its `server:` prefix, or a tool's
    name written with other case or separators (`offered_name`)."""
    if name in known_names or any(k.endswith(SEPARATOR + name) for k in known_names):
        return True
    return offered_name(name, known_names) is not None


def offered_name(name: str, known_names: Collection[str]) -> str | None:
    """The offered tool a written name means when it differs only in case and separators:
    small models write `math.roots.quadratic` for `math_roots.quadratic`. None when no tool,
    or more than one, squashes to the same letters and digits."""
    if name in known_names:
        return name
    wanted = _squashed(name)
    matches = [k for k in known_names if _squashed(k) == wanted]
    return matches[0] if len(matches) == 1 and wanted else None


def _squashed(name: str) -> str:
    return "".join(c for c in name.casefold() if c.isalnum())
