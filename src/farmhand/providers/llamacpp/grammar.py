"""Constrained decoding: a llama.cpp grammar (GBNF) that admits only valid tool calls.

The grammar speaks the Hermes wire format the default model's chat template teaches:

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

with one alternative per tool (the name as a literal, then that tool's own arguments schema),
so a call can only name a real tool and its arguments can only match that tool's schema.

What a turn may write (`grammar_spec`):

- tool_choice "required": calls only; a named function: calls of that tool only.
- "auto" on a model configured `constrained: true`: free text, then optionally calls
  (`root ::= text calls?`). The text may be anything that does not contain `<tool_call>` and
  does not open with `{`: the tag can only begin a call the grammar checks, and a reply
  opening with a JSON object is how small models write a bare, unchecked call. Everywhere
  else text is free (including `<`, `{` and code after the first character).
- parallel_tool_calls: one or more calls separated by a newline, else exactly one.
- "none" (or no tools): no grammar.

An auto turn's grammar is lazy (see `provider.py`): it wakes at the shapes a model
uses when it means a call (`call_triggers`), the call tag, and also the wrappers small models
write instead (issue 28): `<tools>` (the tag of Qwen's tool list) or a code fence followed by
the start of `{"name": "`, or a bare `{"name": "<offered tool>"`. From there the call is
sampled under the tool grammar, in the wrapper the model opened (`GrammarSpec.wrappers`),
where the Hermes parser reads it. A trigger matches only text the grammar accepts (llama.cpp
feeds the grammar the text from the trigger on, and a grammar that rejects it ends the
process), so each stops at a prefix of what the grammar writes.

Building never fails a turn: a tool whose schema the converter cannot express (or whose
rules llama.cpp rejects) gets a permissive JSON object for its arguments, its name still
constrained; that tool is listed in `ToolGrammar.fallbacks`. Grammars are cached per tool
set and choice (`GrammarCache`), and checked once by llama.cpp's own parser when a checker
is given (`llama_grammar_check`), since a grammar llama.cpp cannot parse must never reach the
sampler.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from farmhand.errors import ProviderError
from farmhand.providers.base import GenerationSettings, ResponseFormat
from farmhand.tools.definition import ToolDefinition, resolve_tool_name
from farmhand.tools.schema import map_subschemas, normalize_schema

log = logging.getLogger(__name__)

ROOT = "root"
OPEN_TAG = "<tool_call>"
CLOSE_TAG = "</tool_call>"
TOOLS_TAG = "<tools>"
FENCE = "```"
CALL_HEAD = '{"name": '
_WS = "[ \\t\\n]*"  # whitespace, as GBNF and as a regex
GrammarCheck = Callable[[str], bool]
"""Returns True if llama.cpp can parse this GBNF text (root rule `root`)."""

# JSON strings may not hold raw control characters (json.loads rejects them); the converter's
# own `char` rule lets them through.
_CHAR_RULE = (
    r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]'
    r" [0-9a-fA-F])"
)
_PERMISSIVE: dict[str, Any] = {"type": "object"}
# Type names normalize_schema leaves alone that hand-written configs still use.
_TYPE_ALIASES = {"map": "object", "double": "number"}
_ANY_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
_SHAPING_KEYS = {
    "type", "properties", "items", "prefixItems", "enum", "const", "anyOf", "oneOf", "allOf",
    "$ref", "pattern", "additionalProperties", "minLength", "maxLength",
}  # fmt: skip


@dataclass(frozen=True)
class GrammarSpec:
    """What one turn's output is constrained to."""

    tools: tuple[ToolDefinition, ...]
    calls_only: bool  # False: free text, then optionally calls
    parallel: bool
    answer: ResponseFormat | None = None  # set: the turn is this JSON answer, or calls
    # A call may also come in the wrappers a lazy grammar wakes at (`call_triggers`).
    wrappers: bool = False

    def key(self) -> tuple[Any, ...]:
        schemas = tuple(
            (t.name, json.dumps(t.parameters, sort_keys=True, default=str)) for t in self.tools
        )
        answer = json.dumps(self.answer, sort_keys=True, default=str)
        return (schemas, self.calls_only, self.parallel, answer, self.wrappers)


@dataclass(frozen=True)
class ToolGrammar:
    text: str  # GBNF, root rule `root`
    fallbacks: tuple[str, ...] = ()  # tools whose arguments are only "some JSON object"


def grammar_spec(
    tools: Sequence[ToolDefinition], settings: GenerationSettings, *, constrain_auto: bool
) -> GrammarSpec | None:
    """The constraint for a turn, or None to leave it free. With a `response_format` a
    turn that need not call is that JSON answer or (tools offered, choice auto) calls.

    Raises ProviderError when tool_choice names a function that is not among `tools`.
    """
    spec = _calls_spec(tools, settings, constrain_auto=constrain_auto)
    answer = settings.response_format
    if answer is None or (spec is not None and spec.calls_only):
        return spec
    callable_tools = () if settings.tool_choice.mode == "none" else tuple(tools)
    return GrammarSpec(callable_tools, True, settings.parallel_tool_calls, answer)


def _calls_spec(
    tools: Sequence[ToolDefinition], settings: GenerationSettings, *, constrain_auto: bool
) -> GrammarSpec | None:
    choice = settings.tool_choice
    if choice.mode == "none" or not tools:
        return None
    if choice.name is not None:
        return GrammarSpec((find_tool(tools, choice.name),), True, settings.parallel_tool_calls)
    if choice.mode == "required":
        return GrammarSpec(tuple(tools), True, settings.parallel_tool_calls)
    if constrain_auto:
        return GrammarSpec(tuple(tools), False, settings.parallel_tool_calls, wrappers=True)
    return None


def find_tool(tools: Sequence[ToolDefinition], name: str) -> ToolDefinition:
    """The tool `name` means (`resolve_tool_name`)."""
    resolved = resolve_tool_name(name, [t.name for t in tools])
    if resolved is not None:
        return next(t for t in tools if t.name == resolved)
    offered = ", ".join(t.name for t in tools)
    raise ProviderError(
        f"tool_choice names {name!r}, which is not one of the tools offered this turn"
        f" ({offered}); name one of them, or use tool_choice required"
    )


def build_tool_grammar(
    spec: GrammarSpec, check: GrammarCheck | None = None, *, loose: bool = False
) -> ToolGrammar:
    """The GBNF for `spec`. `check`, if given, vets each tool's rules (the caller checks the
    whole grammar). `loose`: every tool's arguments are just a JSON object."""
    rules: dict[str, str] = {}
    alternatives: list[str] = []
    fallbacks: list[str] = []
    if spec.answer is not None:
        answer_rule, answer_rules = answer_rules_for(spec.answer, check)
        rules.update(answer_rules)
        if not spec.tools:
            rules[ROOT] = answer_rule
            return ToolGrammar(_format(rules))
    for index, tool in enumerate(spec.tools):
        prefix = f"fh-args-{index}"
        args_rule, tool_rules = (None, {}) if loose else _arguments_rules(tool, prefix, check)
        if args_rule is None:
            fallbacks.append(tool.name)
            args_rule, tool_rules = _converted(_PERMISSIVE, prefix)
        if not _merge(rules, tool_rules):
            fallbacks.append(tool.name)
            args_rule, tool_rules = _converted(_PERMISSIVE, prefix)
            _merge(rules, tool_rules)
        # The object exactly as the template writes it: {"name": "...", "arguments": {...}}
        name = json.dumps(tool.name, ensure_ascii=False)
        head = gbnf_literal(CALL_HEAD + name + ', "arguments": ')
        rules[f"fh-call-{index}"] = f'{head} {args_rule} "}}"'
        alternatives.append(f"fh-call-{index}")
    open_tag, close_tag = gbnf_literal(OPEN_TAG + "\n"), gbnf_literal("\n" + CLOSE_TAG)
    rules["fh-call"] = f"{open_tag} ( {' | '.join(alternatives)} ) {close_tag}"
    if spec.wrappers and spec.calls_only:  # a lazy grammar's (see `call_triggers`)
        rules["fh-object"] = f"( {' | '.join(alternatives)} )"
        rules["fh-call"] = (
            f"{open_tag} fh-object {close_tag}"
            f" | {gbnf_literal(TOOLS_TAG)} {_WS} fh-object {_WS} {gbnf_literal('</tools>')}"
            f' | {gbnf_literal(FENCE)} "json"? "\\n" {_WS} fh-object "\\n" {gbnf_literal(FENCE)}'
            " | fh-object"
        )
    rules["fh-calls"] = 'fh-call ( "\\n" fh-call )*' if spec.parallel else "fh-call"
    if spec.answer is not None:
        rules[ROOT] = f"{answer_rule} | fh-calls"
    elif spec.calls_only:
        rules[ROOT] = "fh-calls"
    else:
        rules[ROOT] = "fh-text fh-calls?"
        rules.update(_text_rules(OPEN_TAG, "fh-text", forbid_first="{"))
    return ToolGrammar(_format(rules), tuple(dict.fromkeys(fallbacks)))


def call_triggers(spec: GrammarSpec) -> tuple[str, ...]:
    """The lazy grammar's triggers for `spec`: regexes over the text so far, matched whole,
    whose group starts the constrained part (see the module docstring)."""
    tagged = r"[\s\S]*?(" + re.escape(OPEN_TAG) + r")[\s\S]*"
    if not spec.wrappers:
        return (tagged,)
    # The object's brace at least: a fence alone may open code, and stays free.
    head = r"\{" + _prefix_pattern(CALL_HEAD[1:] + '"')
    wrapped = r"[\s\S]*?((?:" + re.escape(TOOLS_TAG) + "|```(?:json)?\\n)" + _WS + head + ")"
    names = "|".join(re.escape(json.dumps(t.name, ensure_ascii=False)) for t in spec.tools)
    bare = (
        r"[\s\S]*?(" + re.escape(CALL_HEAD) + f"(?:{names})"
        + _prefix_pattern(', "arguments": ') + ")"
    )  # fmt: skip
    return (tagged, wrapped, bare)


def _prefix_pattern(literal: str) -> str:
    """A regex for any prefix of `literal`, the empty one included."""
    pattern = ""
    for char in reversed(literal):
        pattern = f"(?:{re.escape(char)}{pattern})?"
    return pattern


class GrammarCache:
    """Built grammars by (tools, choice), least recently used dropped first.

    `get` returns None when no grammar could be built at all (never expected: the last
    resort is every tool's arguments as a plain object); the turn then runs unconstrained.
    """

    def __init__(self, check: GrammarCheck | None = None, maxsize: int = 32) -> None:
        self.check = check
        self.maxsize = maxsize
        self._built: OrderedDict[tuple[Any, ...], ToolGrammar | None] = OrderedDict()

    def get(self, spec: GrammarSpec) -> ToolGrammar | None:
        key = spec.key()
        if key in self._built:
            self._built.move_to_end(key)
            return self._built[key]
        grammar = self._build(spec)
        self._built[key] = grammar
        if len(self._built) > self.maxsize:
            self._built.popitem(last=False)
        return grammar

    def _build(self, spec: GrammarSpec) -> ToolGrammar | None:
        try:
            grammar = build_tool_grammar(spec, self.check)
            if self.check is None or self.check(grammar.text):
                if grammar.fallbacks:
                    log.warning(
                        "tool arguments not constrained (schema not convertible): %s",
                        ", ".join(grammar.fallbacks),
                    )
                return grammar
            grammar = build_tool_grammar(spec, loose=True)
            if self.check(grammar.text):
                names = ", ".join(grammar.fallbacks)
                log.warning("tool arguments not constrained (grammar rejected): %s", names)
                return grammar
        except Exception:  # a turn must never fail for want of a grammar
            log.exception("could not build a tool-call grammar; the turn runs unconstrained")
        return None


def answer_rules_for(
    answer: ResponseFormat, check: GrammarCheck | None = None
) -> tuple[str, dict[str, str]]:
    """The rule name and rules of an answer in `answer`'s shape: a JSON Schema, or any JSON
    object for "json". A schema the converter cannot express (or llama.cpp rejects) becomes
    any JSON value of its top-level type, logged: the answer is still JSON."""
    schema: Any = {"type": "object"} if answer == "json" else answer
    try:
        fixed = _for_converter(normalize_schema(schema))
        name, rules = _converted(fixed, "fh-answer")
        if check is None or check(_format({**rules, ROOT: name})):
            return name, rules
    except Exception as exc:  # the converter asserts and raises on what it cannot express
        log.debug("answer schema not convertible: %r", exc)
    log.warning("answer schema not convertible; the answer is constrained to JSON only")
    kind = schema.get("type") if isinstance(schema, dict) else None
    loose = {"type": kind} if kind in _ANY_TYPES else {"type": list(_ANY_TYPES)}
    return _converted(loose, "fh-answer")


def llama_grammar_check(llama: Any) -> GrammarCheck | None:
    """A checker that asks llama.cpp's grammar parser (about 0.1 ms for a small grammar)."""
    try:
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(llama.model)
    except (ImportError, AttributeError):
        return None

    def check(text: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, text.encode(), ROOT.encode())
        if not sampler:
            return False
        llama_cpp.llama_sampler_free(sampler)
        return True

    return check


def gbnf_literal(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def _arguments_rules(
    tool: ToolDefinition, prefix: str, check: GrammarCheck | None
) -> tuple[str | None, dict[str, str]]:
    """The arguments rule name and its rules, or (None, {}) if this schema cannot be used."""
    try:
        schema = normalize_arguments_schema(tool.parameters)
        name, rules = _converted(schema, prefix)
    except Exception as exc:  # the converter asserts and raises on what it cannot express
        log.debug("schema of %s not convertible: %r", tool.name, exc)
        return None, {}
    if check is not None and not check(_format({**rules, ROOT: name})):
        return None, {}
    return name, rules


def _converted(schema: Mapping[str, Any], prefix: str) -> tuple[str, dict[str, str]]:
    from llama_cpp import llama_grammar

    grammar_module: Any = llama_grammar  # untyped converter
    converter = grammar_module.SchemaConverter(
        prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    resolved = converter.resolve_refs(copy.deepcopy(dict(schema)), "schema")
    name = str(converter.visit(resolved, prefix))
    rules: dict[str, str] = {}
    for line in str(converter.format_grammar()).split("\n"):
        rule, sep, body = line.partition(" ::= ")
        if not sep:
            raise ValueError(f"unexpected converter output: {line!r}")
        rules[rule] = _CHAR_RULE if rule == "char" else body
    return name, rules


def _merge(into: dict[str, str], rules: Mapping[str, str]) -> bool:
    """Add `rules` unless one of them redefines an existing rule differently."""
    if any(into.get(name, body) != body for name, body in rules.items()):
        return False
    into.update(rules)
    return True


def _text_rules(literal: str, name: str, *, forbid_first: str) -> dict[str, str]:
    """Rules for text that never contains `literal` and does not open (after whitespace)
    with a character of `forbid_first`.

    A matcher of `literal` as rules: `{name}-k` is "the text so far ends with the first k
    characters of literal"; the last character is never allowed from the last state. Every
    rule reference ends its alternative, so llama.cpp's stack does not grow with the text.
    `literal` must not repeat its first character (true of `<tool_call>`).
    """
    first = literal[0]
    rules: dict[str, str] = {}
    for k, char in enumerate(literal):
        moves: list[str] = []
        if k + 1 < len(literal):
            moves.append(f"{gbnf_literal(char)} {name}-{k + 1}")
        if k > 0:
            moves.append(f"{gbnf_literal(first)} {name}-1")
        moves.append(f"{_not_in(char + first)} {name}-0")
        rules[f"{name}-{k}"] = f"( {' | '.join(moves)} )?"
    rules[name] = (
        f"[ \\t\\n]* ( {_not_in(forbid_first + first + ' ' + chr(9) + chr(10))} {name}-0"
        f" | {gbnf_literal(first)} {name}-1 )?"
    )
    return rules


def _not_in(chars: str) -> str:
    escapes = {"\\": "\\\\", "]": "\\]", "^": "\\^", "-": "\\-", "\n": "\\n", "\t": "\\t"}
    unique = "".join(dict.fromkeys(chars))
    return "[^" + "".join(escapes.get(c, c) for c in unique) + "]"


def _format(rules: Mapping[str, str]) -> str:
    ordered = sorted(rules.items(), key=lambda kv: (kv[0] != ROOT, kv[0]))
    return "\n".join(f"{name} ::= {body}" for name, body in ordered) + "\n"


def normalize_arguments_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """`tools.schema.normalize_schema` (refs inlined, null keywords dropped, JSON type
    names), then what llama.cpp's converter reads differently from JSON Schema: `true`
    subschemas and `{}` (any value; the converter would allow only objects), a nested
    `{"type": "object", "properties": {}}` (any object; the converter would allow only `{}`),
    unanchored patterns (a search; the converter matches the whole string), `nullable`.

    Raises ValueError for a schema that is not an object schema, or holds a `false` schema.
    """
    if not isinstance(schema, Mapping) or not _SHAPING_KEYS & set(schema):
        return dict(_PERMISSIVE)
    fixed = _for_converter(normalize_schema(schema), top=True)
    kind = fixed.get("type")
    if kind not in (None, "object"):
        raise ValueError(f"arguments schema has type {kind!r}, not object")
    return {"type": "object", **fixed}


def _for_converter(node: Any, *, top: bool = False) -> Any:
    if node is True or node == {}:
        return {"type": list(_ANY_TYPES)}
    if node is False:
        raise ValueError("a `false` schema admits nothing")
    if not isinstance(node, Mapping):
        return node
    closed = node.get("additionalProperties") is False  # the converter's own "no others"
    out = map_subschemas(
        {k: v for k, v in node.items() if not (closed and k == "additionalProperties")},
        _for_converter,
    )
    if closed:
        out["additionalProperties"] = False
    if "type" in out:
        out["type"] = _type_name(out["type"])
    if out.pop("nullable", False) is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    pattern = out.get("pattern")
    if isinstance(pattern, str) and not (pattern.startswith("^") and pattern.endswith("$")):
        del out["pattern"]  # a search, not a whole-string match: the converter cannot say it
    open_object = out.get("properties") == {} and out.get("additionalProperties") is None
    if open_object and not top:  # top level: `{}` is a tool without arguments, keep it closed
        del out["properties"]
    if not _SHAPING_KEYS & set(out):
        out["type"] = list(_ANY_TYPES)  # only annotations: any JSON value
    return out


def _type_name(kind: Any) -> Any:
    if isinstance(kind, list):
        return [_type_name(k) for k in kind]
    if isinstance(kind, str):
        if kind.lower() == "any":
            return list(_ANY_TYPES)
        return _TYPE_ALIASES.get(kind.lower(), kind.lower())
    return kind
