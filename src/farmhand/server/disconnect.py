"""A request whose client leaves stops being worked on.

A streamed answer notices a client that left (`streaming.EventStream` listens for it and
cancels the chat); a non-streamed one would otherwise generate to its end for nobody,
holding its model for every other client. `CancelOnDisconnect` listens once the app has
read the whole body, and cancels the request's task when the client disconnects, unless the
app listens itself (a stream), in which case the disconnect is handed to it. (Not on /mcp:
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
        gone = asyncio.Event()
        read_body = False
        app_listens = False
        responded = False
        cancelled = False
        watcher: asyncio.Task[None] | None = None
        farewell: Message = {"type": "http.disconnect"}

        async def watch() -> None:
            nonlocal cancelled, farewell
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    farewell = message
                    break
            gone.set()
            if not app_listens and not responded and request_task is not None:
                cancelled = True
                request_task.cancel()

        async def app_receive() -> Message:
            nonlocal read_body, app_listens, watcher
            if read_body:  # the app waits for the disconnect itself: hand it over
                app_listens = True
                await gone.wait()
                return farewell
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
                return message
            if not message.get("more_body", False):
                read_body = True
                watcher = asyncio.create_task(watch())
            return message

        async def app_send(message: Message) -> None:
            nonlocal responded
            if message["type"] == "http.response.start":
                responded = True
            await send(message)

        try:
            await self.app(scope, app_receive, app_send)
        except asyncio.CancelledError:
            if not cancelled or request_task is None:
                raise
            request_task.uncancel()  # the client left: nothing is sent, and that is all
        finally:
            if watcher is not None:
                watcher.cancel()
