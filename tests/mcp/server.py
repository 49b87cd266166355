"""A small but real MCP server over stdio, for toolrun's tests. Standard library only.

Reads one JSON-RPC message a line on stdin, answers on stdout, logs to stderr (and to
``--log FILE``, one event a line, for the tests to read). Calls run in threads, so a
slow call does not hold up the others and ``notifications/cancelled`` is honoured.

Tools: echo (readOnlyHint), add, write_note (no annotations; writes a file), fail
(isError), slow (sleeps until done or cancelled), crash (the server exits mid-call),
picture (an image plus text), stats (structuredContent), getenv (readOnlyHint),
list.things (readOnlyHint; a name toolrun has to normalise).

Misbehaviour: ``--mode exit`` (exit at start, after a line on stderr), ``--mode garbage``
(a non-JSON line instead of the initialize answer), ``--mode garbage-on-call``,
``--mode silent`` (never answers), ``--ignore-eof`` (keeps running when stdin closes and
ignores SIGTERM), ``--spawn-child`` (leaves a grandchild sleeping in its process group), ``--odd-tools``
(adds ``list_things``, whose toolrun name clashes with ``list.things``, and a tool with
a nonsense schema).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "What to echo."},
                "barrier": {"type": "integer", "description": "Wait until this many calls run."},
            },
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "annotations": {"readOnlyHint": False, "idempotentHint": True},
    },
    {
        "name": "write_note",
        "description": "Write a note to a file.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "text": {"type": "string"},
                "tags": {"type": "array"},
                "meta": {"type": ["object", "null"]},
                "count": {"type": "integer"},
                "final": {"type": "boolean"},
            },
            "required": ["path", "text"],
        },
    },
    {
        "name": "fail",
        "description": "Always fails.",
        "inputSchema": {"type": "object", "properties": {"why": {"type": "string"}}},
    },
    {
        "name": "slow",
        "description": "Sleep; honours notifications/cancelled.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {"name": "crash", "description": "The server exits.", "inputSchema": {"type": "object"}},
    {"name": "picture", "description": "An image.", "inputSchema": {"type": "object"}},
    {
        "name": "stats",
        "description": "Structured output.",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "getenv",
        "description": "An environment variable of the server.",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "list.things",
        "title": "List things",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    },
]

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


class Server:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.write_lock = threading.Lock()
        self.cancelled: dict[Any, threading.Event] = {}
        self.barriers: dict[int, threading.Barrier] = {}
        self.barrier_lock = threading.Lock()

    def log(self, event: str) -> None:
        sys.stderr.write(f"server: {event}\n")
        sys.stderr.flush()
        if self.options.log:
            with open(self.options.log, "a", encoding="utf-8") as f:
                f.write(event + "\n")

    def send(self, message: dict[str, Any]) -> None:
        with self.write_lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    def result(self, request_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if method is None:
            self.log(f"response {json.dumps(message, sort_keys=True)}")
            return
        if self.options.mode == "silent":
            return
        if method == "initialize":
            self.log(f"initialize {json.dumps(params, sort_keys=True)}")
            if self.options.mode == "garbage":
                sys.stdout.write("Hello! I am not JSON-RPC.\n")
                sys.stdout.flush()
                return
            self.result(
                request_id,
                {
                    "protocolVersion": self.options.protocol or params["protocolVersion"],
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "toolrun-test-server", "version": "1.0"},
                },
            )
        elif method == "notifications/initialized":
            self.log("initialized")
            if self.options.ping_client:
                self.send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
                self.send({"jsonrpc": "2.0", "id": "srv-2", "method": "roots/list"})
                self.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": "hello"},
                    }
                )
        elif method == "notifications/cancelled":
            target = params.get("requestId")
            self.log(f"cancelled {target} {params.get('reason', '')}".strip())
            event = self.cancelled.get(target)
            if event is not None:
                event.set()
        elif method == "ping":
            self.result(request_id, {})
        elif method == "tools/list":
            tools = TOOLS
            if self.options.odd_tools:
                tools = [
                    *TOOLS,
                    {"name": "list_things", "inputSchema": {"type": "object"}},
                    {"name": "odd", "annotations": {"readOnlyHint": True},
                     "inputSchema": {"type": "object", "properties": {"x": {"type": "nonsense"}}}},
                ]
            size = self.options.page_size or len(tools)
            start = int(params.get("cursor") or 0)
            page: dict[str, Any] = {"tools": tools[start : start + size]}
            if start + size < len(tools):
                page["nextCursor"] = str(start + size)
            self.log(f"tools/list {start}")
            self.result(request_id, page)
        elif method == "tools/call":
            self.cancelled[request_id] = threading.Event()
            threading.Thread(target=self.call, args=(request_id, params), daemon=True).start()
        elif request_id is not None:
            self.error(request_id, -32601, f"Method not found: {method}")

    def call(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        args = params.get("arguments") or {}
        self.log(f"call {name} {json.dumps(args, sort_keys=True)}")
        if self.options.mode == "garbage-on-call":
            sys.stdout.write("<html>oops</html>\n")
            sys.stdout.flush()
            return
        if name == "echo":
            if args.get("barrier"):
                with self.barrier_lock:
                    barrier = self.barriers.setdefault(
                        args["barrier"], threading.Barrier(args["barrier"], timeout=5)
                    )
                try:
                    barrier.wait()
                except threading.BrokenBarrierError:
                    self.result(request_id, {**text("barrier broken"), "isError": True})
                    return
            self.result(request_id, text(args.get("text", "")))
        elif name == "add":
            self.result(request_id, text(str(args["a"] + args["b"])))
        elif name == "write_note":
            with open(args["path"], "w", encoding="utf-8") as f:
                f.write(args["text"])
            self.result(request_id, text(f"wrote {len(args['text'])} characters"))
        elif name == "fail":
            self.result(
                request_id, {**text(f"it failed: {args.get('why', 'no reason')}"), "isError": True}
            )
        elif name == "slow":
            seconds = float(args.get("seconds", 30))
            if self.cancelled[request_id].wait(seconds):
                self.log(f"slow {request_id} stopped")
                return  # a cancelled request gets no answer
            self.result(request_id, text(f"slept {seconds:g}"))
        elif name == "crash":
            self.log("crashing")
            sys.stderr.write("Traceback: the server fell over\n")
            sys.stderr.flush()
            os._exit(7)
        elif name == "picture":
            self.result(
                request_id,
                {
                    "content": [
                        {"type": "text", "text": "a pixel:"},
                        {"type": "image", "data": PNG, "mimeType": "image/png"},
                        {"type": "resource_link", "uri": "file:///tmp/x.txt", "name": "x"},
                    ]
                },
            )
        elif name == "stats":
            self.result(request_id, {"content": [], "structuredContent": {"files": 3, "ok": True}})
        elif name == "getenv":
            self.result(request_id, text(os.environ.get(args.get("name", ""), "<unset>")))
        elif name == "list.things":
            self.result(request_id, text("a, b, c"))
        else:
            self.error(request_id, -32602, f"Unknown tool: {name}")

    def serve(self) -> None:
        while True:
            line = sys.stdin.readline()
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.error(None, -32700, "Parse error")
                continue
            self.handle(message)
        self.log("stdin closed")
        if self.options.ignore_eof:
            while True:
                time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--log")
    parser.add_argument("--pidfile")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--protocol")
    parser.add_argument("--ignore-eof", action="store_true")
    parser.add_argument("--spawn-child", action="store_true")
    parser.add_argument("--ping-client", action="store_true")
    parser.add_argument("--odd-tools", action="store_true")
    options = parser.parse_args()
    pids = [os.getpid()]
    if options.ignore_eof:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if options.spawn_child:
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        pids.append(child.pid)
    if options.pidfile:
        with open(options.pidfile, "a", encoding="utf-8") as f:
            f.writelines(f"{pid}\n" for pid in pids)
    if options.mode == "exit":
        sys.stderr.write("fatal: the test server refuses to start\n")
        sys.stderr.flush()
        sys.exit(3)
    Server(options).serve()


if __name__ == "__main__":
    main()
