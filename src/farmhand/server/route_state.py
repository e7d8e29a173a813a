"""The service state a route works on: `create_app` keeps it on the Starlette app."""

from __future__ import annotations

from starlette.requests import Request

from farmhand.service.state import ServiceState


def service_state(request: Request) -> ServiceState:
    state: ServiceState = request.app.state.farmhand
    return state
