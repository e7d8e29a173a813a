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


def _text(value: object) -> str:
    """A value as the XML-ish formats write it: strings bare, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def _xml_params(i: int) -> str:
    return "".join(f"<parameter={k}>\n{_text(v)}\n</parameter>\n" for k, v in _args(i).items())


def _think(open_tag: str, close_tag: str) -> str:
    return open_tag + PROSE + close_tag + PROSE


def _qwen3_coder(i: int) -> str:
    return f"{PROSE}<tool_call>\n<function=tool_{i % 3}>\n{_xml_params(i)}</function>\n</tool_call>"


def _seed_oss(i: int) -> str:
    call = f"<function=tool_{i % 3}>\n{_xml_params(i)}</function>"
    return f"{PROSE}<seed:tool_call>\n{call}\n</seed:tool_call>"


def _glm(i: int) -> str:
    pairs = "".join(
        f"<arg_key>{k}</arg_key>\n<arg_value>{_text(v)}</arg_value>\n" for k, v in _args(i).items()
    )
    return f"{PROSE}<tool_call>tool_{i % 3}\n{pairs}</tool_call>"


def _minimax(i: int) -> str:
    params = "".join(f'<parameter name="{k}">{_text(v)}</parameter>\n' for k, v in _args(i).items())
    invoke = f'<invoke name="tool_{i % 3}">\n{params}</invoke>'
    return f"{PROSE}<minimax:tool_call>\n{invoke}\n</minimax:tool_call>"


def _dsml(i: int) -> str:
    params = "".join(
        f'<｜DSML｜parameter name="{k}" string="{str(isinstance(v, str)).lower()}">'
        f"{_text(v)}</｜DSML｜parameter>\n"
        for k, v in _args(i).items()
    )
    invoke = f'<｜DSML｜invoke name="tool_{i % 3}">\n{params}</｜DSML｜invoke>'
    return f"{PROSE}<｜DSML｜function_calls>\n{invoke}\n</｜DSML｜function_calls>"


def _harmony(i: int) -> str:
    header = f"<|channel|>commentary to=functions.tool_{i % 3} <|constrain|>json<|message|>"
    return (
        f"<|channel|>analysis<|message|>{PROSE}<|end|><|start|>assistant"
        f"{header}{json.dumps(_args(i))}<|call|><|start|>assistant"
    )


def _kimi(i: int) -> str:
    head = f"<|tool_call_begin|>functions.tool_{i % 3}:{i}<|tool_call_argument_begin|>"
    return f"{head}{json.dumps(_args(i))}<|tool_call_end|>"


def _deepseek_v3_1(i: int) -> str:
    return (
        f"<｜tool▁call▁begin｜>tool_{i % 3}<｜tool▁sep｜>{json.dumps(_args(i))}<｜tool▁call▁end｜>"
    )


def _olmo3(i: int) -> str:
    return f"tool_{i % 3}(" + ", ".join(f"{k}={v!r}" for k, v in _args(i).items()) + ")\n"


def _hunyuan(i: int) -> str:
    return f"<tool_call>tool_{i % 3}\n```json\n{json.dumps(_args(i))}\n```</tool_call>\n"


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
    "auto": lambda n: _repeat(
        lambda i: (
            f'{PROSE}<calls><invoke tool="tool_{i % 3}">'
            + "".join(
                f'<arg key="{k}">{v if isinstance(v, str) else json.dumps(v)}</arg>'
                for k, v in _args(i).items()
            )
            + "</invoke></calls>"
        ),
        n,
    ),
    # Helper A's families.
    "qwen3_coder": lambda n: _think("<think>", "</think>") + _repeat(_qwen3_coder, n),
    "seed_oss": lambda n: _think("<seed:think>", "</seed:think>") + _repeat(_seed_oss, n),
    "glm_4_5": lambda n: _think("<think>", "</think>") + _repeat(_glm, n),
    "minimax_m2": lambda n: _think("<think>", "</think>") + _repeat(_minimax, n),
    "deepseek_v3_2": lambda n: _think("<think>", "</think>") + _repeat(_dsml, n),
    "gpt_oss": lambda n: _repeat(_harmony, n) + "<|channel|>final<|message|>" + PROSE,
    "kimi_k2": lambda n: (
        _think("<think>", "</think>")
        + "<|tool_calls_section_begin|>"
        + _repeat(_kimi, n)
        + "<|tool_calls_section_end|>"
    ),
    "deepseek_v3_1": lambda n: (
        _think("<think>", "</think>")
        + "<｜tool▁calls▁begin｜>"
        + _repeat(_deepseek_v3_1, n)
        + "<｜tool▁calls▁end｜>"
    ),
    "nemotron_v2": lambda n: (
        _think("<think>", "</think>") + "<TOOLCALL>[" + _calls_list(n, _call_json) + "]</TOOLCALL>"
    ),
    "olmo3": lambda n: "<function_calls>\n" + _repeat(_olmo3, n) + "</function_calls>",
    "xlam": lambda n: "[" + _calls_list(n, _call_json) + "]",
    "hunyuan": lambda n: (
        (_think("<think>", "</think>") + "<answer><tool_calls>" + _repeat(_hunyuan, n))
        + "</tool_calls></answer>"
    ),
    "longcat": lambda n: _repeat(
        lambda i: f"{PROSE}<longcat_tool_call>{_call_json(i)}</longcat_tool_call>\n", n
    ),
}

# `auto` reads a format no family module knows, with the parser derived from its template
# (an invented one: a tag per argument).
AUTO_TEMPLATE = """
{%- for message in messages -%}
<|{{ message.role }}|>
{%- if message.tool_calls -%}<calls>
{%- for call in message.tool_calls -%}<invoke tool="{{ call.function.name }}">
{%- for k, v in call.function.arguments.items() -%}
<arg key="{{ k }}">{{ v if v is string else v | tojson }}</arg>
{%- endfor -%}</invoke>
{%- endfor -%}</calls>
{%- else -%}{{ message.content }}{%- endif -%}<|end|>
{%- endfor -%}
{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}
"""


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
    template = AUTO_TEMPLATE if family == "auto" else None
    parser = parser_for(template, None, None, family=family, options=options)
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
