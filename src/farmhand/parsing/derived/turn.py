"""The turn around the calls: reasoning tags, content markers, and the assistant's header.

Found from the probe renders (see `probes`): content with and without reasoning gives the
reasoning tags (a template that writes an empty block without reasoning, `<think></think>`,
has its start tag in what both renders share); the generation prompt and a rendered
assistant turn share the header, and what a prompt writes after it is the reply's start.
"""

from __future__ import annotations

from farmhand.parsing.derived import probes as p
from farmhand.parsing.derived.markers import is_special, shared_start, split, strip, tokens
from farmhand.parsing.scan import WHITESPACE


def after_header(text: str, starts: tuple[str, ...]) -> str:
    """`text` without the assistant header's tokens it starts with (a turn with calls can
    differ from one without right after the header)."""
    if not starts:
        return text
    at = 0
    for token in tokens(starts[0]):
        found = text.find(token, at)
        if found < 0 or strip(text[at:found]):
            break
        at = found + len(token)
    return text[at:]


def reasoning_tags(renders: p.Probes) -> tuple[str, str]:
    """The tags around reasoning, from content rendered with and without it; else from the
    generation prompt with thinking on and off."""
    pairs = (
        (renders.content, renders.reasoning),
        (renders.content, renders.reasoning_blocks),
        (renders.one_call, renders.call_reasoning),  # a template that writes it with calls only
    )
    for plain, rendered in pairs:
        if rendered is None or plain is None:
            continue
        diff = split(plain, rendered)
        at = diff.right.find(p.REASONING)
        if at >= 0:
            start, end = strip(diff.right[:at]), strip(diff.right[at + len(p.REASONING) :])
            before = tokens(diff.prefix)
            after = tokens(diff.right[at + len(p.REASONING) :] + diff.suffix)
            if not start and before and after and is_special(before[-1]):
                # Without reasoning the template writes an empty block (`<think></think>`),
                # so the start tag is in what the two renders share.
                empty = before[-1] + after[0]
                if empty in "".join(tokens(plain)):
                    start, end = before[-1], after[0]
            if end and _looks_like_tags(start, end):
                return start, end
    if renders.prompt_thinking is not None and renders.prompt_plain is not None:
        diff = split(renders.prompt_thinking, renders.prompt_plain)
        opened, closed = tokens(diff.prefix + diff.left), tokens(diff.right)
        if opened and len(closed) == 1 and is_special(opened[-1]) and is_special(closed[0]):
            return opened[-1], closed[0]
    return "", ""


def _looks_like_tags(start: str, end: str) -> bool:
    """Reasoning markers are short and hold nothing else a probe wrote (a template that
    prints the content blocks as data shows them to the model, no tags)."""
    return len(start) <= 40 and len(end) <= 40 and p.CONTENT not in start + end


def strip_reasoning(text: str, reasoning: tuple[str, str]) -> str:
    """`text` without an empty reasoning block at its start."""
    start, end = reasoning
    found = tokens(text)
    if start and end and found[:2] == (start, end):
        return text[text.index(end) + len(end) :]
    if end and found[:1] == (end,):
        return text[text.index(end) + len(end) :]
    return text


def content_markers(renders: p.Probes, header: str, reasoning: tuple[str, str]) -> tuple[str, str]:
    """Markers the template wraps content in (`<|START_RESPONSE|>...<|END_RESPONSE|>`)."""
    if renders.content is None or renders.history is None:
        return "", ""
    turn = renders.content[len(shared_start(renders.history, renders.content)) :]
    at = turn.find(p.CONTENT)
    if at < 0 or not turn.startswith(header):
        return "", ""
    start = strip(strip_reasoning(turn[len(header) : at], reasoning))
    # What follows the content and not the calls closes it (the turn's end follows both).
    tail = turn[at + len(p.CONTENT) :]
    if renders.one_call is not None:
        shared = split(renders.content, renders.one_call).suffix
        tail = tail[: len(tail) - len(shared)] if tail.endswith(shared) else tail
    end = (tokens(tail) or ("",))[0] if start else ""
    return start, end


def assistant_headers(renders: p.Probes, reasoning: tuple[str, str]) -> tuple[str, ...]:
    """The assistant turn's header: what the generation prompt shares with an assistant
    turn as rendered, cut before an opened reasoning tag. A prompt that opens and closes
    reasoning (thinking disabled) is a header too: nothing of it is the reply's."""
    history = renders.history
    prompt = renders.prompt_thinking
    if history is None or prompt is None:
        return ()
    generation = prompt[len(shared_start(history, prompt)) :]
    turn = renders.content or renders.empty or ""
    turn = turn[len(shared_start(history, turn)) :]
    header = shared_start(generation, turn)
    start, end = reasoning
    if start and start in header:
        header = header[: header.index(start)]
    header = header.rstrip(WHITESPACE)  # the prompt may end before the whitespace
    starts = [header] if header else []
    plain = renders.prompt_plain
    if plain is not None and end:
        plain_generation = plain[len(shared_start(history, plain)) :]
        if strip(plain_generation).endswith(end):
            starts.append(plain_generation)
    return tuple(starts)
