"""The data walk of one `POST /v1/chat/completions`: how many of farmhand's files and functions
one request passes through, and how often it leaves a file and comes back.

Claim (issue 29): followed as data, the body of one chat completion visits at most half the
files it did (60 stays in 30 files, 30 returns, when the issue was written), so a reader
follows a request through few places.

Method: the real app (`assembly.create_app`) in this process, its lifespan run, one scripted
model (`providers.scripted`, a text answer, no MCP server), asked over ASGI by httpx (the
client runs in the same thread, so one profile hook sees everything). One request warms up
(imports, the provider built, caches filled); the next is traced with `sys.setprofile`,
counting only code in farmhand's own package (`src/farmhand`), from the moment the request
enters the app to its last byte. Numbers:

- files: distinct farmhand source files the request runs code in;
- functions: distinct farmhand functions (code objects) it runs;
- frames: farmhand function frames it enters (a coroutine or generator resumed is the same
  frame, counted once);
- stays: runs of consecutive farmhand code in one file (from one file to another starts a
  new stay; code outside farmhand in between does not);
- returns: stays in a file the request had already left before.

Run it on two trees to compare them, e.g. against a base commit:

    git archive BASE src | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/request_path.py
    PYTHONPATH=src .venv/bin/python bench/request_path.py

`--stream` traces a streamed request (SSE) instead; `--files` lists the files in the order
first entered, with the number of stays in each. The counts are of code, not of time: they
are the same on a busy machine.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import httpx

import farmhand
from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig
from farmhand.providers.scripted import ScriptedProvider, Step

PACKAGE = str(Path(farmhand.__file__).resolve().parent)


@dataclass
class Walk:
    """What the profile hook saw of farmhand's code during one request."""

    stays: list[str] = field(default_factory=list)
    functions: set[int] = field(default_factory=set)
    frames: int = 0
    _seen_frames: set[int] = field(default_factory=set)
    _live: list[FrameType] = field(default_factory=list)

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        path = code.co_filename
        if not path.startswith(PACKAGE):
            return
        if id(frame) not in self._seen_frames:  # a resumed coroutine is the same frame
            self._seen_frames.add(id(frame))
            self._live.append(frame)  # held, so no later frame reuses its id
            self.frames += 1
        self.functions.add(id(code))
        name = path[len(PACKAGE) + 1 :]
        if not self.stays or self.stays[-1] != name:
            self.stays.append(name)

    @property
    def returns(self) -> int:
        left: set[str] = set()
        count = 0
        for before, now in zip(self.stays, self.stays[1:], strict=False):
            left.add(before)
            if now in left:
                count += 1
        return count


def config() -> FarmhandConfig:
    """One model, replaced by the scripted provider; no MCP server, no API key."""
    model = {"name": "farm", "provider": "openai", "model": "scripted"}
    return FarmhandConfig.model_validate({"runtime": {"models": [model]}})


async def walk(stream: bool) -> Walk:
    provider = ScriptedProvider([Step.text("The barn is red.")] * 2)
    with tempfile.TemporaryDirectory() as home:
        app = create_app(
            config(), home=Path(home), provider_factory=lambda _: provider, api_keys=()
        )
        body = {"model": "farm", "messages": [{"role": "user", "content": "hi"}]}
        if stream:
            body["stream"] = True
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1"
            ) as client:
                warm = await client.post("/v1/chat/completions", json=body)
                warm.raise_for_status()
                seen = Walk()
                sys.setprofile(seen.hook)
                try:
                    answer = await client.post("/v1/chat/completions", json=body)
                finally:
                    sys.setprofile(None)
    answer.raise_for_status()
    ending = "data: [DONE]" if stream else "The barn is red."
    if ending not in answer.text:
        sys.exit(f"unexpected answer: {answer.text[:300]}")
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", action="store_true", help="trace a streamed request")
    parser.add_argument("--files", action="store_true", help="list the files on the path")
    args = parser.parse_args()
    logging.disable(logging.INFO)  # the lifespan's and the client's notes are not the output
    seen = anyio.run(walk, args.stream)
    files = list(dict.fromkeys(seen.stays))
    kind = "streamed" if args.stream else "whole"
    print(f"POST /v1/chat/completions ({kind} answer), farmhand at {PACKAGE}")
    print(f"files {len(files)}  functions {len(seen.functions)}  frames {seen.frames}")
    print(f"stays {len(seen.stays)}  returns {seen.returns}")
    if args.files:
        stays = Counter(seen.stays)
        for name in files:
            print(f"  {stays[name]:3d}  {name}")


if __name__ == "__main__":
    main()
