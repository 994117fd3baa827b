"""`manage.py eval_learning` against two scripted reviewers: a careful one and a sloppy one that
invents facts, misattributes them and repeats itself. The evidence rule raises the sloppy one's
precision, because what it invents has no quote in the conversation."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agent.learning_eval.run import load_cases
from knowledge.models import ChatSession, PendingWrite, ReviewRun
from tests.fakellm import Reply
from tests.learning import is_review_followup, is_review_start, script_verifier

pytestmark = pytest.mark.django_db(transaction=True)

CASES = ["en-pref-compose", "en-hypo-japan", "en-other-tabs", "en-skill-port"]


def _mem(content: str, *evidence: str) -> dict[str, Any]:
    args: dict[str, Any] = {"target": "user", "action": "add", "content": content}
    if evidence:
        args["evidence"] = list(evidence)
    return {"name": "memory", "arguments": args}


PORT_SKILL = (
    "---\nname: compose-port-clash\ndescription: Fix docker compose 'port is already allocated'\n---\n"
    "# Steps\n1. ss -tlnp to find the holder\n2. Map the container to 5433:5432\n"
)
CAREFUL = {
    "en-pref-compose": [_mem("Deploys with docker compose, not docker run", "I always deploy with docker compose")],
    "en-hypo-japan": [],
    "en-other-tabs": [],
    "en-skill-port": [
        {
            "name": "skill_manage",
            "arguments": {
                "action": "create",
                "name": "compose-port-clash",
                "content": PORT_SKILL,
                "evidence": ["Mapping to 5433 worked", 'users:(("postgres",pid=812))'],
            },
        }
    ],
}
SLOPPY = {
    "en-pref-compose": [
        _mem("Deploys with docker compose", "I always deploy with docker compose"),
        _mem("Senior DevOps engineer"),  # inferred, no quote
        _mem("User deploys using docker-compose", "I always deploy with docker compose"),  # a repeat
    ],
    "en-hypo-japan": [_mem("Lives in Japan", "I live in Japan")],  # a quote nobody said
    "en-other-tabs": [_mem("Prefers tabs and uses vim")],  # someone else's preference
    "en-skill-port": [
        {"name": "skill_manage", "arguments": {"action": "create", "name": "compose-port-clash", "content": PORT_SKILL}}
    ],
}


def _reviewer(llm, calls_by_case: dict[str, list[dict[str, Any]]]) -> None:
    script_verifier(llm)  # a rubber stamp: the deterministic checks decide
    firsts = {c["conversation"][0][1]: c["id"] for c in load_cases(ids=CASES)}

    def start(body: dict[str, Any]) -> Reply:
        first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        calls = calls_by_case[firsts[first_user]]
        return Reply(tool_calls=calls) if calls else Reply(text="Nothing to save.")

    llm.when(is_review_start, start)
    llm.when(is_review_followup, Reply(text="Done."))


def _eval(*extra: str) -> tuple[str, dict[str, Any]]:
    out = io.StringIO()
    call_command("eval_learning", "--cases", ",".join(CASES), "--json", "-", *extra, stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    table, _, payload = text.partition("{")
    return table, json.loads("{" + payload)


def _by_mode(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["mode"]: s for s in report["summaries"]}


def test_sloppy_reviewer_precision_rises_with_the_evidence_rule(home, llm):
    _reviewer(llm, SLOPPY)
    table, report = _eval()
    print(table)  # the README quotes these figures
    modes = _by_mode(report)
    on, off = modes["required"], modes["off"]
    assert on["precision"] > off["precision"]
    assert on["unsupported"] > 0 and off["unsupported"] == 0
    assert "precision" in table and "required" in table and "off" in table
    # Each case ran in a throwaway home and a rolled-back transaction: nothing stays behind.
    assert not (home / "memories" / "USER.md").exists()
    assert not ChatSession.objects.exists() and not ReviewRun.objects.exists() and not PendingWrite.objects.exists()


def test_careful_reviewer_keeps_full_precision_and_recall_either_way(home, llm):
    _reviewer(llm, CAREFUL)
    table, report = _eval()
    print(table)
    for summary in report["summaries"]:
        assert summary["precision"] == 1.0 and summary["recall"] == 1.0
        assert summary["unsupported"] == 0 and summary["skills_created"] == 1
        assert summary["tokens"] > 0


def test_limit_and_unknown_cases(home, llm):
    _reviewer(llm, CAREFUL)
    out = io.StringIO()
    call_command("eval_learning", "--cases", "en-pref-compose", "--mode", "off", stdout=out, stderr=io.StringIO())
    assert "off" in out.getvalue() and "required" not in out.getvalue() and "verified" not in out.getvalue()
    with pytest.raises(CommandError, match="Unknown case id"):
        call_command("eval_learning", "--cases", "nope", stdout=io.StringIO())


def test_shipped_set_covers_the_categories_in_both_languages():
    cases = load_cases()
    assert len(cases) >= 30
    categories = {c["category"] for c in cases}
    assert categories >= {
        "stated_preference",
        "correction",
        "hypothetical",
        "joke",
        "other_person",
        "one_off_task",
        "assistant_suggestion",
        "trial_and_error",
    }
    assert {c["lang"] for c in cases} == {"en", "zh"}
    assert len({c["id"] for c in cases}) == len(cases)
