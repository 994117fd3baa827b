"""The tool loop driven through the real openai client against the scripted server."""

from __future__ import annotations

import json
import threading
import time

from agent.llm import ChatClient
from agent.loop import AgentLoop, ModelCalled, TextDelta, ToolFinished, ToolStarted, TurnDone, TurnError
from agent.tools.registry import Tool, ToolContext, ToolRegistry
from agent.tools.results import MAX_RESULT_CHARS, ToolResult
from tests.fakellm import Reply, ScriptedLLM


def _client(server: ScriptedLLM, **kw) -> ChatClient:
    return ChatClient(base_url=server.base_url, api_key="k", model="scripted-model", **kw)


def _slow_tool(name: str, seconds: float) -> Tool:
    def handler(args, ctx):
        time.sleep(seconds)
        return ToolResult.success(echo=args.get("x"))

    return Tool(
        name, "sleeps", {"type": "object", "properties": {"x": {"type": "string"}}}, handler, parallel_safe=True
    )


def _run(loop: AgentLoop, messages, interrupt=None):
    return list(loop.run(messages, interrupt))


def _server():
    s = ScriptedLLM()
    s.start()
    return s


def test_streams_text_token_by_token_and_appends_answer():
    s = _server()
    try:
        s.push(Reply(text="Hello there, friend"))
        msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
        events = _run(AgentLoop(_client(s), ToolRegistry(), ToolContext()), msgs)
        deltas = [e.text for e in events if isinstance(e, TextDelta)]
        assert len(deltas) > 2 and "".join(deltas) == "Hello there, friend"
        assert isinstance(events[-1], TurnDone) and events[-1].final_text == "Hello there, friend"
        assert msgs[-1] == {"role": "assistant", "content": "Hello there, friend"}
        assert s.requests[0]["stream"] is True and s.requests[0]["messages"][1]["content"] == "hi"
    finally:
        s.stop()


def test_tool_call_split_across_chunks_runs_and_result_goes_back():
    s = _server()
    try:
        s.push(
            Reply(tool_calls=[{"name": "echo", "arguments": {"x": "a long argument value " * 3}}]), Reply(text="done")
        )
        reg = ToolRegistry([_slow_tool("echo", 0)])
        msgs = [{"role": "user", "content": "go"}]
        events = _run(AgentLoop(_client(s), reg, ToolContext()), msgs)
        finished = [e for e in events if isinstance(e, ToolFinished)]
        assert len(finished) == 1 and json.loads(finished[0].result)["echo"] == "a long argument value " * 3
        second = s.requests[1]["messages"]
        assert second[-1]["role"] == "tool" and second[-2]["tool_calls"][0]["function"]["name"] == "echo"
        assert [e for e in events if isinstance(e, TurnDone)][0].final_text == "done"
    finally:
        s.stop()


def test_a_result_is_cut_at_its_tools_own_limit_and_stays_json():
    s = _server()
    try:
        s.push(
            Reply(tool_calls=[{"name": "big", "arguments": {}}, {"name": "small", "arguments": {}}]), Reply(text="ok")
        )
        text = "w" * 30_000  # over the default cap, under big's own limit

        def handler(args, ctx):
            return ToolResult.success(text=text)

        reg = ToolRegistry(
            [
                Tool("big", "reads a lot", {"type": "object"}, handler, max_result_chars=50_000),
                Tool("small", "the default cap", {"type": "object"}, handler),
            ]
        )
        events = _run(AgentLoop(_client(s), reg, ToolContext()), [{"role": "user", "content": "go"}])
        big, small = [json.loads(e.result) for e in events if isinstance(e, ToolFinished)]
        assert big == {"success": True, "text": text}
        assert small["truncated"] is True and small["total_chars"] > MAX_RESULT_CHARS
        assert len(small["content"]) == MAX_RESULT_CHARS
    finally:
        s.stop()


def test_independent_tool_calls_run_in_parallel():
    s = _server()
    try:
        calls = [{"name": "meet", "arguments": {"x": str(i)}} for i in range(4)]
        s.push(Reply(tool_calls=calls), Reply(text="all done"))
        # Each call waits at a barrier for all four: run one after another, the first would
        # wait alone until the barrier breaks and every call would fail.
        barrier = threading.Barrier(4, timeout=30)

        def meet(args, ctx):
            barrier.wait()
            return ToolResult.success(echo=args.get("x"))

        reg = ToolRegistry([Tool("meet", "waits for the others", {"type": "object"}, meet, parallel_safe=True)])
        events = _run(AgentLoop(_client(s), reg, ToolContext()), [{"role": "user", "content": "go"}])
        results = [json.loads(e.result) for e in events if isinstance(e, ToolFinished)]
        assert [r.get("echo") for r in results] == ["0", "1", "2", "3"]  # in the order of the calls
    finally:
        s.stop()


def test_unknown_tool_and_malformed_json_are_returned_to_the_model():
    s = _server()
    try:
        s.push(
            Reply(tool_calls=[{"name": "nope", "arguments": {}}, {"name": "echo", "arguments": '{"x": "unterminated'}]),
            Reply(text="recovered"),
        )
        reg = ToolRegistry([_slow_tool("echo", 0)])
        events = _run(AgentLoop(_client(s), reg, ToolContext()), [{"role": "user", "content": "go"}])
        results = [json.loads(e.result) for e in events if isinstance(e, ToolFinished)]
        assert results[0]["success"] is False and "not available" in results[0]["error"]
        assert results[1]["success"] is False and "not valid JSON" in results[1]["error"]
        sent = [m for m in s.requests[1]["messages"] if m["role"] == "tool"]
        assert len(sent) == 2 and "not valid JSON" in sent[1]["content"]
        assert events[-1] == TurnDone(final_text="recovered", iterations=2)
    finally:
        s.stop()


def test_tool_exception_becomes_result():
    def boom(args, ctx):
        raise RuntimeError("disk on fire")

    s = _server()
    try:
        s.push(Reply(tool_calls=[{"name": "boom", "arguments": {}}]), Reply(text="ok then"))
        reg = ToolRegistry([Tool("boom", "fails", {"type": "object", "properties": {}}, boom)])
        events = _run(AgentLoop(_client(s), reg, ToolContext()), [{"role": "user", "content": "go"}])
        fin = [e for e in events if isinstance(e, ToolFinished)][0]
        assert not fin.ok and "disk on fire" in fin.result
    finally:
        s.stop()


def test_iteration_limit_stops_the_turn():
    s = _server()
    try:
        s.default = lambda body: Reply(tool_calls=[{"name": "echo", "arguments": {"x": "again"}}])
        reg = ToolRegistry([_slow_tool("echo", 0)])
        events = _run(AgentLoop(_client(s), reg, ToolContext(), max_iterations=5), [{"role": "user", "content": "go"}])
        assert len(s.requests) == 5
        done = events[-1]
        assert isinstance(done, TurnDone) and done.hit_limit and done.iterations == 5
        assert sum(isinstance(e, ModelCalled) for e in events) == 5
    finally:
        s.stop()


def test_interrupt_stops_a_slow_stream_and_keeps_partial_text():
    s = _server()
    try:
        s.push(Reply(text="word " * 200, chunk_delay=0.02))
        interrupt = threading.Event()
        msgs = [{"role": "user", "content": "talk"}]
        loop = AgentLoop(_client(s), ToolRegistry(), ToolContext())
        got = []
        for ev in loop.run(msgs, interrupt):
            got.append(ev)
            if isinstance(ev, TextDelta) and len(got) == 5:
                interrupt.set()
        done = got[-1]
        assert isinstance(done, TurnDone) and done.interrupted
        assert 0 < len(done.final_text) < len("word " * 200)
        assert msgs[-1]["content"] == done.final_text
    finally:
        s.stop()


def test_interrupt_before_tools_marks_them_not_run():
    s = _server()
    try:
        interrupt = threading.Event()
        ran = []

        def handler(args, ctx):
            ran.append(1)
            return ToolResult.listing()

        def reply(body):
            interrupt.set()  # the user presses stop while the model is answering with calls
            return Reply(tool_calls=[{"name": "t", "arguments": {}}])

        s.push(reply)
        reg = ToolRegistry([Tool("t", "", {"type": "object", "properties": {}}, handler)])
        events = _run(AgentLoop(_client(s), reg, ToolContext()), [{"role": "user", "content": "x"}], interrupt)
        assert not ran
        assert isinstance(events[-1], TurnDone) and events[-1].interrupted
    finally:
        s.stop()


def test_http_500_ends_turn_with_clear_error_after_retries():
    s = _server()
    try:
        s.default = lambda body: Reply(status=500, error_message="upstream exploded")
        events = _run(
            AgentLoop(_client(s, max_retries=2), ToolRegistry(), ToolContext()), [{"role": "user", "content": "x"}]
        )
        err = events[-1]
        assert isinstance(err, TurnError) and "HTTP 500" in err.message and "upstream exploded" in err.message
        assert len(s.requests) == 3  # first try + 2 retries with backoff
    finally:
        s.stop()


def test_429_is_retried_then_succeeds():
    s = _server()
    try:
        s.push(Reply(status=429), Reply(text="after the wait"))
        events = _run(
            AgentLoop(_client(s, max_retries=2), ToolRegistry(), ToolContext()), [{"role": "user", "content": "x"}]
        )
        assert isinstance(events[-1], TurnDone) and events[-1].final_text == "after the wait"
    finally:
        s.stop()


def test_the_first_try_and_a_retry_carry_the_same_request():
    """The first try goes around the openai client's request path, its retries through it: the
    server must not tell them apart (the key, the client's own headers, the body)."""
    s = _server()
    try:
        s.push(Reply(status=429), Reply(text="after the wait"))
        client = ChatClient(base_url=s.base_url, api_key="sk-test", model="m", max_retries=2)
        events = _run(AgentLoop(client, ToolRegistry(), ToolContext()), [{"role": "user", "content": "é x"}])
        assert isinstance(events[-1], TurnDone) and events[-1].final_text == "after the wait"
        first, retry = s.request_headers
        per_try = {"x-stainless-retry-count", "x-stainless-read-timeout", "content-length"}
        assert first["authorization"] == "Bearer sk-test" and first["user-agent"].startswith("OpenAI/Python")
        assert {k: v for k, v in first.items() if k not in per_try} == {
            k: v for k, v in retry.items() if k not in per_try
        }
        assert s.requests[0] == s.requests[1]
    finally:
        s.stop()


def test_server_down_is_a_clear_error():
    s = _server()
    url = s.base_url
    s.stop()
    client = ChatClient(base_url=url, api_key="k", model="m", max_retries=0)
    events = _run(AgentLoop(client, ToolRegistry(), ToolContext()), [{"role": "user", "content": "x"}])
    assert isinstance(events[-1], TurnError) and "not reachable" in events[-1].message


def test_slow_server_times_out_with_clear_error():
    s = _server()
    try:
        s.push(Reply(text="late", delay=3))
        client = _client(s, timeout=0.5, max_retries=0)
        events = _run(AgentLoop(client, ToolRegistry(), ToolContext()), [{"role": "user", "content": "x"}])
        assert isinstance(events[-1], TurnError) and "did not answer in time" in events[-1].message
    finally:
        s.stop()


def test_cut_off_stream_keeps_partial_text_and_reports():
    s = _server()
    try:
        s.push(Reply(text="partial answer that will be cut", cut_off=True))
        msgs = [{"role": "user", "content": "x"}]
        events = _run(AgentLoop(_client(s, max_retries=0), ToolRegistry(), ToolContext()), msgs)
        err = events[-1]
        assert isinstance(err, TurnError) and "cut off" in err.message
        assert err.partial_text and msgs[-1] == {"role": "assistant", "content": err.partial_text}
    finally:
        s.stop()


def test_garbage_reply_is_a_clear_error():
    s = _server()
    try:
        s.default = lambda body: Reply(garbage=True)
        events = _run(
            AgentLoop(_client(s, max_retries=0), ToolRegistry(), ToolContext()), [{"role": "user", "content": "x"}]
        )
        assert isinstance(events[-1], TurnError)
        assert "Traceback" not in events[-1].message
    finally:
        s.stop()


def test_tools_started_events_precede_results():
    s = _server()
    try:
        s.push(Reply(tool_calls=[{"name": "echo", "arguments": {"x": "1"}}]), Reply(text="k"))
        events = _run(
            AgentLoop(_client(s), ToolRegistry([_slow_tool("echo", 0)]), ToolContext()),
            [{"role": "user", "content": "x"}],
        )
        kinds = [type(e).__name__ for e in events]
        assert kinds.index("ToolStarted") < kinds.index("ToolFinished")
        assert any(isinstance(e, ToolStarted) and e.name == "echo" for e in events)
    finally:
        s.stop()


def test_before_tools_sees_one_replys_calls_before_any_runs():
    s = _server()
    try:
        s.push(Reply(tool_calls=[{"name": "echo", "arguments": {"x": "a"}}, {"name": "echo", "arguments": {"x": "b"}}]))
        s.push(Reply(text="done"))
        seen: list[tuple[str, int]] = []
        ran: list[str] = []

        def echo(args, ctx):
            ran.append(args["x"])
            return ToolResult.success()

        def before(calls):
            seen.append((",".join(json.loads(c.arguments)["x"] for c in calls), len(ran)))

        reg = ToolRegistry([Tool("echo", "echo", {"type": "object"}, echo)])
        _run(AgentLoop(_client(s), reg, ToolContext(), before_tools=before), [{"role": "user", "content": "go"}])
        assert seen == [("a,b", 0)] and ran == ["a", "b"]
    finally:
        s.stop()


def test_a_plain_completion_reports_its_usage():
    s = _server()
    try:
        s.push(Reply(text='{"entries": []}', prompt_tokens=321, completion_tokens=12))
        reply = _client(s).completion([{"role": "user", "content": "check"}], max_tokens=50)
        assert reply.content == '{"entries": []}'
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (321, 12)
        assert "tools" not in s.requests[0] and not s.requests[0].get("stream")
    finally:
        s.stop()


def test_a_run_no_one_can_stop_starts_no_thread_watching_for_stop():
    """A review's or flush's run passes no flag; its model calls still wait without a thread
    looking at one every 0.2 s while the reply streams."""
    s = _server()
    try:
        watchers = {t.ident for t in threading.enumerate() if t.name == "model-reply-stop"}
        s.push(Reply(text="a slow reply", chunk_delay=0.05))
        events = _run(AgentLoop(_client(s), ToolRegistry(), ToolContext()), [{"role": "user", "content": "hi"}])
        assert isinstance(events[-1], TurnDone) and events[-1].final_text == "a slow reply"
        assert {t.ident for t in threading.enumerate() if t.name == "model-reply-stop"} <= watchers
    finally:
        s.stop()
