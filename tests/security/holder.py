"""A farmhand process holding a pooled stdio server that started two children, one of them
detached into a session of its own; it prints their pids and waits to be killed.

    python -m tests.security.holder  ->  "<child> <detached>\\n", then blocks
"""

from __future__ import annotations

import anyio
from tests.support.real_servers import faults

from farmhand.toolsets.mcp.pool import MCPPool


async def main() -> None:
    async with MCPPool() as pool:
        toolset = pool.toolset(faults())
        child = (await toolset.call_tool("spawn_child", {})).text
        detached = (await toolset.call_tool("spawn_detached", {})).text
        print(child, detached, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(main)
