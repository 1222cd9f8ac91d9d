"""Calls `tool` with `arguments` and cancels the call (the client's own cancellation: a
`notifications/cancelled`, or the closed request stream over HTTP) once a progress
notification whose message contains `cancel_at` has come and the file `cancel_when` (written
by the test when the worker is where it wants it) exists; then checks that the server still
answers by listing the tools again. Reports the progress seen, whether the call was cancelled
(not answered), and the tools listed after.
"""

import os

import anyio

from common import config, connect, dump, report


async def main():
    cfg = config()
    out = {"progress": []}
    seen = anyio.Event()

    async def on_progress(value, total, message):
        out["progress"].append(message)
        if cfg["cancel_at"] in (message or ""):
            seen.set()

    async with connect(cfg) as client:
        scope = anyio.CancelScope()

        async def call():
            with scope:
                result = await client.call_tool(
                    cfg["tool"], cfg["arguments"], progress_callback=on_progress
                )
                out["result"] = dump(result)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call)
            with anyio.fail_after(cfg.get("timeout", 30)):
                await seen.wait()
                while not os.path.exists(cfg["cancel_when"]):
                    await anyio.sleep(0.01)
            scope.cancel()
        out["cancelled"] = scope.cancelled_caught
        listed = await client.list_tools()
        out["tools_after"] = [tool.name for tool in listed.tools]
    report(out)


anyio.run(main)
