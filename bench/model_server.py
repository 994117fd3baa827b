"""The scripted model server (tests/fakellm.py) in a process of its own, for the load benchmarks.

In the benchmark's own process, the server's threads (one per streaming request, a `sleep` and a
write per chunk) fought the load client for the GIL: at 50 sessions the raw client reached only
83% of ideal, so the figure measured the benchmark, not the product. Here the server has its own
interpreter, as a real model server would; the parent scripts it with one JSON line on stdin
(answered "ok"), replies being data, since functions cannot cross processes:

    {"default": {"text": ..., "delay": ..., "chunk_delay": ...},
     "rules": [{"prefixes": [...], "last_role": "user", "reply": {...}}]}

A rule matches a request with a user message starting with one of `prefixes` and whose last
message has the role `last_role`; "{n}" in a reply's tool-call arguments becomes how many
requests the rule has answered. `{"count": true}` answers with the rule counts as JSON.

    from bench.model_server import ModelProcess
    with ModelProcess() as model:
        model.script({"default": {"text": "hi", "delay": 0.3}})
        ... model.base_url ... model.cpu_seconds() ...
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from types import TracebackType
from typing import Any

from bench.common import ROOT, cpu_seconds
from tests.fakellm import Reply, ScriptedLLM


def _reply(spec: dict[str, Any], n: int) -> Reply:
    calls = [
        {**call, "arguments": json.loads(json.dumps(call.get("arguments", {})).replace("{n}", str(n)))}
        for call in spec.get("tool_calls", [])
    ]
    return Reply(**{**spec, "tool_calls": calls})


def _matches(rule: dict[str, Any], body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != rule.get("last_role", messages[-1].get("role")):
        return False
    return any(
        m.get("role") == "user"
        and isinstance(m.get("content"), str)
        and m["content"].startswith(tuple(rule["prefixes"]))
        for m in messages
    )


class _Script:
    """The current script, swapped whole by the parent; read on the server's request threads."""

    def __init__(self, server: ScriptedLLM) -> None:
        self.server = server
        self.lock = threading.Lock()
        self.spec: dict[str, Any] = {"default": {"text": "ok"}, "rules": []}
        self.counts: list[int] = []
        server.default = self.reply

    def set(self, spec: dict[str, Any]) -> None:
        with self.lock:
            self.spec = spec
            self.counts = [0] * len(spec.get("rules", []))

    def reply(self, body: dict[str, Any]) -> Reply:
        self.server.requests.clear()  # thousands of requests: keep the recorder from growing
        with self.lock:
            for i, rule in enumerate(self.spec.get("rules", [])):
                if _matches(rule, body):
                    self.counts[i] += 1
                    return _reply(rule["reply"], self.counts[i])
            return _reply(self.spec["default"], 0)


def serve() -> None:
    """The child: print the base URL, then obey one JSON command per stdin line until EOF."""
    server = ScriptedLLM()
    script = _Script(server)
    server.start()
    print(server.base_url, flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command.get("count"):
            with script.lock:
                print(json.dumps(script.counts), flush=True)
        else:
            script.set(command)
            print("ok", flush=True)
    server.stop()


class ModelProcess:
    """The parent's handle on the child server."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.model_server"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        self._in, self._out = self.process.stdin, self.process.stdout
        self.base_url = self._out.readline().strip()
        if not self.base_url.startswith("http://"):
            self.stop()
            raise RuntimeError(f"the scripted model server did not start (it said {self.base_url!r})")

    def _ask(self, command: dict[str, Any]) -> str:
        self._in.write(json.dumps(command) + "\n")
        self._in.flush()
        return self._out.readline().strip()

    def script(self, spec: dict[str, Any]) -> None:
        if self._ask(spec) != "ok":
            raise RuntimeError("the scripted model server did not take the script")

    def counts(self) -> list[int]:
        counts: list[int] = json.loads(self._ask({"count": True}))
        return counts

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self._in.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> ModelProcess:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()


if __name__ == "__main__":
    serve()
