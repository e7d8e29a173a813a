"""Whether the tool a first call names has anything to do with the question.

Asked something no tool fits, a small model calls one anyway, often with numbers the
question did write (a triangle's base and height passed to a BMI calculator), so the
grounding of values (`grounding.py`) cannot tell. What it can tell is that the question and
the tool share no word: "the perimeter of a rectangle" has nothing in common with
`solve_quadratic_equation` and its description. Replayed on BFCL's whole slice, that turned
9 of the 16 irrelevance failures into answers and took no right call away; on BFCL's own
right answers it misses 9 of 1,000 tools the question names in other words ("100 euro in
USD" for `currency_conversion`), see bench/README.md.

Words are compared lower-cased, with common English endings cut (files/file,
listing/list, currencies/currency) and a list of English words that carry no topic left
out. A question judged must be in English: one written in another language shares no word
with tools described in English and would lose every call, so a question holding none of a
few English words ("the", "what", "how", ...) is not judged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from farmhand.tools.definition import ToolDefinition

_WORD = re.compile(r"[a-z]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_HISSING_ES = re.compile(r"(?:sh|ch|ss|x|z)es$")
# Words no topic rests on: articles, question words, and the verbs every tool description
# uses (get, find, calculate). A question's topic is what is left.
_EMPTY_WORDS = (
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "were",
    "be", "been", "by", "with", "as", "at", "from", "that", "this", "what", "which", "how",
    "who", "whom", "when", "where", "why", "many", "much", "i", "me", "my", "you", "your",
    "it", "its", "can", "could", "would", "should", "will", "do", "does", "did", "please",
    "find", "calculate", "compute", "get", "give", "tell", "show", "value", "values", "number",
    "numbers", "use", "using", "given", "if", "there", "their", "them", "then", "than", "into",
    "about", "also", "any", "all", "some", "each", "per", "have", "has", "had", "not", "no",
    "so", "such", "these", "those", "we", "our", "us", "he", "she", "his", "her", "they",
    "just", "want", "need", "know", "like", "let", "lets", "make", "one", "two", "three",
)  # fmt: skip
_EMPTY = frozenset(_EMPTY_WORDS)
# The English words that mark a question as English (see the module's text).
_ENGLISH_WORDS = (
    "the", "what", "how", "which", "who", "where", "why", "and", "with", "please",
    "find", "give", "show", "tell", "can", "could", "would", "is", "are",
)  # fmt: skip
_ENGLISH = frozenset(_ENGLISH_WORDS)


def question_words(text: str) -> frozenset[str] | None:
    """The topic words of an English question; None for a question not judged (not in
    English, or with no topic word at all)."""
    raw = set(_WORD.findall(text.lower()))
    if not raw & _ENGLISH:
        return None
    return _topic(raw) or None


def tool_words(tool: ToolDefinition) -> frozenset[str]:
    """The topic words of a tool: its name, description, parameter names and their
    descriptions."""
    fields = tool.parameters.get("properties")
    fields = fields if isinstance(fields, Mapping) else {}
    parts = [tool.name, tool.description, *map(str, fields)]
    parts += [_description(schema) for schema in fields.values()]
    return _topic(_WORD.findall(" ".join(_split_names(p) for p in parts).lower()))


def _description(schema: Any) -> str:
    return str(schema.get("description") or "") if isinstance(schema, Mapping) else ""


def _split_names(text: str) -> str:
    """list_directory, getCurrentTime, geo.distance: as separate words."""
    return _CAMEL.sub(" ", text).replace("_", " ").replace(".", " ")


def _topic(words: Any) -> frozenset[str]:
    return frozenset(_stem(w) for w in words if len(w) > 2 and w not in _EMPTY)


def _stem(word: str) -> str:
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"  # currencies, directories
    if _HISSING_ES.search(word):
        return word[:-2]  # matches, boxes, classes
    for ending in ("ings", "ing", "ed", "ly", "s"):
        if word.endswith(ending) and not word.endswith("ss") and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word
