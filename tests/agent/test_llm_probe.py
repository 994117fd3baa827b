"""The capability probe against scripted servers that lack one feature each."""

from __future__ import annotations

import pytest

from agent.llm import ChatClient, MemoryCapabilityStore
from agent.llm.probe import probe
from tests.fakellm import Reply, ScriptedLLM
from tests.wire import REFUSAL_CASES
from tests.wire.replay import uses

PROBED = ("tools", "stream_tools", "system_role", "stream_options")


@pytest.fixture
def server():
    s = ScriptedLLM()
    s.start()
    s.default = lambda body: Reply(tool_calls=[{"name": "ping", "arguments": {"text": "hi"}}]) if body.get("tools") \
        else Reply(text="ok")  # fmt: skip
    yield s
    s.stop()


def _probe(server: ScriptedLLM, store: MemoryCapabilityStore):
    client = ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store)
    try:
        return {step.key: step for step in probe(client)}
    finally:
        client.close()


def test_a_complete_server_has_every_feature(server):
    store = MemoryCapabilityStore()
    steps = _probe(server, store)
    assert {k: s.ok for k, s in steps.items()} == {"chat": True, **{k: True for k in PROBED}}
    saved = store.load(server.base_url, "m") or {}
    assert all(saved[k] is True for k in PROBED) and saved["probed_at"]


@pytest.mark.parametrize("case", [c for c in REFUSAL_CASES if c.refuses in PROBED], ids=str)
def test_a_server_lacking_one_feature_is_found_out(server, case):
    server.when(uses(case.refuses), Reply(raw=case.raw))
    store = MemoryCapabilityStore()
    steps = _probe(server, store)
    assert steps[case.refuses].ok is False
    others = {k: s.ok for k, s in steps.items() if k != case.refuses}
    assert all(v is True for v in others.values()), others
    assert (store.load(server.base_url, "m") or {})[case.refuses] is False


def test_model_that_ignores_the_tool_is_reported_plainly(server):
    server.default = lambda body: Reply(text="pong")
    steps = _probe(server, MemoryCapabilityStore())
    assert steps["tools"].ok is True and "without calling the tool" in steps["tools"].detail


def test_unreachable_server_stops_after_the_first_check():
    s = ScriptedLLM()
    s.start()
    url = s.base_url
    s.stop()
    client = ChatClient(base_url=url, api_key="k", model="m", max_retries=0)
    steps = probe(client)
    assert len(steps) == 1 and steps[0].ok is None and "not reachable" in steps[0].detail
