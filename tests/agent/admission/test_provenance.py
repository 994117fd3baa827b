"""Knowledge verification through the real review path: evidence, duplicates, outcomes."""

from __future__ import annotations

import json

import pytest

from agent.chat.runner import AgentSession
from agent.learning.compression import FLUSH_EVIDENCE_RULE
from agent.learning.review import EVIDENCE_RULE
from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange, Message, PendingWrite, SkillOutcome
from knowledge.provenance import Provenance
from knowledge.skills import outcomes
from knowledge.skills.store import SkillStore
from tests.conftest import write_config
from tests.fakellm import Reply
from tests.learning import is_flush, is_review_followup, review_starts, script_review

pytestmark = pytest.mark.django_db(transaction=True)

SAID = "I always deploy with docker compose, and please answer in British English."


def _user_files(home) -> tuple[str, str]:
    mem = home / "memories"
    read = lambda name: (mem / name).read_text() if (mem / name).exists() else ""  # noqa: E731
    return read("MEMORY.md"), read("USER.md")


def _review(agent: AgentSession, kind: str = "memory") -> None:
    future = agent.spawn_review(kind in ("memory", "combined"), kind in ("skill", "combined"))
    run = future.result(30)
    assert run is not None and run.status == "done", run and run.error


def _chat(home, llm, text: str = SAID) -> AgentSession:
    write_config(home, "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n")
    llm.default = lambda b: Reply(text="Noted.")
    agent = AgentSession.open(source="cli")
    list(agent.run_turn(text))
    return agent


def _followup_results(llm) -> list[dict]:
    body = [b for b in llm.chat_requests() if is_review_followup(b)][-1]
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def _save(content: str, evidence=None) -> dict:
    args = {"target": "user", "action": "add", "content": content}
    if evidence is not None:
        args["evidence"] = evidence
    return {"name": "memory", "arguments": args}


@pytest.mark.parametrize(
    "evidence",
    [None, ["I am a senior DevOps engineer at a bank"]],
    ids=["no-evidence", "quote-not-in-conversation"],
)
def test_inferred_fact_is_held_as_unsupported_and_changes_no_file(home, llm, evidence):
    agent = _chat(home, llm)
    script_review(llm, [_save("Senior DevOps engineer at a bank", evidence)])
    _review(agent)
    assert _user_files(home) == ("", "")
    held = PendingWrite.objects.get()
    assert held.unsupported and held.status == "pending"
    assert held.arguments["content"] == "Senior DevOps engineer at a bank"
    assert ("No evidence" in held.reason) if evidence is None else ("does not appear" in held.reason)
    result = _followup_results(llm)[0]
    assert result["success"] is False and result["unsupported"] is True
    # The review's request carried the evidence rule.
    assert EVIDENCE_RULE in review_starts(llm)[0]["messages"][-1]["content"]


def test_write_with_a_real_quote_is_saved_and_linked_to_the_message(home, llm):
    agent = _chat(home, llm)
    # Quote marks, case and spacing differ from what was said; the quote still matches.
    script_review(llm, [_save("Deploys with docker compose", ["I ALWAYS deploy   with “docker compose”"])])
    _review(agent)
    assert "Deploys with docker compose" in _user_files(home)[1]
    assert not PendingWrite.objects.exists()
    change = KnowledgeChange.objects.get(kind="memory")
    said = Message.objects.get(role="user", content=SAID)
    assert change.actor == "review" and change.message_id == said.pk
    assert change.evidence == [{"quote": "I ALWAYS deploy   with “docker compose”", "message_id": said.pk}]


def test_near_duplicate_entry_is_refused_naming_the_similar_one(home, llm):
    agent = _chat(home, llm)
    MemoryStore().add("memory", "Deploys with Docker Compose.", Provenance(actor="user"))
    script_review(llm, [_save("User deploys with docker-compose", ["deploy with docker compose"])])
    _review(agent)
    result = _followup_results(llm)[0]
    assert result["success"] is False
    assert "Deploys with Docker Compose." in result["error"] and "replace" in result["error"]
    assert _user_files(home)[1] == ""
    assert not PendingWrite.objects.exists()


def test_main_agent_write_records_the_turn_message_as_evidence(home, llm):
    write_config(home, "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n")
    llm.push(Reply(tool_calls=[_save("Answers in British English")]), Reply(text="Will do."))
    agent = AgentSession.open(source="cli")
    list(agent.run_turn(SAID))
    change = KnowledgeChange.objects.get(kind="memory")
    said = Message.objects.get(role="user", content=SAID)
    assert change.actor == "agent" and change.message_id == said.pk
    assert change.evidence[0]["quote"] == SAID


SKILL = "---\nname: deploy-app\ndescription: Deploy the app to staging\n---\n# Steps\n1. Run make deploy\n"


def test_skill_with_three_bad_verdicts_is_flagged_and_handed_to_the_next_skill_review(home, llm):
    write_config(home, "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n")
    SkillStore().create("deploy-app", SKILL, prov=Provenance(actor="user"))
    llm.default = lambda b: Reply(text="Deployed (I think).")
    agent = AgentSession.open(source="cli")
    for i in range(3):
        list(agent.run_turn(f"/deploy-app ship build {i}"))
        answer = Message.objects.filter(role="assistant").order_by("-id").first()
        assert answer is not None
        outcomes.give_verdict(answer, "bad", f"It deployed to production instead of staging (build {i})")
    assert SkillOutcome.objects.filter(name="deploy-app", outcome="bad").count() == 3
    assert outcomes.flagged_names() == ["deploy-app"]
    assert outcomes.stats(["deploy-app"])["deploy-app"].needs_review
    script_review(llm, [])
    _review(agent, "skill")
    request = review_starts(llm)[0]["messages"][-1]["content"]
    assert "Skill 'deploy-app' failed in recent uses" in request
    for i in range(3):
        assert f"It deployed to production instead of staging (build {i})" in request
    # Handed over once: the flag clears and the next review is not given them again.
    assert outcomes.flagged_names() == []


def test_tool_error_after_loading_a_skill_is_a_bad_outcome(home, llm):
    write_config(home, "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n")
    SkillStore().create("deploy-app", SKILL, prov=Provenance(actor="user"))
    llm.push(
        Reply(tool_calls=[{"name": "skill_view", "arguments": {"name": "deploy-app"}}]),
        Reply(tool_calls=[{"name": "skill_view", "arguments": {"name": "no-such-skill"}}]),
        Reply(text="Done."),
    )
    agent = AgentSession.open(source="cli")
    list(agent.run_turn("deploy it please"))
    outcome = SkillOutcome.objects.get()
    assert (outcome.name, outcome.via, outcome.outcome) == ("deploy-app", "view", "tool_error")
    assert "no-such-skill" in outcome.detail


@pytest.mark.parametrize("quoted", [False, True], ids=["unquoted", "quoted"])
def test_flush_write_needs_evidence_too(home, llm, quoted):
    write_config(home, "memory:\n  nudge_interval: 0\n  flush_min_turns: 1\nskills:\n  creation_nudge_interval: 0\n")
    llm.default = lambda b: Reply(text="Noted.")
    llm.when(
        is_flush,
        Reply(tool_calls=[_save("Deploys with docker compose", ["deploy with docker compose"] if quoted else None)]),
    )
    agent = AgentSession.open(source="cli")
    list(agent.run_turn(SAID))
    agent.end("test")
    flush = [b for b in llm.chat_requests() if is_flush(b)][0]
    assert FLUSH_EVIDENCE_RULE in flush["messages"][-1]["content"]
    if quoted:
        assert "Deploys with docker compose" in _user_files(home)[1]
        assert KnowledgeChange.objects.get(kind="memory").actor == "flush"
    else:
        assert _user_files(home) == ("", "")
        assert PendingWrite.objects.get().unsupported
