"""Projects over HTTP, in LlamaFarm's shapes:

    GET    /v1/projects/{namespace}                    -> {total, projects: [Project]}
    POST   /v1/projects/{namespace}                    {name, config?, config_template?}
    GET    /v1/projects/{namespace}/{project}          -> {project}
    PUT    /v1/projects/{namespace}/{project}          {config}  (full replacement)
    DELETE /v1/projects/{namespace}/{project}          -> {project} (what it held)
    POST   /v1/projects/{namespace}/{project}/chat/completions

A Project is `{namespace, name, config}`; `config` is the farmhand.yaml as a mapping (on
writes also YAML text, which keeps comments and gives errors the lines as written).
The chat endpoint is the OpenAI dialect's (`openai_api`: same request fields, streaming,
errors) with the project's models and MCP servers; `model` may be left out for the
project's default model. Errors are OpenAI-shaped: 400 for a bad config (naming the line
and key), 404 for a missing project, 409 for a name that is taken.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.openai.chat import parse_chat
from farmhand.errors import FarmhandError, RequestError
from farmhand.server import openai_api
from farmhand.server.errors import error_response
from farmhand.server.json_body import json_object
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.service.projects import ProjectStore, state_for, store_for

PREFIX = "/v1/projects"


def routes() -> list[BaseRoute]:
    return [
        Route(PREFIX + "/{namespace}", list_projects, methods=["GET"]),
        Route(PREFIX + "/{namespace}", create_project, methods=["POST"]),
        Route(PREFIX + "/{namespace}/{project}", get_project, methods=["GET"]),
        Route(PREFIX + "/{namespace}/{project}", update_project, methods=["PUT"]),
        Route(PREFIX + "/{namespace}/{project}", delete_project, methods=["DELETE"]),
        Route(PREFIX + "/{namespace}/{project}/chat/completions", chat, methods=["POST"]),
    ]


def _store(request: Request) -> ProjectStore:
    return store_for(service_state(request))


def _where(request: Request) -> tuple[str, str]:
    return request.path_params["namespace"], request.path_params["project"]


async def list_projects(request: Request) -> Response:
    try:
        projects = _store(request).list(request.path_params["namespace"])
    except FarmhandError as exc:
        return error_response(exc)
    return JSONResponse({"total": len(projects), "projects": [p.to_json() for p in projects]})


async def create_project(request: Request) -> Response:
    try:
        body = await json_object(request)
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise RequestError("`name` is required: the new project's name", param="name")
        template = body.get("config_template")
        if template not in (None, "default"):
            raise RequestError(
                f"unknown config_template {template!r}; the only template is 'default'"
                " (or send `config` itself)",
                param="config_template",
            )
        project = _store(request).create(
            request.path_params["namespace"], name, _config(body, required=False)
        )
    except FarmhandError as exc:
        return error_response(exc)
    return JSONResponse({"project": project.to_json()})


async def get_project(request: Request) -> Response:
    try:
        project = _store(request).get(*_where(request))
    except FarmhandError as exc:
        return error_response(exc)
    return JSONResponse({"project": project.to_json()})


async def update_project(request: Request) -> Response:
    try:
        body = await json_object(request)
        project = _store(request).update(*_where(request), _config(body, required=True))
    except FarmhandError as exc:
        return error_response(exc)
    return JSONResponse({"project": project.to_json()})


async def delete_project(request: Request) -> Response:
    try:
        project = _store(request).delete(*_where(request))
    except FarmhandError as exc:
        return error_response(exc)
    return JSONResponse({"project": project.to_json()})


async def chat(request: Request) -> Response:
    try:
        project = _store(request).get(*_where(request))
        state = state_for(service_state(request), project)
        body = await json_object(request)
        if not body.get("model"):
            body["model"] = state.model_config(None).name
        parsed = parse_chat(body)
    except FarmhandError as exc:
        return error_response(exc)
    return await openai_api.answer_chat(state, parsed)


def _config(body: dict[str, Any], *, required: bool) -> dict[str, Any] | str | None:
    config = body.get("config")
    if config is None and required:
        raise RequestError(
            "`config` is required: the project's whole farmhand.yaml, as a mapping or text",
            param="config",
        )
    if config is not None and not isinstance(config, dict | str):
        raise RequestError(
            "`config` must be a mapping (the farmhand.yaml keys) or YAML text", param="config"
        )
    return config
