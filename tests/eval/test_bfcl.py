"""BFCL through bfcl-eval: loading its data, converting its tools, judging with its checker.

A small stand-in `bfcl_eval` package (same layout, two questions per category) tests the
adapter anywhere; the last test runs the real package's AST checker when it is installed
(`pip install --no-deps bfcl-eval==2026.3.23`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from farmhand.errors import ConfigError
from farmhand.eval.suite import load_suite
from farmhand.messages import ToolCall

FUNCTION = {
    "name": "math.hypot",
    "description": "Length of the hypotenuse.",
    "parameters": {
        "type": "dict",
        "properties": {
            "x": {"type": "integer", "description": "x"},
            "scale": {"type": "float", "description": "factor"},
            "points": {"type": "array", "items": {"type": "tuple"}},
            "opts": {"type": "dict", "properties": {"mode": {"type": "any"}}},
        },
        "required": ["x"],
    },
}
CHECKER = """
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING

def ast_checker(functions, output, truth, language, category, model_name):
    MODEL_CONFIG_MAPPING[model_name].underscore_to_dot  # read as the real checker does
    ok = len(output) == len(truth) and all(
        list(o) == list(t) and all(o[n].get("x") == t[n]["x"][0] for n in o)
        for o, t in zip(output, truth)
    )
    return {"valid": ok, "error": [] if ok else ["wrong x"], "error_type": "stand_in:x"}
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "bfcl_eval"
    write(root / "__init__.py", "")
    write(root / "constants" / "__init__.py", "")
    write(root / "constants" / "type_mappings.py",
          "GORILLA_TO_OPENAPI = {'integer': 'integer', 'float': 'number', 'dict': 'object',"
          " 'array': 'array', 'tuple': 'array', 'any': 'string'}\n")  # fmt: skip
    write(root / "constants" / "enums.py",
          "from enum import Enum\nclass Language(Enum):\n    PYTHON = 'python'\n")  # fmt: skip
    # The real registry imports every vendor SDK; this one fails the same way.
    write(root / "constants" / "model_config.py", "import a_vendor_sdk_that_is_missing\n")
    write(root / "eval_checker" / "__init__.py", "")
    write(root / "eval_checker" / "ast_eval" / "__init__.py", "")
    write(root / "eval_checker" / "ast_eval" / "ast_checker.py", CHECKER)
    question = {"role": "user", "content": "Hypotenuse of 3 and 4?"}
    for category in ("simple_python", "irrelevance"):
        rows = [
            {"id": f"{category}_{i}", "question": [[question]], "function": [FUNCTION]}
            for i in range(2)
        ]
        write(root / "data" / f"BFCL_v4_{category}.json", "\n".join(map(json.dumps, rows)))
    answers = [
        {
            "id": f"simple_python_{i}",
            "ground_truth": [{"math.hypot": {"x": [3], "scale": ["", 1.0]}}],
        }
        for i in range(2)
    ]
    write(root / "data" / "possible_answer" / "BFCL_v4_simple_python.json",
          "\n".join(map(json.dumps, answers)))  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("bfcl_eval")]:
        monkeypatch.delitem(sys.modules, name)
    yield root
    for name in [m for m in sys.modules if m.startswith("bfcl_eval")]:
        del sys.modules[name]


def test_categories_counts_tools_and_answers(stand_in: Path) -> None:
    suite = load_suite("bfcl:simple_python:1,irrelevance")
    assert suite.name == "bfcl:simple_python:1,irrelevance"
    assert [(c.id, c.category) for c in suite.cases] == [
        ("simple_python_0", "simple_python"),
        ("irrelevance_0", "irrelevance"),
        ("irrelevance_1", "irrelevance"),
    ]
    simple, irrelevant = suite.cases[0], suite.cases[1]
    (tool,) = simple.tools
    assert tool.name == "math.hypot"  # dots kept
    assert tool.description.endswith("Note that the provided function is in Python 3 syntax.")
    properties = tool.parameters["properties"]
    assert tool.parameters["type"] == "object"
    assert properties["x"]["type"] == "integer"
    assert properties["scale"] == {
        "type": "number",
        "format": "float",
        "description": "factor This is a float type value.",
    }
    assert properties["points"]["items"]["type"] == "array"
    assert properties["opts"]["properties"]["mode"]["type"] == "string"
    assert simple.expected[0].arguments == {"x": (3,), "scale": (None, 1.0)}
    assert [m.content for m in simple.messages] == ["Hypotenuse of 3 and 4?"]
    assert irrelevant.expected == () and irrelevant.judge is None


def test_the_package_checker_judges(stand_in: Path) -> None:
    (case,) = load_suite("bfcl:simple_python:1").cases
    assert case.judge is not None
    assert case.judge([ToolCall("math.hypot", {"x": 3})]) is None
    assert case.judge([ToolCall("math.hypot", {"x": 5})]) == "stand_in:x: wrong x"


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("bfcl:java", "not offered"),
        ("bfcl:simple_python:many", "must be a number"),
        ("bfcl:", "at least one category"),
    ],
)
def test_bad_specs(stand_in: Path, spec: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        load_suite(spec)


def test_missing_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)  # import fails as if not installed
    with pytest.raises(ConfigError, match="pip install --no-deps bfcl-eval"):
        load_suite("bfcl:simple_python:1")


def test_real_bfcl_checker_on_its_own_first_questions() -> None:
    pytest.importorskip("bfcl_eval")
    suite = load_suite("bfcl:simple_python:1,parallel:1")
    simple, parallel = suite.cases
    assert simple.judge is not None and parallel.judge is not None
    right = [ToolCall("calculate_triangle_area", {"base": 10, "height": 5})]
    assert simple.judge(right) is None
    assert "height" in (
        simple.judge([ToolCall("calculate_triangle_area", {"base": 10, "height": 6})]) or ""
    )
    swapped = [
        ToolCall("spotify.play", {"artist": "Maroon 5", "duration": 15}),
        ToolCall("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
    ]
    assert parallel.judge(swapped) is None
    assert "wrong_count" in (parallel.judge(swapped[:1]) or "")
