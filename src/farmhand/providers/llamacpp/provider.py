"""The embedded provider: a GGUF model run in-process by llama-cpp-python.

Every use of the llama context runs on the model's engine thread (`engine.py`): a turn
waits in the model's queue, then asks for one token at a time, so a request that leaves is
dropped at the next token and no two requests ever share the context. Rendering and
tokenizing the prompt (seconds for a prompt of megabytes) run in a worker thread, and the
prompt's length is checked against the context before the turn queues. The model's own chat
template (or its `chat_template` override) renders the prompt (`turn_template.py`) and a
tool-call parser picked for that template reads the calls back out of the text.

Tokens come from farmhand's own sampling loop (`sampling.py`), not `Llama.generate`,
so that a grammar can be lazy. Constrained decoding (`grammar.py`): a turn with
tool_choice required or a named function samples under a grammar that admits only calls of
the offered tools with schema-valid arguments, in the Hermes `<tool_call>` format; with
the profile's `constrained` an auto turn gets the same grammar lazily: free text is not constrained
(and costs nothing), and once the model writes `<tool_call>` the call must be valid. That
format is what the grammar writes, so it applies only to chat templates that use it, or when
the caller asks for it explicitly with `grammar_tools` (the prompt-based strategy, which
describes the tools in the system prompt instead of rendering them through the template).

With `prefix_cache` the KV state of the prompt's head (system prompt and tool definitions)
is saved to disk and restored by the next process (`prefix_cache.py`); within a process the
context keeps whatever prefix the next turn shares, as llama-cpp-python does.
"""

from __future__ import annotations

import codecs
import dataclasses
import logging
import math
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any

import anyio
import anyio.to_thread

from farmhand.errors import ModelError, RequestError
from farmhand.messages import Finish, Message, StreamEvent, TextDelta, ToolCallEvent, Usage
from farmhand.parsing.base import ParserOptions
from farmhand.parsing.registry import parser_for, prefill_of
from farmhand.prompting.guidance import answer_turn, results_to_answer
from farmhand.providers.base import GenerationSettings
from farmhand.providers.llamacpp.batch import PROMPT_CHUNK, BatchedContext
from farmhand.providers.llamacpp.call_gate import TurnGate, turn_gate
from farmhand.providers.llamacpp.engine import Engine, EngineStatus, Turn
from farmhand.providers.llamacpp.generic_tools import calls_schema
from farmhand.providers.llamacpp.grammar import (
    OPEN_TAG,
    GrammarCache,
    GrammarSpec,
    call_triggers,
    grammar_spec,
    llama_grammar_check,
)
from farmhand.providers.llamacpp.grounding import evidence_of
from farmhand.providers.llamacpp.load import return_freed_memory
from farmhand.providers.llamacpp.prefix_cache import PrefixCache, head_length
from farmhand.providers.llamacpp.profile import EmbeddedProfile
from farmhand.providers.llamacpp.relevance import question_words, tool_words
from farmhand.providers.llamacpp.sampling import (
    READING,
    TOP_K,
    TOP_P,
    LazyTrigger,
    Processed,
    Sampling,
    Steer,
    sample_tokens,
)
from farmhand.providers.llamacpp.siblings import unused_siblings
from farmhand.providers.llamacpp.stop_strings import StopStrings
from farmhand.providers.llamacpp.turn_calls import CallsOfTurn, Grounding
from farmhand.providers.llamacpp.turn_template import TurnTemplate
from farmhand.providers.llamacpp.vocab import (
    end_of_generation_check,
    end_tokens,
    opener_tokens,
    single_token,
    special_tokens,
)
from farmhand.providers.prompt_based import with_tools_block
from farmhand.tools.choice import NONE
from farmhand.tools.definition import ToolDefinition

log = logging.getLogger(__name__)

# Requests answered at once (continuous batching, `batch.py`) outside a server, where
# one user asks one thing at a time; `engine.SERVED_N_PARALLEL` under `farmhand serve`.
DEFAULT_N_PARALLEL = 1
# A turn that may call tools is cut here unless the caller asks for more: a tool call takes
# well under this, and small models otherwise ramble on listing calls for minutes.
TOOL_TURN_MAX_TOKENS = 512
_TEMPLATE_KEY = "tokenizer.chat_template"
# Stands in for the first user message when the prompt's head is rendered alone.
_HEAD_MARK = "\u2063farmhand-head\u2063"


class LlamaCppProvider:
    """A GGUF model's turns, as its `EmbeddedProfile` says (`profile.py`: constrained
    decoding, the call gate, grounding, ...). `prefix_cache`: keep the KV state of the
    prompt's head (system prompt and tools) on disk between runs (`prefix_cache.py`).
    `n_parallel`: the sequences one decode steps together (`batch.py`)."""

    name = "llamacpp"
    accepts_grammar_tools = True  # see providers.base.GrammarTarget

    def __init__(
        self,
        llama: Any,
        profile: EmbeddedProfile | None = None,
        *,
        model_name: str = "embedded",
        chat_template: str | None = None,
        prefix_cache: bool | PrefixCache = False,
        n_parallel: int = 1,
    ) -> None:
        self.profile = profile = profile or EmbeddedProfile()
        self.llama = llama
        self.n_ctx = int(llama.n_ctx())  # per sequence (a batched context holds n_parallel)
        self.model_name = model_name
        self.chat_template = chat_template or llama.metadata.get(_TEMPLATE_KEY)
        if not self.chat_template:
            raise ModelError(f"{model_name} has no chat template in its GGUF metadata")
        # Continuous batching: n_parallel sequences stepped by one decode (batch.py).
        self.batch = BatchedContext(llama, n_parallel) if n_parallel > 1 else None
        # The one thread that uses the context; it frees the model when closed and idle.
        self.engine = Engine(
            model_name,
            on_close=self._free,
            slots=n_parallel,
            stepper=self.batch.step if self.batch is not None else None,
        )
        if self.batch is not None:  # a long prompt's step gives way to a waiting request
            self.batch.yield_to = self.engine.admission_waiting
        self._special = special_tokens(llama)
        self._is_end = end_of_generation_check(llama)
        self._end_tokens = end_tokens(llama, self._is_end)
        self._opener_tokens = opener_tokens(llama)
        # The call tag as one token, where the model has one (the lazy grammar's trigger).
        self._tag_tokens = single_token(llama, OPEN_TAG)
        # The family its tool calls are read in: from config, else from its chat template.
        self.template = TurnTemplate.of(
            self.chat_template,
            self._special,
            model_name=model_name,
            tool_parser=profile.tool_parser,
        )
        self.tool_family = self.template.family
        self._grammars = GrammarCache(llama_grammar_check(llama))
        self._sampled = Processed()
        self.prefix_cache = PrefixCache(llama) if prefix_cache is True else prefix_cache or None
        self.last_prefix: str | None = None  # what the prefix cache did on the last turn
        self.prefix_outcomes: list[str] = []  # and on every turn so far

    @property
    def processed_prompt_tokens(self) -> int:
        """Prompt tokens llama.cpp evaluated over all turns (restored or reused ones are not)."""
        cached = self.prefix_cache.evaluated if self.prefix_cache else 0
        return self._sampled.prompt_tokens + cached

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        *,
        think: bool | None = None,
        kwargs: Mapping[str, Any] | None = None,
    ) -> str:
        """The prompt (`turn_template.py`); `think` and `kwargs` as the settings say."""
        return self.template.render(messages, tools, think=think, kwargs=kwargs)

    async def complete(
        self, prompt: str, settings: GenerationSettings
    ) -> AsyncGenerator[StreamEvent, None]:
        """Continue `prompt` as it is, no chat template (Ollama's `raw` generate): text
        deltas, then Finish. `settings.response_format` constrains the text to JSON."""
        spec = grammar_spec([], settings, constrain_auto=False)
        prompt_tokens = await anyio.to_thread.run_sync(self._raw_tokens, prompt)
        budget = self._budget(prompt_tokens)
        max_tokens = min(settings.max_tokens or budget, budget)
        completion_tokens = 0
        sampling = self._sampling(settings, spec)
        stops = StopStrings(settings.stop)
        async with self.engine.turn() as turn:
            generation = self._generate(turn, prompt_tokens, max_tokens, stops, sampling)
            async with aclosing(generation) as pieces:
                async for piece, count in pieces:
                    completion_tokens = count
                    yield TextDelta(piece)
        usage = Usage(len(prompt_tokens), completion_tokens)
        yield stops.finish(completion_tokens >= max_tokens, usage)

    def _raw_tokens(self, prompt: str) -> list[int]:
        return list(self.llama.tokenize(prompt.encode(), add_bos=True, special=True))

    def tokenize(self, text: str) -> list[int]:
        """`text` as this model's tokens (special tokens read as such)."""
        return list(self.llama.tokenize(text.encode(), add_bos=False, special=True))

    def text_of(self, tokens: Sequence[int]) -> str:
        """The text of `tokens` (an earlier prompt and answer, Ollama's `context`);
        ProviderError for ids that are not this model's tokens."""
        vocabulary = int(self.llama.n_vocab())
        bad = [t for t in tokens if not 0 <= t < vocabulary]
        if bad:
            raise RequestError(
                f"context holds {bad[0]}, which is not a token of {self.model_name}"
                f" (0..{vocabulary - 1}); send the context this model returned",
                param="context",
            )
        text: bytes = self.llama.detokenize(list(tokens), special=True)
        return text.decode("utf-8", "replace")

    def _budget(self, prompt_tokens: Sequence[int]) -> int:
        """Tokens left for the reply; RequestError (a 400) when the prompt fills the
        context, before the turn takes a place in the model's queue."""
        budget = self.n_ctx - len(prompt_tokens)
        if budget <= 0:
            raise RequestError(
                f"the conversation ({len(prompt_tokens)} tokens) does not fit the context"
                f" window of {self.model_name} ({self.n_ctx} tokens, with room for at"
                " least one token of reply); shorten the input, or have the operator raise"
                " the model's n_ctx",
                code="context_length_exceeded",
            )
        return budget

    def report_waits(self, callback: Callable[[float], None]) -> None:
        """Tell `callback` the seconds each turn waits for the engine (the server's metrics)."""
        self.engine.on_wait = callback

    def engine_status(self) -> EngineStatus:
        status = self.engine.status()
        return dataclasses.replace(status, prompt_tokens_processed=self.processed_prompt_tokens)

    async def count_tokens(
        self, messages: Sequence[Message], tools: Sequence[ToolDefinition]
    ) -> int:
        """The prompt's tokens, as `stream` would render them (providers/token_count.py);
        in a worker thread, as a long prompt takes a while to render and tokenize."""

        def count() -> int:
            prompt = self.render(messages, tools).encode()
            return len(self.llama.tokenize(prompt, add_bos=False, special=True))

        return await anyio.to_thread.run_sync(count)

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
        *,
        grammar_tools: Sequence[ToolDefinition] | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """One model turn. `grammar_tools`: the tools calls may name when they are not the
        ones rendered through the chat template (the prompt-based strategy passes `tools=[]`
        and its tools here); the turn is then constrained in the Hermes format whatever the
        template, and the calls are read back with those names."""
        answer_now = (
            self.profile.answer_after_results and settings.tool_choice.mode == "auto" and tools
        )
        if answer_now and results_to_answer(messages, [t.name for t in tools]):
            messages = answer_turn(messages)
            settings = dataclasses.replace(settings, tool_choice=NONE)
        none = settings.tool_choice.mode == "none"
        offered = [] if none else list(tools)
        callable_tools = offered if grammar_tools is None or none else list(grammar_tools)
        if self.profile.tool_rules and callable_tools:
            messages = with_tools_block(messages, self.profile.tool_rules)
        # Rendering, tokenizing and reading the evidence of a long conversation take
        # seconds: a worker thread's, not the event loop's.
        prompt, prompt_tokens, head, grounding = await anyio.to_thread.run_sync(
            self._turn_prompt, messages, offered, callable_tools, settings
        )
        budget = self._budget(prompt_tokens)
        spec = self._grammar_spec(callable_tools, settings, explicit=grammar_tools is not None)
        # A grammar writes Hermes-style calls, whatever the model's own family is.
        family = "hermes_2_pro" if spec is not None and spec.tools else self.tool_family
        parser = parser_for(
            self.chat_template,  # what `auto` derives its parser from
            None,
            [t.name for t in callable_tools],
            family=family,
            options=ParserOptions(
                parallel_tool_calls=settings.parallel_tool_calls,
                # Formats that write values as bare text type them by the tool's schema.
                tool_schemas={t.name: t.parameters for t in callable_tools},
            ),
        )
        # What the prompt already wrote of the reply (e.g. an opened <think>) is read first.
        opening = parser.feed(prefill_of(family, prompt, self.chat_template))
        async with self.engine.turn() as turn:
            default_max = TOOL_TURN_MAX_TOKENS if callable_tools else budget
            max_tokens = min(settings.max_tokens or default_max, budget)
            completion_tokens = 0
            calls = CallsOfTurn(grounding)
            for event in calls.admit(opening):
                yield event
            await self._prepare_head(turn, head)
            gate: TurnGate | None = None
            if self.profile.call_gate and callable_tools and settings.tool_choice.mode == "auto":
                gate = turn_gate(
                    self.llama,
                    self.profile.call_gate,
                    after_result=_after_result(messages),
                    later_question=any(m.role == "assistant" for m in messages),
                )
                gate.end_tokens = self._end_tokens
                gate.opener_tokens = self._opener_tokens
                if spec is not None and spec.tools and self._tag_tokens:
                    gate.grammar_tag, gate.retag = self._tag_tokens[0], self.profile.retag_calls
            sampling = self._sampling(settings, spec, gate)
            stops = StopStrings(settings.stop)
            generation = self._generate(turn, prompt_tokens, max_tokens, stops, sampling)
            async with aclosing(generation) as pieces:
                async for piece, count in pieces:
                    completion_tokens = count
                    # A turn the gate decided to answer is text, whatever it looks like.
                    read: list[StreamEvent] = (
                        [TextDelta(piece)] if gate and gate.answering else parser.feed(piece)
                    )
                    for event in calls.admit(read):
                        if gate and isinstance(event, ToolCallEvent):
                            gate.call_written(more_wanted=self._more_wanted(messages, calls))
                        yield event
                    if calls.stopped:
                        break  # leaving the loop closes the generator, which stops llama.cpp
            if calls.answer_instead:
                # The first call rested on nothing the user wrote: the same prompt again,
                # answered in text (the gate bans the tokens that start a call, the code
                # fence too, in which the model would write its call as text).
                gate = TurnGate(self.llama, math.inf, answer_fence=False)
                gate.end_tokens = self._end_tokens
                answering = self._sampling(settings, spec, gate)
                stops = StopStrings(settings.stop)
                generation = self._generate(turn, prompt_tokens, max_tokens, stops, answering)
                first_pass = completion_tokens
                async with aclosing(generation) as pieces:
                    async for piece, count in pieces:
                        completion_tokens = first_pass + count
                        yield TextDelta(piece)
                out_of_tokens = completion_tokens - first_pass >= max_tokens
            else:
                out_of_tokens = completion_tokens >= max_tokens
                for event in calls.admit_last(parser.finish(), out_of_tokens=out_of_tokens):
                    yield event
        usage = Usage(len(prompt_tokens), completion_tokens)
        if calls.kept:
            yield Finish("tool_calls", usage)
        else:
            yield stops.finish(out_of_tokens, usage)

    def _more_wanted(self, messages: Sequence[Message], calls: CallsOfTurn) -> bool:
        """Whether the question lists values the turn's calls have not used yet."""
        if not self.profile.ground_siblings:
            return False
        question = next((m.content for m in reversed(messages) if m.role == "user"), "")
        return bool(unused_siblings(question, calls.kept))

    def _grounding(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> Grounding | None:
        """The grounding checks this turn's calls get, or None. `ground_first` is for a
        conversation's first question on an auto turn (a required call must be made)."""
        profile = self.profile
        first_question = not any(m.role == "assistant" for m in messages)
        auto = settings.tool_choice.mode == "auto"
        first_share = profile.ground_first if first_question and auto else None
        topic = None
        if profile.ground_topic and first_question and auto:
            topic = question_words(" ".join(m.content for m in messages if m.role == "user"))
        judged = first_share is not None or topic is not None
        levers = profile.ground_extra or profile.ground_optional or profile.repair_calls or judged
        if not tools or not levers:
            return None
        return Grounding(
            evidence_of(messages),
            {t.name: t.parameters for t in tools},
            extra=profile.ground_extra,
            first_share=first_share,
            optional=profile.ground_optional,
            repair=profile.repair_calls,
            topic=topic,
            tool_words={t.name: tool_words(t) for t in tools} if topic else {},
        )

    def _grammar_spec(
        self, tools: Sequence[ToolDefinition], settings: GenerationSettings, *, explicit: bool
    ) -> GrammarSpec | None:
        """What this turn's calls are constrained to, or None. On an auto turn the spec is
        calls only: the grammar is lazy and wakes at the call tag (see `_sampling`). A
        JSON answer (`response_format`) is constrained whatever the template; calls beside
        it only where the template writes them in the grammar's format."""
        spec = grammar_spec(tools, settings, constrain_auto=self.profile.constrained)
        if self.template.generic and not explicit and spec is not None and spec.calls_only:
            # A call in the generic format's JSON, the tools' own schemas in it.
            schema = calls_schema(spec.tools, parallel=spec.parallel)
            return GrammarSpec((), True, spec.parallel, schema)
        hermes = explicit or OPEN_TAG in (self.chat_template or "")
        if spec is not None and spec.answer is not None:
            return spec if hermes else GrammarSpec((), True, spec.parallel, spec.answer)
        if spec is None or not hermes:
            return None
        if not spec.calls_only:
            spec = dataclasses.replace(spec, calls_only=True)
        return spec

    def _sampling(
        self, settings: GenerationSettings, spec: GrammarSpec | None, steer: Steer | None = None
    ) -> Sampling:
        temperature = (
            settings.temperature if settings.temperature is not None else self.profile.temperature
        )
        built = self._grammars.get(spec) if spec is not None else None
        lazy = settings.tool_choice.mode == "auto" and built is not None
        if spec is not None and spec.answer is not None:
            lazy = False  # the answer is constrained from its first token
        # The lazy grammar wakes at the call tag (a token or text) or a wrapper meant as one.
        trigger = (
            LazyTrigger(call_triggers(spec), tuple(self._tag_tokens))
            if lazy and spec is not None
            else None
        )
        return Sampling(
            temperature,
            settings.seed,
            built.text if built else None,
            trigger,
            steer,
            top_k=settings.top_k or TOP_K,
            top_p=TOP_P if settings.top_p is None else settings.top_p,
        )

    def _turn_prompt(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        callable_tools: Sequence[ToolDefinition],
        settings: GenerationSettings,
    ) -> tuple[str, list[int], list[int], Grounding | None]:
        """The turn's prompt, its tokens, its head's (the leading system messages and
        tools, [] when there is no prefix cache or no such head) and the grounding its
        calls get; RequestError when the prompt does not fit the context (checked before
        the rest is worked out). Blocking: a worker thread."""
        prompt = self.render(messages, tools, think=settings.think, kwargs=settings.template_kwargs)
        tokens = list(self.llama.tokenize(prompt.encode(), add_bos=False, special=True))
        self._budget(tokens)
        head = self._head_of(messages, tools, tokens)
        return prompt, tokens, head, self._grounding(messages, callable_tools, settings)

    def _head_of(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        prompt_tokens: list[int],
    ) -> list[int]:
        if self.prefix_cache is None:
            return []
        leading = 0
        while leading < len(messages) and messages[leading].role == "system":
            leading += 1
        if leading == len(messages):
            return []
        rendered = self.render([*messages[:leading], Message.user(_HEAD_MARK)], tools)
        cut = rendered.find(_HEAD_MARK)
        if cut <= 0:
            return []
        head_text = rendered[:cut].encode()
        head_tokens = self.llama.tokenize(head_text, add_bos=False, special=True)
        head = prompt_tokens[: head_length(prompt_tokens, head_tokens)]
        return head if len(head) < len(prompt_tokens) else []

    async def _prepare_head(self, turn: Turn, head: list[int]) -> None:
        """Have the context hold the prompt's head, restored from disk when saved before."""
        self.last_prefix = None
        if self.prefix_cache is None or not head:
            return
        if self.batch is not None:  # heads live in its slots, seeded from disk (batch)
            self.last_prefix = await turn.call(self.batch.seed, head, self.prefix_cache)
        else:
            self.last_prefix = await turn.call(self.prefix_cache.prepare, head)
        self.prefix_outcomes.append(self.last_prefix)

    async def _generate(
        self,
        turn: Turn,
        prompt_tokens: list[int],
        max_tokens: int,
        stops: StopStrings,
        sampling: Sampling,
    ) -> AsyncGenerator[tuple[str, int], None]:
        """Yield (text, tokens so far). Each token is computed on the engine's thread, one
        step at a time, so stopping early is just not asking for the next; the sampler is
        closed there too, when the turn ends. The text ends before the first of the
        request's stop strings (`stops.matched`)."""
        next_token, close = await self._sequence(turn, prompt_tokens, sampling)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        count = 0
        try:
            while count < max_tokens:
                token = await next_token()
                if token is None or self._is_end(token):
                    break
                count += 1
                text = stops.feed(decoder.decode(self.llama.detokenize([token])))
                if text:
                    yield text, count
                if stops.matched is not None:
                    return
            # The decoder's last bytes, then what was held back as a stop's possible start.
            tail = stops.feed(decoder.decode(b"", final=True)) + stops.flush()
            if tail:
                yield tail, count
        finally:
            turn.post(close)  # free the sampler (and slot) before the turn's next command

    async def _sequence(
        self, turn: Turn, prompt_tokens: list[int], sampling: Sampling
    ) -> tuple[Callable[[], Awaitable[int | None]], Callable[[], None]]:
        """How the turn gets its next token, and how its sampler is freed (also when the
        turn ends first): a generation in a slot of the batched context, stepped with the
        other turns' (`Turn.step`), or farmhand's sampling loop on the one sequence."""
        batch = self.batch
        if batch is not None:
            generation = await turn.call(batch.open, prompt_tokens, sampling, self._sampled)
            turn.on_release(lambda: batch.close(generation))
            return (lambda: turn.step(generation)), (lambda: batch.close(generation))
        tokens = sample_tokens(self.llama, prompt_tokens, sampling, self._sampled, PROMPT_CHUNK)

        async def next_token() -> int | None:
            token: int | None = await turn.call(next, tokens, None)
            while token == READING:  # a chunk of a long prompt: a request may leave here
                token = await turn.call(next, tokens, None)
            return token

        turn.on_release(tokens.close)
        return next_token, tokens.close

    async def aclose(self) -> None:
        """Free the model once no request holds or awaits it (at once when idle)."""
        self.engine.close()

    def _free(self) -> None:
        close: Callable[[], None] | None = getattr(self.llama, "close", None)
        if close is not None:
            close()
            return_freed_memory()


def _after_result(messages: Sequence[Message]) -> bool:
    """Whether the turn follows tool results (in the prompt-based strategy they come back
    as a user turn of `<tool_response>` blocks)."""
    last = messages[-1] if messages else None
    if last is None:
        return False
    return last.role == "tool" or (
        last.role == "user" and last.content.lstrip().startswith("<tool_response>")
    )
