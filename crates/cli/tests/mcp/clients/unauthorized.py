"""Knocks on the HTTP server without its token: through the MCP client (which must fail to
connect), then with plain requests — no token, a wrong one, the right one from another Host or
Origin, and the right one as the server wants it. Reports what the client raised and each
request's status and `WWW-Authenticate` header.
"""

import anyio
import httpx2

from common import config, connect, report

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "unauthorized.py", "version": "1"},
    },
}


async def main():
    cfg = config()
    out = {}
    try:
        async with connect(dict(cfg, token=None)) as client:
            await client.list_tools()
        out["client"] = "connected"
    except Exception as e:  # the client's own error, whatever its type
        out["client"] = f"{type(e).__name__}: {e}"

    url = cfg["url"]
    port = url.split("//")[1].split("/")[0].split(":")[1]
    right = f"Bearer {cfg['token']}"
    attempts = {
        "no_token": {},
        "wrong_token": {"Authorization": "Bearer " + "0" * len(cfg["token"])},
        "other_host": {"Authorization": right, "Host": f"evil.example:{port}"},
        "other_origin": {"Authorization": right, "Origin": "http://evil.example"},
        "right_token": {"Authorization": right},
    }
    async with httpx2.AsyncClient(timeout=10.0) as http:
        for name, headers in attempts.items():
            response = await http.post(
                url,
                json=INITIALIZE,
                headers={"Accept": "application/json, text/event-stream", **headers},
            )
            out[name] = {
                "status": response.status_code,
                "www_authenticate": response.headers.get("www-authenticate"),
            }
    report(out)


anyio.run(main)
