"""Calls in the wrong wrapper (issue 28): what reading them changes, on the real model's text.

The default model writes each case's first turn once (greedy, the chat template's prompt,
no grammar, no call gate: what it writes when nothing steers it); that text is then read by
this checkout's parser and by a baseline checkout's (`--baseline-src`, in a subprocess of
this script, so each side imports its own farmhand), and each side's calls are scored as
`farmhand eval` scores them. Same raw text, same run: the difference is the parsing alone.

    PYTHONPATH=/tmp/bfcl:src .venv/bin/python bench/wrong_wrappers.py \\
        "bfcl:live_simple:8,live_irrelevance:4" --baseline-src /tmp/base/src --json out.json

`SUITE` is anything `farmhand eval` takes (`builtin`, a JSONL file, `bfcl:...`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any


def generate(
    suite_spec: str, limit: int | None, max_tokens: int, keep: Path | None = None
) -> dict[str, Any]:
    """The model's raw first turn for each case, and the template it was prompted with
    (written to `keep` after each case, so a run cut short keeps what it wrote)."""
    import anyio

    from farmhand.eval.suite import load_suite
    from farmhand.messages import TextDelta
    from farmhand.models.assemble import ensure_model
    from farmhand.models.catalog import DEFAULT_MODEL
    from farmhand.providers.base import GenerationSettings
    from farmhand.providers.llamacpp import LlamaCppProvider
    from farmhand.providers.llamacpp.load import load_llama

    suite = load_suite(suite_spec).select(limit=limit)
    provider = LlamaCppProvider(load_llama(ensure_model(DEFAULT_MODEL)), model_name=DEFAULT_MODEL)
    settings = GenerationSettings(temperature=0, seed=0, max_tokens=max_tokens)
    raws: list[dict[str, Any]] = []

    async def one(prompt: str) -> str:
        pieces = [e async for e in provider.complete(prompt, settings)]
        return "".join(e.text for e in pieces if isinstance(e, TextDelta))

    started = time.perf_counter()
    for case in suite.cases:
        prompt = provider.render(list(case.messages), list(case.tools))
        raws.append({"id": case.id, "raw": anyio.run(one, prompt)})
        if keep is not None:
            keep.write_text(json.dumps({"template": provider.chat_template, "raws": raws}))
    seconds = time.perf_counter() - started
    return {"template": provider.chat_template, "raws": raws, "seconds": seconds}


def verdicts(suite_spec: str, limit: int | None, recorded: dict[str, Any]) -> dict[str, Any]:
    """Each case's raw text read by the farmhand this process imports, and scored."""
    from farmhand.eval.scoring import TurnOutput, score
    from farmhand.eval.suite import load_suite
    from farmhand.messages import ToolCallEvent
    from farmhand.parsing.base import ParserOptions
    from farmhand.parsing.registry import detect_family, parser_for

    template = recorded["template"]
    family = detect_family(template)
    raw_of = {r["id"]: r["raw"] for r in recorded["raws"]}
    out: dict[str, Any] = {}
    for case in load_suite(suite_spec).select(limit=limit).cases:
        if case.id not in raw_of:
            continue  # a run cut short: judged as far as it got
        options = ParserOptions(tool_schemas={t.name: t.parameters for t in case.tools})
        names = [t.name for t in case.tools]
        parser = parser_for(template, None, names, family=family, options=options)
        events = parser.feed(raw_of[case.id]) + parser.finish()
        calls = tuple(e.call for e in events if isinstance(e, ToolCallEvent))
        result = score(case, TurnOutput(calls=calls))
        out[case.id] = {"category": case.category, "passed": result.passed, "reason": result.reason}
    return out


def summary(items: dict[str, Any]) -> dict[str, str]:
    passed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for item in items.values():
        total[item["category"]] += 1
        passed[item["category"]] += item["passed"]
    return {c: f"{passed[c]}/{total[c]}" for c in sorted(total)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite")
    parser.add_argument("--limit", type=int, default=None, help="cases per category")
    parser.add_argument("--max-tokens", type=int, default=192)
    parser.add_argument("--baseline-src", type=Path, help="the baseline's src directory")
    parser.add_argument("--json", type=Path, help="write raws and verdicts here")
    parser.add_argument("--verdicts-of", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.verdicts_of:  # the baseline side: read recorded raws, print verdicts
        recorded = json.loads(args.verdicts_of.read_text())
        print(json.dumps(verdicts(args.suite, args.limit, recorded)))
        return
    raws = Path(f"{args.json or 'wrong_wrappers'}.raws")
    recorded = generate(args.suite, args.limit, args.max_tokens, raws)
    after = verdicts(args.suite, args.limit, recorded)
    result: dict[str, Any] = {"suite": args.suite, **recorded, "after": after}
    if args.baseline_src:
        raws.write_text(json.dumps(recorded))
        paths = [str(args.baseline_src), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        command = [sys.executable, __file__, args.suite, "--verdicts-of", str(raws)]
        if args.limit:
            command += ["--limit", str(args.limit)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        result["before"] = json.loads(done.stdout)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False))
    per_item = recorded["seconds"] / max(1, len(recorded["raws"]))
    print(f"{len(recorded['raws'])} cases, {per_item:.1f} s of model time each")
    if "before" in result:
        print("baseline:", summary(result["before"]))
        changed = [i for i in after if after[i]["passed"] != result["before"][i]["passed"]]
        print("changed:", {i: after[i]["passed"] for i in changed})
    print("this checkout:", summary(after))


if __name__ == "__main__":
    main()
