# The two commands the README opens with; both do all set-up first.
Q ?= List the files in the examples folder.
TOOLS ?= examples
PYTEST_ARGS ?=

.PHONY: chat test setup lint bench bench-data bench-rag docs-screenshots

setup:
	@scripts/setup.sh

chat: setup
	@.venv/bin/farmhand chat --tools "$(TOOLS)" "$(Q)"

lint: setup
	.venv/bin/ruff check src tests bench
	.venv/bin/ruff format --check src tests bench
	.venv/bin/mypy

test: lint
	.venv/bin/pytest $(PYTEST_ARGS)

# The docs' screenshots, taken again by the browser tests (scripts/docs_screenshots.py).
docs-screenshots: setup
	.venv/bin/python scripts/docs_screenshots.py

# LiteLLM's proxy, the gateway bench/serve_overhead.py compares farmhand with, in a venv of
# its own (its pins must not move farmhand's).
.venv-litellm/bin/litellm:
	python3 -m venv .venv-litellm
	.venv-litellm/bin/pip install --disable-pip-version-check -q "litellm[proxy]==1.108.7"

# The RAG bench's data: tau2-bench's banking knowledge base as the inspect-evals package
# ships it. Its wheel is downloaded, not installed: bench/rag_retrieval.py reads the files
# inside it, and none of the package's dependencies (all of inspect-ai) are needed.
BENCH_DATA := .bench-data/inspect_evals-0.28.0-py3-none-any.whl

$(BENCH_DATA): | setup
	.venv/bin/pip download --disable-pip-version-check -q --no-deps -d .bench-data \
		"inspect-evals==0.28.0"

bench-data: $(BENCH_DATA)

bench-rag: setup $(BENCH_DATA)
	.venv/bin/python bench/rag_retrieval.py

bench: setup .venv-litellm/bin/litellm $(BENCH_DATA)
	.venv/bin/python bench/embedded_tokens_per_second.py
	.venv/bin/python bench/constrained_decoding.py
	.venv/bin/python bench/parse_streaming.py
	.venv/bin/python bench/mcp_call_overhead.py
	.venv/bin/python bench/jit_prompt_tokens.py
	.venv/bin/python bench/serve_overhead.py
	.venv/bin/python bench/serve_cpu_in_process.py
	.venv/bin/python bench/observability_overhead.py
	.venv/bin/python bench/llama_tokenize_overhead.py
	.venv/bin/python bench/rag_retrieval.py
