"""Lists the server's tools, then makes the calls the test asks for (`calls`: each a `tool`,
its `arguments`, and the `answers` to give its elicitation requests, in order), one after
another on one connection. Reports each call's result (or protocol error), its progress
notifications with the time since the call was sent, and the elicitation requests it got; and
the server's memory (VmRSS) once idle and at each call's first progress notification. With
`"elicits": false` the client does not declare the elicitation capability.
"""

import time

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from common import config, connect, dump, now_ms, report, rss_kb, server_pid


async def main():
    cfg = config()
    answers = []
    elicitations = []

    async def on_elicit(context, params):
        elicitations.append(dump(params))
        answer = answers.pop(0) if answers else {"action": "cancel"}
        return types.ElicitResult(**answer)

    client_args = {"elicitation_callback": on_elicit} if cfg.get("elicits", True) else {}
    out = {"calls": []}
    async with connect(cfg, **client_args) as client:
        out["protocol"] = client.protocol_version
        listed = await client.list_tools()
        out["tools"] = [dump(tool) for tool in listed.tools]
        pid = server_pid(cfg)
        out["rss_idle_kb"] = rss_kb(pid)
        for call in cfg["calls"]:
            answers[:] = call.get("answers", [])
            asked_before = len(elicitations)
            progress = []
            entry = {}
            sent = time.monotonic()

            async def on_progress(value, total, message):
                if not progress:
                    entry["rss_during_kb"] = rss_kb(pid)
                progress.append({"ms": now_ms(sent), "progress": value, "message": message})

            try:
                result = await client.call_tool(
                    call["tool"], call["arguments"], progress_callback=on_progress
                )
                entry["result"] = dump(result)
            except MCPError as e:
                entry["error"] = {"code": e.code, "message": e.message}
            entry["ms"] = now_ms(sent)
            entry["progress"] = progress
            entry["elicitations"] = elicitations[asked_before:]
            out["calls"].append(entry)
        out["rss_after_kb"] = rss_kb(pid)
    report(out)


anyio.run(main)
