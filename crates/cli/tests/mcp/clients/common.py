"""Shared by the client scripts of crates/cli/tests/mcp.rs.

Each script takes one argument, a JSON object written by the Rust test: how to reach the
server (`transport`: "stdio" with `command`, `args`, `cwd` and `env`, or "http" with `url` and
`token`), which protocol to negotiate (`mode`: "legacy" for the initialize handshake, "auto"
for the 2026-07-28 discovery the client prefers), and what to do. It prints one JSON object,
its report, on stdout.
"""

import contextlib
import json
import os
import sys
import time

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def config():
    return json.loads(sys.argv[1])


@contextlib.asynccontextmanager
async def connect(cfg, **client_args):
    """The connected client, over the transport `cfg` names."""
    if cfg["transport"] == "stdio":
        params = StdioServerParameters(
            command=cfg["command"], args=cfg["args"], cwd=cfg["cwd"], env=cfg["env"]
        )
        async with Client(params, mode=cfg["mode"], **client_args) as client:
            yield client
        return
    headers = {}
    if cfg.get("token"):
        headers["Authorization"] = f"Bearer {cfg['token']}"
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(cfg["url"], http_client=http)
        async with Client(transport, mode=cfg["mode"], **client_args) as client:
            yield client


def server_pid(cfg):
    """The server's process: given for HTTP; for stdio, the one child of this process."""
    if cfg.get("server_pid"):
        return cfg["server_pid"]
    me = os.getpid()
    children = []
    for task in os.listdir(f"/proc/{me}/task"):
        with open(f"/proc/{me}/task/{task}/children") as f:
            children += [int(pid) for pid in f.read().split()]
    return children[0] if len(children) == 1 else None


def rss_kb(pid):
    """The resident memory of `pid` in KiB (VmRSS), or None."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def report(value):
    print(json.dumps(value), flush=True)


def now_ms(since):
    return round((time.monotonic() - since) * 1000, 1)
