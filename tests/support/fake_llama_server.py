"""An in-process stand-in for the llama-server endpoints the test model cannot exercise.

Why a fake: the real llama-server in tests/e2e runs the embedded Qwen2.5-Coder-0.5B GGUF,
which has no reranking head (/reranking needs a reranker model started with --reranking)
and ships no LoRA adapter (/lora-adapters lists only adapters given with --lora). Router
mode's load/unload run for real in tests/e2e; here they pin the shapes the tools build on,
and a server that is still loading or wants an API key, which are hard to hold still for real.
Shapes follow llama-server's tools/server/README.md: errors are
{"error": {"code", "message", "type"}}, reranking results [{index, relevance_score}] in
document order, LoRA adapters [{id, path, scale}].
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route


class FakeLlamaServer:
    def __init__(
        self, *, loading: bool = False, api_key: str | None = None, slots: bool = True
    ) -> None:
        self.loading = loading
        self.serves_slots = slots
        self.api_key = api_key
        self.adapters: list[dict[str, Any]] = [
            {"id": 0, "path": "adapters/sql.gguf", "scale": 1.0},
            {"id": 1, "path": "adapters/poetry.gguf", "scale": 0.0},
        ]
        self.models = {"coder.gguf": "unloaded", "chat.gguf": "loaded", "broken.gguf": "unloaded"}
        self.model_listings = 0
        self.requests: list[tuple[str, str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/health", self.health),
                Route("/slots", self.slots),
                Route("/metrics", self.metrics),
                Route("/tokenize", self.tokenize, methods=["POST"]),
                Route("/embedding", self.embedding, methods=["POST"]),
                Route("/reranking", self.rerank, methods=["POST"]),
                Route("/lora-adapters", self.lora, methods=["GET", "POST"]),
                Route("/models", self.list_models),
                Route("/models/load", self.load, methods=["POST"]),
                Route("/models/unload", self.unload, methods=["POST"]),
                Route("/props", self.props, methods=["GET", "POST"]),
            ]
        )

    async def _body(self, request: Request) -> Any:
        body = await request.json() if request.method == "POST" else None
        self.requests.append((request.method, request.url.path, body))
        return body

    def _refused(self, request: Request) -> Response | None:
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Invalid API Key", "authentication_error")
        if self.loading and request.url.path != "/metrics":
            return error(503, "Loading model", "unavailable_error")
        return None

    async def health(self, request: Request) -> Response:
        return self._refused(request) or JSONResponse({"status": "ok"})

    async def slots(self, request: Request) -> Response:
        if not self.serves_slots:  # started with --no-slots
            return error(501, "This server does not support slots endpoint.", "not_supported_error")
        busy = [{"id": 0, "is_processing": True}, {"id": 1, "is_processing": False}]
        return self._refused(request) or JSONResponse([*busy, {"id": 2, "is_processing": False}])

    async def metrics(self, request: Request) -> Response:
        return PlainTextResponse(
            "# HELP llamacpp:prompt_tokens_total x\nllamacpp:prompt_tokens_total 7\n"
        )

    async def tokenize(self, request: Request) -> Response:
        body = await self._body(request)
        if refused := self._refused(request):
            return refused
        pieces = [{"id": 9707, "piece": "Hello"}, {"id": 999, "piece": [226, 130]}]
        return JSONResponse({"tokens": pieces if body.get("with_pieces") else [9707, 999]})

    async def embedding(self, request: Request) -> Response:
        await self._body(request)
        return JSONResponse([{"index": 0, "embedding": [[0.25, -0.5, 0.75]]}])

    async def rerank(self, request: Request) -> Response:
        body = await self._body(request)
        scores = [
            float(len(set(d.split()) & set(body["query"].split()))) for d in body["documents"]
        ]
        results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
        return JSONResponse({"model": "fake-reranker", "object": "list", "results": results})

    async def lora(self, request: Request) -> Response:
        body = await self._body(request)
        if request.method == "GET":
            return JSONResponse(self.adapters)
        known = {a["id"]: a for a in self.adapters}
        for change in body:
            if change["id"] not in known:
                return error(400, "invalid adapter id", "invalid_request_error")
            known[change["id"]]["scale"] = change["scale"]
        return JSONResponse({"success": True})

    async def list_models(self, request: Request) -> Response:
        """Router mode's list; a load is seen as `loading` once before `loaded`, as the
        real router does while the model's own process starts."""
        self.model_listings += 1
        data = []
        for name, state in self.models.items():
            status: dict[str, Any] = {"value": state}
            if state == "loading":
                self.models[name] = "loaded"
            if name == "broken.gguf" and state == "loading":  # its process dies at once
                self.models[name] = "unloaded"
                status = {"value": "unloaded", "failed": True, "exit_code": 1}
            data.append({"id": name, "object": "model", "status": status})
        return JSONResponse({"object": "list", "data": data})

    async def load(self, request: Request) -> Response:
        return await self._switch(request, "loaded")

    async def unload(self, request: Request) -> Response:
        return await self._switch(request, "unloaded")

    async def _switch(self, request: Request, state: str) -> Response:
        body = await self._body(request)
        if body["model"] not in self.models:  # what the real router answers
            return error(404, "File Not Found", "not_found_error")
        self.models[body["model"]] = "loading" if state == "loaded" else state
        return JSONResponse({"success": True})

    async def props(self, request: Request) -> Response:
        await self._body(request)
        if request.method == "POST":
            return error(
                501,
                "This server does not support changing global properties. Start it with `--props`",
                "not_supported_error",
            )
        return JSONResponse({"default_generation_settings": {"temperature": 0.8}, "total_slots": 3})


def error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"code": status, "message": message, "type": kind}}, status)
