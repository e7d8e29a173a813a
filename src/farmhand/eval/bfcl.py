"""BFCL (the Berkeley Function Calling Leaderboard) as a suite: `bfcl:CATEGORY[:N],...`.

Data and judging come from the `bfcl-eval` package (`pip install --no-deps
bfcl-eval==2026.3.23`): its question files and possible answers, and its AST checker
(`ast_checker`), which decides pass or fail exactly as the leaderboard does. Categories, all
single-turn Python (Java, JavaScript and the multi-turn, memory and web-search categories
need BFCL's own executors and are not offered):

    simple_python  multiple  parallel  parallel_multiple  irrelevance
    live_simple  live_multiple  live_parallel  live_parallel_multiple  live_irrelevance
    slice = simple_python:100, multiple:50, parallel:50, irrelevance:50

(`CATEGORY:N` takes the first N items.) Irrelevance categories pass when the model makes
no call, as BFCL scores them.

Tools are offered as BFCL offers them to function-calling models: its parameter types mapped
to JSON Schema (`GORILLA_TO_OPENAPI`; float becomes number with "This is a float type
value." added), the Python hint added to each description. Names keep their dots: farmhand
maps names a backend rejects to safe ones and back, so the checker sees the names BFCL uses.

Why `--no-deps`: bfcl-eval depends on every vendor SDK and on sentence-transformers (torch)
for its generation side; the data and the AST checker need none of it. The checker module
imports BFCL's model registry (and so those SDKs) only to ask whether a model renamed dots;
when that registry cannot be imported, `_checker` gives it one that answers "no".
"""

from __future__ import annotations

import copy
import importlib
import json
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from typing import Any

from farmhand.errors import ConfigError
from farmhand.eval.cases import EvalCase, ExpectedCall, Suite
from farmhand.messages import Message, ToolCall
from farmhand.tools.definition import ToolDefinition

PACKAGE = "bfcl_eval"
INSTALL = "pip install --no-deps bfcl-eval==2026.3.23"
CATEGORIES = (
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance",
)  # fmt: skip
PRESETS = {"slice": "simple_python:100,multiple:50,parallel:50,irrelevance:50"}
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
FLOAT_NOTE = " This is a float type value."
MODEL_NAME = "farmhand"  # what the checker is told; farmhand keeps dotted names as they are

Judge = Callable[[Sequence[ToolCall]], str | None]


def load_bfcl(spec: str) -> Suite:
    """`spec` is what follows `bfcl:`: categories with optional counts, or a preset."""
    spec = PRESETS.get(spec.strip(), spec)
    cases: list[EvalCase] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        category, _, count = part.partition(":")
        if category not in CATEGORIES:
            raise ConfigError(
                f"bfcl category {category!r} is not offered; use {', '.join(CATEGORIES)}"
                f" or a preset ({', '.join(PRESETS)})"
            )
        if count and not count.isdigit():
            raise ConfigError(f"bfcl:{part}: the count after ':' must be a number")
        cases += _category_cases(category, int(count) if count else None)
    if not cases:
        raise ConfigError("bfcl: name at least one category, e.g. bfcl:simple_python:20")
    return Suite(f"bfcl:{spec}", tuple(cases))


def _category_cases(category: str, count: int | None) -> list[EvalCase]:
    questions = _read_lines(f"BFCL_v4_{category}.json")[:count]
    irrelevant = "irrelevance" in category
    answers = {} if irrelevant else {a["id"]: a for a in _read_lines(_answers_file(category))}
    checker = None if irrelevant else _checker()
    cases = []
    for entry in questions:
        functions = entry["function"]
        truth = [] if irrelevant else answers[entry["id"]]["ground_truth"]
        cases.append(
            EvalCase(
                id=entry["id"],
                category=category,
                messages=tuple(_messages(entry["question"][0])),
                tools=tuple(_tool(f) for f in functions),
                expected=tuple(_expected(call) for call in truth),
                judge=None if checker is None else _judge(checker, functions, truth, category),
            )
        )
    return cases


def _answers_file(category: str) -> str:
    return f"possible_answer/BFCL_v4_{category}.json"


def _read_lines(name: str) -> list[dict[str, Any]]:
    try:
        data = resources.files(PACKAGE).joinpath("data", *name.split("/"))
        text = data.read_text("utf-8")
    except ModuleNotFoundError:
        raise ConfigError(f"bfcl suites need the bfcl-eval package: {INSTALL}") from None
    except FileNotFoundError:
        raise ConfigError(
            f"bfcl-eval has no data file {name}; farmhand reads the layout of {INSTALL}"
        ) from None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _messages(turn: Sequence[Mapping[str, Any]]) -> list[Message]:
    return [Message(m["role"], str(m.get("content") or "")) for m in turn]


def _tool(function: Mapping[str, Any]) -> ToolDefinition:
    parameters = copy.deepcopy(dict(function.get("parameters") or {}))
    parameters["type"] = "object"
    parameters["properties"] = {
        key: _schema(value) for key, value in (parameters.get("properties") or {}).items()
    }
    description = str(function.get("description") or "") + PYTHON_HINT
    return ToolDefinition(str(function["name"]), description, parameters)


def _schema(node: Any) -> Any:
    """A BFCL parameter (types like dict, float, tuple, any) as JSON Schema."""
    if not isinstance(node, dict):
        return node
    types_to_schema = _bfcl("constants.type_mappings").GORILLA_TO_OPENAPI
    out = dict(node)
    kind = out.get("type")
    if kind == "float":
        out["format"] = "float"
        out["description"] = str(out.get("description") or "") + FLOAT_NOTE
    out["type"] = types_to_schema.get(kind, "string") if isinstance(kind, str) else "string"
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _schema(v) for k, v in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = _schema(out["items"])
    return out


def _expected(call: Mapping[str, Mapping[str, list[Any]]]) -> ExpectedCall:
    """BFCL's possible answer (`""` among the values: the argument may be left out)."""
    ((name, arguments),) = call.items()
    acceptable = {
        key: tuple(None if v == "" else v for v in values) for key, values in arguments.items()
    }
    return ExpectedCall(name, acceptable)


def _judge(
    checker: Callable[..., dict[str, Any]],
    functions: list[dict[str, Any]],
    truth: list[dict[str, Any]],
    category: str,
) -> Judge:
    python = _bfcl("constants.enums").Language.PYTHON

    def judge(calls: Sequence[ToolCall]) -> str | None:
        output = [{call.name: call.arguments} for call in calls]
        verdict = checker(copy.deepcopy(functions), output, truth, python, category, MODEL_NAME)
        if verdict.get("valid"):
            return None
        errors = "; ".join(str(e) for e in verdict.get("error") or [])
        return f"{verdict.get('error_type', 'invalid')}: {errors}"

    return judge


def _checker() -> Callable[..., dict[str, Any]]:
    """bfcl-eval's `ast_checker`, importable without the SDKs its model registry pulls in."""
    registry = f"{PACKAGE}.constants.model_config"
    try:
        importlib.import_module(registry)
    except ImportError:
        # The checker reads MODEL_CONFIG_MAPPING[model].underscore_to_dot, nothing else.
        stand_in = types.ModuleType(registry)
        stand_in.MODEL_CONFIG_MAPPING = _NoRenames()  # type: ignore[attr-defined]
        sys.modules[registry] = stand_in
    checker: Callable[..., dict[str, Any]] = _bfcl("eval_checker.ast_eval.ast_checker").ast_checker
    return checker


def _bfcl(module: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{module}")


class _NoRenames(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return types.SimpleNamespace(underscore_to_dot=False)
