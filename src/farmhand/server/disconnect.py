"""A request whose client leaves stops being worked on.

A streamed answer notices a client that left (`streaming.EventStream` listens for it and
cancels the chat); a non-streamed one would otherwise generate to its end for nobody,
holding its model for every other client. `CancelOnDisconnect` reads what the client sends
from the start (handing it to the app when the app asks), and cancels the request's task
when the client disconnects, unless the app listens itself (a stream: it asked again after
the whole body), in which case the disconnect is handed to it. (Not on /mcp:
the MCP SDK runs its requests in its session's tasks and watches its own streams.)
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The MCP SDK runs its requests in its own session's tasks and watches its own streams.
SKIPPED = "/mcp"


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "").startswith(SKIPPED):
            await self.app(scope, receive, send)
            return
        request_task = asyncio.current_task()
        # Everything the client sends is read here, from the start, and handed to the app
        # when it asks: the app may never ask (the JSON body was read by GateMiddleware).
        messages: asyncio.Queue[Message] = asyncio.Queue()
        read_body = False  # the app has had the whole body
        app_listens = False  # and asked again: it waits for the disconnect itself
        responded = False
        cancelled = False

        async def watch() -> None:
            nonlocal cancelled
            while True:
                message = await receive()
                messages.put_nowait(message)
                if message["type"] == "http.disconnect":
                    break
            if not app_listens and not responded and request_task is not None:
                cancelled = True
                request_task.cancel()

        async def app_receive() -> Message:
            nonlocal read_body, app_listens
            if read_body and messages.empty():
                app_listens = True
            message = await messages.get()
            if message["type"] == "http.request" and not message.get("more_body", False):
                read_body = True
            return message

        async def app_send(message: Message) -> None:
            nonlocal responded
            if message["type"] == "http.response.start":
                responded = True
            await send(message)

        watcher = asyncio.create_task(watch())
        try:
            await self.app(scope, app_receive, app_send)
        except asyncio.CancelledError:
            if not cancelled or request_task is None:
                raise
            request_task.uncancel()  # the client left: nothing is sent, and that is all
        finally:
            watcher.cancel()
