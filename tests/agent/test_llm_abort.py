"""Stop reaches a model request at every moment: before the server's first byte, between two
chunks, and when the client retries a cut connection; other requests on the pool are untouched.
Each holds for the turns' own flag (`StopSignal`, which calls back) and for a plain
`threading.Event` (looked at now and then)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from agent.llm import ChatClient, StopSignal
from agent.llm.types import ModelReply, TextChunk
from tests.fakellm import Reply, ScriptedLLM

FLAGS = [StopSignal, threading.Event]


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    s = ScriptedLLM()
    s.start()
    yield s
    s.stop()


def _client(server: ScriptedLLM, retries: int = 0) -> ChatClient:
    return ChatClient(base_url=server.base_url, api_key="", model="scripted-model", timeout=30, max_retries=retries)


def _eventually(check: Callable[[], bool]) -> bool:
    for _ in range(100):
        if check():
            return True
        time.sleep(0.05)
    return check()


def _stop_when(condition: Callable[[], bool], flag: type[threading.Event]) -> threading.Event:
    interrupt = flag()

    def watch() -> None:
        _eventually(condition)
        interrupt.set()

    threading.Thread(target=watch, daemon=True).start()
    return interrupt


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("retries", [0, 2])
def test_stop_before_the_first_byte_ends_the_call_and_hangs_up(server, retries, flag):
    server.push(Reply(text="too late", delay=20))
    client = _client(server, retries)
    interrupt = _stop_when(lambda: len(server.chat_requests()) == 1, flag)
    events = list(client.stream([{"role": "user", "content": "hi"}], None, interrupt))
    assert events == [ModelReply("", [], "interrupted")]
    # The server saw the connection closed (and a retry of the client, if any, was cut too).
    assert _eventually(lambda: server.hangups == len(server.chat_requests()) >= 1)
    client.close()


def test_a_request_stop_cut_is_not_sent_again(server):
    """The client retries a dropped connection, and a cut one looks dropped: after Stop no
    second request may reach the server (it would generate an answer nobody reads)."""
    server.push(Reply(text="too late", delay=20))
    client = _client(server, retries=2)
    interrupt = _stop_when(lambda: len(server.chat_requests()) == 1, StopSignal)
    events = list(client.stream([{"role": "user", "content": "hi"}], None, interrupt))
    assert events == [ModelReply("", [], "interrupted")]
    time.sleep(1.5)  # longer than the client's first backoff (at most 0.5 s)
    assert len(server.chat_requests()) == 1 and server.hangups == 1
    client.close()


@pytest.mark.slow
@pytest.mark.parametrize("flag", FLAGS)
def test_stop_between_slow_chunks_keeps_what_arrived(server, flag):
    server.push(Reply(text="abcdefgh", chunk_delay=20))
    client = _client(server)
    interrupt = flag()
    events = []
    for event in client.stream([{"role": "user", "content": "hi"}], None, interrupt):
        events.append(event)
        if isinstance(event, TextChunk):
            interrupt.set()  # the next chunk is 20 s away: the read must be cut
    reply = events[-1]
    assert isinstance(reply, ModelReply) and reply.finish_reason == "interrupted"
    client.close()


@pytest.mark.parametrize("flag", FLAGS)
def test_a_stop_cuts_only_its_own_request(server, flag):
    server.when(lambda body: "slow" in str(body), Reply(text="slow answer", delay=1.5))
    server.when(lambda body: "stop" in str(body), Reply(text="never", delay=20))
    client = _client(server)
    slow: list[object] = []
    other = threading.Thread(
        target=lambda: slow.extend(client.stream([{"role": "user", "content": "slow"}], None, flag()))
    )
    other.start()
    interrupt = _stop_when(lambda: len(server.chat_requests()) == 2, flag)
    stopped = list(client.stream([{"role": "user", "content": "stop"}], None, interrupt))
    other.join(10)
    assert stopped[-1] == ModelReply("", [], "interrupted")
    assert isinstance(slow[-1], ModelReply) and slow[-1].content == "slow answer"
    client.close()


def test_a_stop_signal_calls_back_once_and_a_cancelled_callback_never():
    signal = StopSignal()
    called: list[str] = []
    signal.on_set(lambda: called.append("kept"))
    cancel = signal.on_set(lambda: called.append("cancelled"))
    cancel()
    signal.set()
    signal.set()
    assert called == ["kept"] and signal.is_set()
    signal.on_set(lambda: called.append("late"))  # already set: called at once
    assert called == ["kept", "late"]


def test_requests_reuse_their_threads(server):
    """A model call starts no thread of its own: the next one reuses the last one's."""
    client = _client(server)
    for _ in range(3):
        server.push(Reply(text="ok"))
        list(client.stream([{"role": "user", "content": "hi"}], None, StopSignal()))
    before = {t.ident for t in threading.enumerate() if t.name == "model-request"}
    watchers = {t.ident for t in threading.enumerate() if t.name == "model-reply-stop"}
    for _ in range(5):
        server.push(Reply(text="ok"))
        list(client.stream([{"role": "user", "content": "hi"}], None, StopSignal()))
    after = {t.ident for t in threading.enumerate() if t.name == "model-request"}
    assert before and after == before
    # Nor a thread watching for Stop while the reply is read: Stop calls back.
    assert {t.ident for t in threading.enumerate() if t.name == "model-reply-stop"} <= watchers
    client.close()
