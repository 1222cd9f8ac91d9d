#!/usr/bin/env python3
"""Writes the start-up order file of `golem-forge` (see scripts/startup-order, which builds the
binary and calls this): the names of the functions that short runs execute.

Usage: startup_order.py OUTPUT BINARY...

Each BINARY must be a release build with its symbol table. Each scenario below runs under
valgrind's callgrind with instruction-level output; every executed address inside the binary's
.text is mapped to the function symbol holding it (`nm`), and the names of all such functions,
ordered by their address in that build (which keeps each crate's functions together), are
written to OUTPUT: the first binary's, then each next one's not already listed. A one-turn `run` talks to a small OpenAI-compatible mock
served by this script, the same shape of server the start-up benchmark uses.
"""

import bisect
import http.server
import json
import os
import socketserver
import subprocess
import sys
import tempfile
import threading


def chunk(delta, finish=None):
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m1",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(body) + "\n\n"


def text_reply():
    return (
        chunk({"role": "assistant"})
        + chunk({"content": "Hello from "})
        + chunk({"content": "the mock."})
        + chunk({}, "stop")
        + "data: [DONE]\n\n"
    )


def write_reply():
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "write_file",
            "arguments": json.dumps({"path": "/out/note.txt", "content": "hello\n"}),
        },
    }
    return (
        chunk({"role": "assistant"})
        + chunk({"tool_calls": [call]})
        + chunk({}, "tool_calls")
        + "data: [DONE]\n\n"
    )


class Mock(http.server.BaseHTTPRequestHandler):
    """Answers with a text, or with a write_file call when the last user message asks to
    write and no tool result is in the conversation yet."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        messages = request.get("messages", [])
        answered = any(m.get("role") == "tool" for m in messages)
        users = [m for m in messages if m.get("role") == "user"]
        asks_write = bool(users) and "write" in json.dumps(users[-1].get("content"))
        body = (write_reply() if asks_write and not answered else text_reply()).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def program(port):
    """A program directory like the benchmark's: one rw zone, the filesystem tools."""
    root = tempfile.mkdtemp(prefix="golem-forge-order-")
    with open(os.path.join(root, "golem-forge.config.yaml"), "w") as f:
        f.write(f"providers:\n  mock:\n    base_url: http://127.0.0.1:{port}/v1\n")
    os.mkdir(os.path.join(root, "out"))
    with open(os.path.join(root, "main.worker"), "w") as f:
        f.write(
            "---\nname: main\ndescription: the main worker\nmodel: mock:m1\n"
            "sandbox:\n  zones:\n    - name: out\n      mode: rw\n"
            "toolsets:\n  filesystem: {}\n---\nYou are the main worker.\n"
        )
    return root


# The launches whose code is placed first: the floor of any run, a one-turn run (text, JSON
# events, a tool call approved by mode), the offline `test` model of the README's first
# command, and `check`.
SCENARIOS = [
    ["--version"],
    ["run", "main.worker", "hi"],
    ["run", "main.worker", "hi", "--json"],
    ["run", "main.worker", "--approval", "approve_all", "write a note"],
    ["run", "main.worker", "--model", "test", "hi"],
    ["check", "main.worker"],
]


def text_range(binary):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == ".text":
            start, size = int(parts[3], 16), int(parts[5], 16)
            return start, start + size
    sys.exit(f"{binary} has no .text section")


def functions(binary):
    out = subprocess.run(
        ["nm", "--defined-only", "-S", binary], capture_output=True, text=True, check=True
    )
    symbols = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            symbols.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    if not symbols:
        sys.exit(f"{binary} has no symbols: build it with CARGO_PROFILE_RELEASE_STRIP=false")
    symbols.sort()
    return symbols


def executed(profile, low, high):
    """The executed instruction addresses in [low, high) of a callgrind file written with
    --dump-instr=yes (positions absolute as 0x…, or relative to the previous one as +n/-n)."""
    addresses = set()
    current = 0
    with open(profile) as f:
        for line in f:
            if not line or line[0] not in "0123456789+-*":
                continue
            token = line.split()[0]
            if token.startswith("0x"):
                current = int(token, 16)
            elif token[0] == "+":
                current += int(token[1:], 0)
            elif token[0] == "-":
                current -= int(token[1:], 0)
            elif token != "*":
                continue
            if low <= current < high:
                addresses.add(current)
    return addresses


def profile(binary, root, env):
    """The functions of `binary` the scenarios execute, as (address, size, name), by address."""
    low, high = text_range(binary)
    symbols = functions(binary)
    starts = [s[0] for s in symbols]
    hot = {}
    unmatched = 0
    for args in SCENARIOS:
        out = os.path.join(root, "callgrind.out")
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=yes",
             f"--callgrind-out-file={out}", binary, *args],
            cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )
        if run.returncode != 0:
            sys.exit(f"golem-forge {' '.join(args)} failed ({run.returncode}):\n{run.stderr}")
        addresses = executed(out, low, high)
        os.remove(out)
        before = len(hot)
        for address in addresses:
            i = bisect.bisect_right(starts, address) - 1
            if i >= 0 and symbols[i][0] <= address < symbols[i][0] + max(symbols[i][1], 1):
                hot[symbols[i][2]] = symbols[i]
            else:
                unmatched += 1
        print(f"  golem-forge {' '.join(args)}: {len(addresses)} instructions, "
              f"{len(hot) - before} more functions")
    ordered = sorted(hot.values())
    size = sum(s[1] for s in ordered)
    print(f"  {len(ordered)} functions, {size / 1024:.0f} KiB of {(high - low) / 1024:.0f} KiB "
          f"of code ({unmatched} executed addresses outside any symbol)")
    return ordered


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    output, binaries = sys.argv[1], [os.path.abspath(b) for b in sys.argv[2:]]
    server = Server(("127.0.0.1", 0), Mock)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root = program(server.server_address[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_FORGE_")}
    env["NO_COLOR"] = "1"

    names = []
    listed = set()
    for binary in binaries:
        print(binary)
        for _, _, name in profile(binary, root, env):
            if name not in listed:
                listed.add(name)
                names.append(name)
    server.shutdown()

    with open(output + ".tmp", "w") as f:
        f.write("# The functions short golem-forge runs execute, placed first by the release\n")
        f.write("# link (crates/cli/build.rs). Written by scripts/startup-order; do not edit.\n")
        for name in names:
            f.write(name + "\n")
    os.replace(output + ".tmp", output)
    print(f"{output}: {len(names)} names")


if __name__ == "__main__":
    main()
