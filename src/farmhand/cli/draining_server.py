"""uvicorn's server, with farmhand's drain in front of its shutdown.

uvicorn alone, on SIGTERM, closes its listening socket at once and then gives requests in
flight `timeout_graceful_shutdown` seconds, before it re-raises the signal (the process
ends by it, not with 0). Here the first SIGTERM or Ctrl-C starts the drain instead
(`server/drain.py`): the socket stays open and new requests get a 503 with Retry-After
(a load balancer sends them elsewhere; `/ready` says draining), the requests in flight go
on until they are done or `server.drain_timeout` passed (then they are cut with a clear
end), and only then does uvicorn's shutdown run (the lifespan closes the MCP servers, the
models and the stores) and the process exits 0. A second signal skips what is left of the
drain and stops as uvicorn does.
"""

from __future__ import annotations

import gc
import socket
from types import FrameType

import uvicorn

from farmhand.server.drain import Drain

CUT_GRACE = 5
"""Seconds uvicorn gives the requests the drain cut (to write their last lines) and
anything it did not count (an MCP client's listening stream) before it cancels them."""


class DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, drain: Drain) -> None:
        super().__init__(config)
        self.drain = drain
        self.drain_requested = False

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        # What starting built (modules, config, routes, the service) lives as long as the
        # process: frozen out of the collector's way, a full collection walks only what
        # requests made since. Unfrozen, each walked all of it: 0.1-0.3 s every few hundred
        # requests, 70 us per request with tracing off and 170 us on (its spans wait in the
        # batch queue long enough to reach the oldest generation), bench/README.md.
        gc.collect()
        gc.freeze()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.drain_requested:  # the second signal: uvicorn's own stop
            super().handle_exit(sig, frame)
            return
        # A signal handler only notes it: the drain starts (and logs) on the next tick,
        # outside whatever the handler interrupted.
        self.drain_requested = True

    async def on_tick(self, counter: int) -> bool:
        if self.drain_requested:
            self.drain.begin()
            if self.drain.finished():
                return True
        return await super().on_tick(counter)
