"""A scripted OpenAI-compatible chat-completions server on loopback.

The only stand-in in the test suite: it speaks the real wire protocol (JSON and server-sent
events, tool calls split across chunks, usage, HTTP errors, slow and cut-off replies) so the
real `openai` client, the loop and the runner are exercised end to end. Every request body is
recorded so tests can assert what the model was sent.

Replies are chosen in this order: the first matching rule (`when(pred, reply)`), then the
queue (`push(reply)`), then `default` (a plain "ok" answer).

A `Reply(raw=Raw(...))` replays bytes recorded from a real server (tests/wire/): the status,
the headers and the body or server-sent events exactly as given, `[DONE]` included or not.

Structured output: a request's `response_format` is recorded with the rest of its body, and
`refuse_response_format(...)` answers every request carrying one with a server's refusal.
Embeddings: POST /v1/embeddings answers 404 (as a chat-only server) until a test calls
`serve_embeddings(...)`; then each input gets `embedding(text)`: the vector a real small model,
all-MiniLM-L6-v2 (tests/embedding_model.py), gives it, so texts alike in meaning lie close. Those requests are kept apart (`embedding_requests`), so
"the last chat request" stays the chat's.
"""

from __future__ import annotations

import functools
import json
import select
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests import embedding_model


@dataclass
class Raw:
    """A recorded reply, written as is. `events` items: a dict is sent as one `data:` event, a
    str or bytes is written verbatim (comments, `data: [DONE]`, a UTF-8 character split in two)."""

    status: int = 200
    body: Any = None  # JSON value for a non-streamed reply, or a str written as is
    events: list[dict[str, Any] | str | bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments" (str|dict), "id"?}
    status: int = 200
    error_message: str = "scripted error"
    delay: float = 0.0  # seconds before the response starts
    chunk_delay: float = 0.0  # seconds between streamed chunks
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    send_usage: bool = True
    cut_off: bool = False  # stop the stream mid-way, no [DONE]
    garbage: bool = False  # a 200 response whose body is not JSON / not SSE
    finish_reason: str | None = None
    raw: Raw | None = None  # a recorded reply from a real server, replayed byte for byte


ReplySpec = Reply | Callable[[dict[str, Any]], Reply]

EMBEDDING_DIMS = embedding_model.DIMENSIONS


def embedding(text: str) -> list[float]:
    """What the served model, all-MiniLM-L6-v2, answers for `text`: a unit vector of 384 floats."""
    return embedding_model.model().embed([text])[0]


class _Server(ThreadingHTTPServer):
    # The default backlog (5) refuses connections when dozens of sessions call at once
    # (bench/live.py drives 100).
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing a connection kept open for its next request is how keep-alive ends,
        # not an error worth a traceback in the test output.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def last_user_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages", [])):
        if msg.get("role") == "user":
            content = msg.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


class ScriptedLLM:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []  # of each chat request, in order
        self.queue: list[ReplySpec] = []
        self.rules: list[tuple[Callable[[dict[str, Any]], bool], ReplySpec, list[int]]] = []
        self.default: ReplySpec = lambda body: Reply(text="ok")
        self.models: list[str] | None = ["scripted-model"]  # what GET /v1/models lists; None: 404
        self.hangups = 0  # requests whose client closed the connection while the reply was delayed
        self.embeddings_served = False  # POST /v1/embeddings: 404 until `serve_embeddings`
        self.embedding_requests: list[dict[str, Any]] = []
        self._embedding_replies: list[Raw] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------
    def push(self, *replies: ReplySpec) -> None:
        with self._lock:
            self.queue.extend(replies)

    def when(self, pred: Callable[[dict[str, Any]], bool], reply: ReplySpec, times: int | None = None) -> None:
        """Answer requests matching `pred` with `reply` (at most `times` times)."""
        with self._lock:
            self.rules.append((pred, reply, [times if times is not None else -1]))

    def refuse_response_format(self, message: str = "response_format is not supported", status: int = 400) -> None:
        """Answer every request that carries `response_format` with `status` and `message`, as
        a server without structured output does (a `when` rule: the same request without it is
        answered as usual). For a recorded body, use `when` with a `Reply(raw=...)`."""
        self.when(lambda body: "response_format" in body, Reply(status=status, error_message=message))

    def serve_embeddings(self, *replies: Raw) -> None:
        """Serve POST /v1/embeddings: `replies` first, one per request (a recorded refusal, a
        malformed answer), then `embedding()` of each input text."""
        with self._lock:
            self.embeddings_served = True
            self._embedding_replies.extend(replies)

    def _embed(self, body: dict[str, Any]) -> Raw:
        with self._lock:
            self.embedding_requests.append(body)
            if not self.embeddings_served:
                return Raw(status=404, body={"error": {"message": "404 page not found"}})
            if self._embedding_replies:
                return self._embedding_replies.pop(0)
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts if isinstance(texts, list) else []
        vectors = embedding_model.model().embed([str(t) for t in texts])
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        tokens = sum(len(str(t).split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return Raw(body={"object": "list", "data": data, "model": body.get("model", "scripted-model"), "usage": usage})

    def _choose(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            spec: ReplySpec | None = None
            for pred, reply, left in self.rules:
                if left[0] != 0 and pred(body):
                    left[0] -= 1
                    spec = reply
                    break
            if spec is None:
                spec = self.queue.pop(0) if self.queue else self.default
        return spec(body) if callable(spec) else spec

    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests)

    # -- server ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models") and owner.models is not None:
                    listed = [{"id": name, "object": "model"} for name in owner.models]
                    self._json(200, {"object": "list", "data": listed})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._json(400, {"error": {"message": "bad json"}})
                    return
                if self.path.rstrip("/").endswith("/embeddings"):
                    self._raw(owner._embed(body))
                    return
                with owner._lock:
                    owner.request_headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = owner._choose(body)
                if reply.delay and self._client_left(reply.delay):
                    with owner._lock:
                        owner.hangups += 1
                    return
                try:
                    if reply.raw is not None:
                        self._raw(reply.raw)
                    elif reply.status != 200:
                        self._json(reply.status, {"error": {"message": reply.error_message, "type": "scripted"}})
                    elif reply.garbage:
                        data = b"<html>this is not an API</html>"
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                    elif body.get("stream"):
                        self._stream(body, reply)
                    else:
                        self._json(200, owner._completion(body, reply))
                except (BrokenPipeError, ConnectionResetError):
                    return

            def _client_left(self, seconds: float) -> bool:
                """Wait `seconds` before answering, as a slow model does; True if the client
                closed the connection meanwhile (a real server then stops generating)."""
                deadline = time.monotonic() + seconds
                while (left := deadline - time.monotonic()) > 0:
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
                    if readable:
                        try:
                            if self.connection.recv(1, socket.MSG_PEEK) == b"":
                                return True
                        except OSError:
                            return True
                        time.sleep(min(left, 0.05))  # a pipelined byte, not a hang-up: keep waiting
                return False

            def _raw(self, raw: Raw) -> None:
                self.send_response(raw.status)
                for key, value in raw.headers.items():
                    self.send_header(key, value)
                if raw.events is None:
                    data = raw.body.encode() if isinstance(raw.body, str) else json.dumps(raw.body).encode()
                    if "Content-Type" not in raw.headers:
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if "Content-Type" not in raw.headers:
                    self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in raw.events:
                    if isinstance(event, dict):
                        data = b"data: " + json.dumps(event).encode() + b"\n\n"
                    else:
                        data = event.encode() if isinstance(event, str) else event
                    self.wfile.write(data)
                    self.wfile.flush()
                self.close_connection = True

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                chunks = owner._chunks(body, reply)
                for i, chunk in enumerate(chunks):
                    if reply.cut_off and i >= max(1, len(chunks) // 2):
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                    if reply.chunk_delay:
                        time.sleep(reply.chunk_delay)
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # stop() waits for the serving loop to notice: polled every 0.5 s by default, that is half a
        # second of idle time per test across the whole suite.
        serve = functools.partial(self._server.serve_forever, poll_interval=0.02)
        self._thread = threading.Thread(target=serve, name="scripted-llm", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- wire format ---------------------------------------------------------------------------
    @staticmethod
    def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
        completion = reply.completion_tokens
        if completion is None:
            completion = max(1, len(reply.text) // 4 + 10 * len(reply.tool_calls))
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    @staticmethod
    def _calls(reply: Reply) -> list[dict[str, Any]]:
        calls = []
        for i, tc in enumerate(reply.tool_calls):
            args = tc.get("arguments", {})
            calls.append(
                {
                    "id": tc.get("id") or f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": tc["name"], "arguments": args if isinstance(args, str) else json.dumps(args)},
                    "index": i,
                }
            )
        return calls

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        calls = self._calls(reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or (None if calls else "")}
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:10]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted-model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": reply.finish_reason or ("tool_calls" if calls else "stop"),
                }
            ],
            "usage": self._usage(body, reply),
        }

    def _chunks(self, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:10]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "scripted-model"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": ""})]
        # Stream text a few characters at a time so token-by-token rendering is visible.
        text = reply.text
        for i in range(0, len(text), 4):
            out.append(chunk({"content": text[i : i + 4]}))
        for call in self._calls(reply):
            args = call["function"]["arguments"]
            out.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": call["index"],
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["function"]["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            # Arguments split across several chunks, as real servers do.
            step = max(1, len(args) // 3)
            for j in range(0, len(args), step):
                out.append(
                    chunk({"tool_calls": [{"index": call["index"], "function": {"arguments": args[j : j + step]}}]})
                )
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        out.append(chunk({}, finish))
        if reply.send_usage and (body.get("stream_options") or {}).get("include_usage"):
            out.append({**base, "choices": [], "usage": self._usage(body, reply)})
        return out
