"""1. Agent overhead per model call: a turn through AgentSession against the raw `openai` client
sending the very same request (the body the agent just sent, replayed) to the same scripted
server, interleaved turn by turn. The difference of the medians is what the product adds per
model call: storing the messages, counters, the session row, building events."""

from __future__ import annotations

import time

import openai

from bench.common import QUIET_CONFIG, Figure, django_setup, figure_from, interleaved, temp_home

SCALES = {"full": 80, "tiny": 3}
FRESH_EVERY = 20  # a new session now and then, so the history (and the request) stays typical


def run(scale: str) -> list[Figure]:
    from tests.fakellm import Reply, ScriptedLLM

    server = ScriptedLLM()
    server.default = lambda body: Reply(text="A short answer of a few words. " * 4)
    server.start()
    django_setup(
        temp_home(),
        QUIET_CONFIG,
        {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": "bench"},
    )
    from agent.chat.runner import AgentSession

    raw = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=120)
    state: dict[str, object] = {"agent": AgentSession.open(source="cli"), "body": None}

    def product(i: int) -> float:
        if i >= 0 and i % FRESH_EVERY == 0:
            state["agent"].close()  # type: ignore[attr-defined]
            state["agent"] = AgentSession.open(source="cli")
        agent = state["agent"]
        t = time.perf_counter()
        for _ in agent.run_turn(f"question {i}"):  # type: ignore[attr-defined]
            pass
        took = time.perf_counter() - t
        state["body"] = server.chat_requests()[-1]
        return took * 1000

    def reference(i: int) -> float:
        body = dict(state["body"])  # type: ignore[call-overload]
        t = time.perf_counter()
        stream = raw.chat.completions.create(**body)
        for _ in stream:
            pass
        return (time.perf_counter() - t) * 1000

    s = interleaved(product, reference, SCALES[scale])
    server.stop()
    f = figure_from("1", "overhead per model call (turn via AgentSession)", "ms", s, reference="raw openai client")
    assert f.median is not None and f.ref_median is not None and f.p95 is not None and f.ref_p95 is not None
    added = f.median - f.ref_median
    f.result = f"+{added:.1f} ms median, +{f.p95 - f.ref_p95:.1f} ms p95"
    f.goal = "< 5 ms"
    f.met = added < 5
    return [f]
