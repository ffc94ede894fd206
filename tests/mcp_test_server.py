"""A small MCP server for keel's tests, written with the SDK: two tools, and a file recording every call.

`python mcp_test_server.py CALLS_FILE` serves over stdio; `--http PORT` serves streamable HTTP on
127.0.0.1:PORT/mcp. It writes its pid to CALLS_FILE.pid where it may, so a test can check it is gone afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from contextlib import suppress
from pathlib import Path

from mcp.server.mcpserver import MCPServer


def build(calls: Path) -> MCPServer:
    server = MCPServer("keel-test")

    def record(tool: str, arguments: dict[str, object]) -> None:
        with calls.open("a", encoding="utf-8") as file:
            file.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")

    @server.tool(description="Add two integers and say the sum.")
    def add(a: int, b: int) -> str:
        record("add", {"a": a, "b": b})
        return f"the sum is {a + b}"

    @server.tool(description="Keep a note: write its text to the server's notes.")
    def note(text: str, title: str = "") -> str:
        record("note", {"text": text, "title": title})
        if text == "fail":
            raise ValueError("this note is refused")
        return f"noted: {title or text}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("calls", type=Path)
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument(
        "--child", action="store_true", help="start a long sleep in a session of its own"
    )
    args = parser.parse_args()
    # a server in a read-only sandbox cannot write it (Landlock, without bwrap's private /tmp)
    with suppress(OSError):
        Path(f"{args.calls}.pid").write_text(str(os.getpid()))
    if args.child:  # a helper process that outlives the server unless someone ends it
        child = subprocess.Popen(["sleep", "300"], start_new_session=True, stdin=subprocess.DEVNULL)
        Path(f"{args.calls}.child").write_text(str(child.pid))
    server = build(args.calls)
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()
