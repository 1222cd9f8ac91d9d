"""An editor, as far as the tests need one: the official Python ACP client
(`agent-client-protocol` from PyPI) starts `golem-forge acp` and runs the steps of its
configuration (argv[1], JSON) in order, then prints one JSON report line: each step's result
or error, every session/update it received, and every permission request with the option it
chose.

Steps: {"op": "initialize"}, {"op": "new", "cwd", "mcpServers"?}, {"op": "load", "sessionId"?},
{"op": "prompt", "blocks": [...], "answers": [option ids, in order], "cancelOnPermission"?,
"cancelAfterChunks"?}, {"op": "set_mode", "mode"}. A session id left out is the last one
created or loaded.
"""

import asyncio
import json
import sys

from acp import (
    RequestError,
    embedded_text_resource,
    resource_block,
    resource_link_block,
    spawn_agent_process,
    text_block,
)
from acp.schema import HttpMcpServer, McpServerStdio


def dump(model):
    if model is None:
        return None
    if isinstance(model, (dict, list, str, int, float, bool)):
        return model
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


class Editor:
    def __init__(self):
        self.updates = []
        self.permissions = []
        self.answers = []
        self.cancel_on_permission = False
        self.cancel_after_chunks = None
        self.chunks = 0
        self.conn = None

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        asked = {
            "sessionId": session_id,
            "toolCall": dump(tool_call),
            "options": [dump(o) for o in options],
        }
        if self.cancel_on_permission:
            asked["chose"] = "cancelled"
            self.permissions.append(asked)
            await self.conn.cancel(session_id=session_id)
            return {"outcome": {"outcome": "cancelled"}}
        chosen = self.answers.pop(0) if self.answers else "reject_once"
        asked["chose"] = chosen
        self.permissions.append(asked)
        return {"outcome": {"outcome": "selected", "optionId": chosen}}

    async def session_update(self, session_id, update, **kwargs):
        shown = dump(update)
        shown["_session"] = session_id
        self.updates.append(shown)
        if shown.get("sessionUpdate") == "agent_message_chunk":
            self.chunks += 1
            if self.cancel_after_chunks is not None and self.chunks == self.cancel_after_chunks:
                await self.conn.cancel(session_id=session_id)

    async def ext_method(self, method, params):
        return {}

    async def ext_notification(self, method, params):
        return None


def block(spec):
    if "text" in spec:
        return text_block(spec["text"])
    if "link" in spec:
        return resource_link_block(spec["link"]["name"], spec["link"]["uri"])
    if "embedded" in spec:
        return resource_block(embedded_text_resource(spec["embedded"]["uri"], spec["embedded"]["text"]))
    raise ValueError(f"unknown block {spec}")


def server(spec):
    if "url" in spec:
        return HttpMcpServer.model_validate({"type": "http", "headers": [], **spec})
    return McpServerStdio.model_validate({"env": [], **spec})


async def step(conn, editor, spec, state):
    op = spec["op"]
    if op == "initialize":
        return await conn.initialize(protocol_version=spec.get("protocolVersion", 1))
    if op == "new":
        response = await conn.new_session(
            cwd=spec["cwd"], mcp_servers=[server(s) for s in spec.get("mcpServers", [])]
        )
        state["session"] = response.session_id
        return response
    if op == "load":
        session = spec.get("sessionId", state.get("session"))
        response = await conn.load_session(cwd=spec["cwd"], session_id=session, mcp_servers=[])
        state["session"] = session
        return response
    if op == "prompt":
        editor.answers = list(spec.get("answers", []))
        editor.cancel_on_permission = spec.get("cancelOnPermission", False)
        editor.cancel_after_chunks = spec.get("cancelAfterChunks")
        editor.chunks = 0
        return await conn.prompt(
            session_id=spec.get("sessionId", state.get("session")),
            prompt=[block(b) for b in spec["blocks"]],
        )
    if op == "set_mode":
        return await conn.set_session_mode(
            session_id=spec.get("sessionId", state.get("session")), mode_id=spec["mode"]
        )
    raise ValueError(f"unknown step {op}")


async def main():
    config = json.loads(sys.argv[1])
    editor = Editor()
    results = []
    state = {}
    async with spawn_agent_process(
        editor, config["command"], *config["args"], env=config["env"], cwd=config["cwd"]
    ) as (conn, process):
        editor.conn = conn
        for spec in config["steps"]:
            try:
                response = await asyncio.wait_for(step(conn, editor, spec, state), 60)
                results.append({"op": spec["op"], "result": dump(response)})
            except RequestError as error:
                results.append(
                    {"op": spec["op"], "error": {"code": error.code, "message": str(error), "data": error.data}}
                )
    print(json.dumps({"steps": results, "updates": editor.updates, "permissions": editor.permissions}))


asyncio.run(main())
