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

Against a base commit, in the same run (`--baseline`: that tree's `src`, run in a child
process; prints both and each count's ratio, this tree's over the base's):

    git archive BASE src | tar -x -C /tmp/base
    PYTHONPATH=src .venv/bin/python bench/request_path.py --baseline /tmp/base/src

`--stream` traces a streamed request (SSE) instead; `--files` lists the files in the order
first entered, with the number of stays in each. The counts are of code, not of time: they
are the same on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
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


def counts(seen: Walk) -> dict[str, int]:
    return {
        "files": len(set(seen.stays)),
        "functions": len(seen.functions),
        "frames": seen.frames,
        "stays": len(seen.stays),
        "returns": seen.returns,
    }


def baseline(src: str, stream: bool) -> dict[str, int]:
    """The counts of the tree at `src`, from a child process that imports it."""
    env = {**os.environ, "PYTHONPATH": src}
    args = [sys.executable, __file__, "--json", *(["--stream"] if stream else [])]
    run = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"the baseline at {src} failed:\n{run.stderr[-2000:]}")
    found: dict[str, int] = json.loads(run.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", action="store_true", help="trace a streamed request")
    parser.add_argument("--files", action="store_true", help="list the files on the path")
    parser.add_argument("--baseline", metavar="SRC", help="another tree's src to compare")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.disable(logging.INFO)  # the lifespan's and the client's notes are not the output
    seen = anyio.run(walk, args.stream)
    mine = counts(seen)
    if args.json:
        print(json.dumps(mine))
        return
    kind = "streamed" if args.stream else "whole"
    print(f"POST /v1/chat/completions ({kind} answer), farmhand at {PACKAGE}")
    print("  ".join(f"{name} {value}" for name, value in mine.items()))
    if args.baseline:
        base = baseline(args.baseline, args.stream)
        print(f"baseline at {args.baseline}")
        print("  ".join(f"{name} {value}" for name, value in base.items()))
        ratios = (f"{name} {mine[name] / base[name]:.2f}" for name in mine)
        print("ratio (this / baseline): " + "  ".join(ratios))
    if args.files:
        stays = Counter(seen.stays)
        for name in dict.fromkeys(seen.stays):
            print(f"  {stays[name]:3d}  {name}")


if __name__ == "__main__":
    main()
