"""Streaming tool-call parsing vs parsing the whole output, per family.

Claim: every family parser is linear in the length of the output however it is fed, so a
model streaming its reply one character at a time costs a constant factor over parsing the
finished reply, not a factor that grows with the reply.

For each family a ~50 KB output in that family's own format (prose, reasoning where the family
has it, many calls, long arguments) is parsed:
- baseline: whole, in one `feed` plus `finish`;
- streamed: fed one character at a time (the worst case), and 4 characters at a time (about
  one token, as a model streams).
Printed: the times, the ratios streamed/whole, and the linearity check: 1-character time at
50 KB over 1-character time at 25 KB (2.0 is linear; a quadratic parser shows ~4). The
streamed/whole ratio is the fixed cost of one `feed` call (a few microseconds of Python)
times the number of calls; the linearity column is the claim.

Run: .venv/bin/python bench/parse_streaming.py [--size 50000] [--runs 3]
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.registry import FAMILIES, parser_for

PROSE = "Here is what I found {so far}: the list [a, b] has 2 items; next I check the rest. "


def _args(i: int) -> dict[str, object]:
    return {"path": f"/data/file_{i}.txt", "limit": i, "pattern": "*.py", "deep": {"x": [1, 2]}}


def _call_json(i: int, key: str = "arguments") -> str:
    return json.dumps({"name": f"tool_{i % 3}", key: _args(i)})


def _repeat(unit: Callable[[int], str], size: int) -> str:
    parts: list[str] = []
    total, i = 0, 0
    while total < size:
        piece = unit(i)
        parts.append(piece)
        total += len(piece)
        i += 1
    return "".join(parts)


def _calls_list(size: int, unit: Callable[[int], str]) -> str:
    return ", ".join(_repeat(lambda i: unit(i) + "\0", size).rstrip("\0").split("\0"))


SAMPLES: dict[str, Callable[[int], str]] = {
    "hermes_2_pro": lambda n: _repeat(
        lambda i: f"{PROSE}<tool_call>\n{_call_json(i)}\n</tool_call>\n", n
    ),
    "llama3_x": lambda n: "; ".join(
        _repeat(lambda i: _call_json(i, "parameters") + "\0", n).rstrip("\0").split("\0")
    ),
    "llama3_x_builtin_tools": lambda n: (
        "<|python_tag|>python.call(code="
        + json.dumps(_repeat(lambda i: f"print({i}, '{{x}}')\n", n))
        + ")"
    ),
    "mistral_nemo": lambda n: (
        "Calling.[TOOL_CALLS]["
        + _calls_list(n, lambda i: json.dumps({**json.loads(_call_json(i)), "id": f"abc{i:06d}"}))
        + "]"
    ),
    "functionary_v3_1_llama3_1": lambda n: _repeat(
        lambda i: f"{PROSE}<function=tool_{i % 3}>{json.dumps(_args(i))}</function>", n
    ),
    "functionary_v3_2": lambda n: (
        "all\n" + PROSE + _repeat(lambda i: f">>>tool_{i % 3}\n{json.dumps(_args(i))}\n", n)
    ),
    "firefunction_v2": lambda n: PROSE + " functools[" + _calls_list(n, _call_json) + "]",
    "command_r7b": lambda n: (
        "<|START_THINKING|>"
        + PROSE * (n // (4 * len(PROSE)))
        + "<|END_THINKING|><|START_ACTION|>["
        + _calls_list(
            n,
            lambda i: json.dumps(
                {"tool_call_id": str(i), "tool_name": f"tool_{i % 3}", "parameters": _args(i)}
            ),
        )
        + "]<|END_ACTION|>"
    ),
    "deepseek_r1": lambda n: (
        "<think>"
        + PROSE * (n // (4 * len(PROSE)))
        + "</think>"
        + "<｜tool▁calls▁begin｜>"
        + _repeat(
            lambda i: (
                f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>tool_{i % 3}\n```json\n"
                f"{json.dumps(_args(i))}\n```<｜tool▁call▁end｜>"
            ),
            n,
        )
        + "<｜tool▁calls▁end｜>"
    ),
    "generic": lambda n: json.dumps(
        {"tool_calls": json.loads("[" + _calls_list(n, _call_json) + "]")}
    ),
}


def _python_call(i: int) -> str:
    arguments = f"path='/data/file_{i}.txt', limit={i}, pattern=\"*.py\", deep={{'x': [1, 2]}}"
    return f"tool_{i % 3}({arguments})"


def _gemma_call(i: int, start: str, end: str, q: str) -> str:
    body = f"path:{q}/data/file_{i}.txt{q},limit:{i},pattern:{q}*.py{q},deep:{{x:[1,2]}}"
    return f"{PROSE}{start}call:tool_{i % 3}{{{body}}}{end}"


def _think(n: int) -> str:
    return PROSE * (n // (4 * len(PROSE)))


# The families added for issue 14 (helper B's).
SAMPLES.update(
    {
        "lfm2": lambda n: (
            "<think>"
            + _think(n)
            + "</think>"
            + PROSE
            + "<|tool_call_start|>["
            + _calls_list(n, _python_call)
            + "]<|tool_call_end|>"
        ),
        "llama4_pythonic": lambda n: "[" + _calls_list(n, _python_call) + "]",
        "gemma4": lambda n: _repeat(
            lambda i: _gemma_call(i, "<|tool_call>", "<tool_call|>", '<|"|>'), n
        ),
        "function_gemma": lambda n: _repeat(
            lambda i: _gemma_call(i, "<start_function_call>", "<end_function_call>", "<escape>"),
            n,
        ),
        "reka": SAMPLES["hermes_2_pro"],
        "granite4": SAMPLES["hermes_2_pro"],
        "magistral": lambda n: (
            "[THINK]"
            + _think(n)
            + "[/THINK]"
            + _repeat(
                lambda i: f"[TOOL_CALLS]tool_{i % 3}[CALL_ID]{i:09d}[ARGS]{json.dumps(_args(i))}", n
            )
        ),
        "command_r_plus": lambda n: (
            PROSE
            + "\nAction:\n```json\n["
            + _calls_list(
                n, lambda i: json.dumps({"tool_name": f"tool_{i % 3}", "parameters": _args(i)})
            )
            + "]\n```"
        ),
        "minicpm": lambda n: _repeat(
            lambda i: (
                f'{PROSE}<function name="tool_{i % 3}"><param name="path">/data/file_{i}.txt'
                f'</param><param name="code"><![CDATA[if a < b:\n    print("</param>")]]>'
                "</param></function>"
            ),
            n,
        ),
        "granite": lambda n: (
            "<think>"
            + _think(n)
            + "</think><response>"
            + PROSE
            + "</response><|tool_call|>["
            + _calls_list(n, _call_json)
            + "]"
        ),
        "gigachat": lambda n: _repeat(
            lambda i: f"{PROSE}<|message_sep|>\n\nfunction call<|role_sep|>\n{_call_json(i)}", n
        ),
        "apriel": lambda n: (
            _think(n)
            + "[BEGIN FINAL RESPONSE]\n<tool_calls>["
            + _calls_list(n, _call_json)
            + "]</tool_calls>"
        ),
        "apertus": lambda n: (
            "<|inner_prefix|>"
            + _think(n)
            + "<|inner_suffix|><|tools_prefix|>["
            + _calls_list(n, lambda i: json.dumps({f"tool_{i % 3}": _args(i)}))
            + "]<|tools_suffix|>"
        ),
        "gemma": SAMPLES["generic"],
        "phi4_mini": lambda n: PROSE + "functools[" + _calls_list(n, _call_json) + "]",
        "internlm": lambda n: _repeat(
            lambda i: (
                f"{PROSE}<|action_start|><|plugin|>\n{_call_json(i, 'parameters')}<|action_end|>"
            ),
            n,
        ),
        "jamba": lambda n: PROSE + "<tool_calls>[" + _calls_list(n, _call_json) + "]</tool_calls>",
        "ernie4_5": lambda n: (
            _think(n)
            + "</think>\n"
            + _repeat(lambda i: f"<tool_call>\n{_call_json(i)}\n</tool_call>\n", n)
        ),
    }
)


def _parse(family: str, text: str, step: int) -> tuple[float, ParsedMessage]:
    options = ParserOptions(reasoning_format="deepseek")
    parser = parser_for(None, None, None, family=family, options=options)
    start = time.perf_counter()
    events = []
    for i in range(0, len(text), step):
        events += parser.feed(text[i : i + step])
    events += parser.finish()
    elapsed = time.perf_counter() - start
    return elapsed, ParsedMessage.from_events(events)


def _median(family: str, text: str, step: int, runs: int) -> float:
    return statistics.median(_parse(family, text, step)[0] for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'family':28} {'KB':>5} {'calls':>5} {'whole ms':>9} {'1-char ms':>10}"
        f" {'ratio':>6} {'50KB/25KB':>9}"
    )
    for family in FAMILIES:
        text = SAMPLES[family](args.size)
        half = SAMPLES[family](args.size // 2)
        _, whole_message = _parse(family, text, len(text))
        _, streamed_message = _parse(family, text, 1)
        assert streamed_message == whole_message, f"{family}: streamed parse differs"
        whole = _median(family, text, len(text), args.runs)
        streamed = _median(family, text, 1, args.runs)
        tokens = _median(family, text, 4, args.runs)
        streamed_half = _median(family, half, 1, args.runs)
        print(
            f"{family:26} {len(text) / 1000:3.0f} {len(whole_message.tool_calls):5d}"
            f" {whole * 1000:8.1f} {streamed * 1000:9.1f} {streamed / whole:6.2f}"
            f" {tokens * 1000:9.1f} {tokens / whole:6.2f} {streamed / streamed_half:9.2f}"
        )


if __name__ == "__main__":
    main()
