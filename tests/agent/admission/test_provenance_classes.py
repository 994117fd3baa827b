"""A sloppy reviewer quoting true lines that do not support what it saves, through the real review
path: one test per way a true quote is not yet evidence. Each bad write stays out of the memory
files and waits in the inbox with a reason; the careful writes beside it are saved."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.chat.runner import AgentSession
from agent.learning.compression import SUMMARY_PREFIX
from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange, PendingWrite
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from tests.conftest import write_config
from tests.fakellm import Reply
from tests.learning import (
    is_review_followup,
    is_review_start,
    review_starts,
    rubber_stamp,
    script_review,
    script_verifier,
)

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n"


def _files(home) -> str:
    mem = home / "memories"
    return "".join((mem / n).read_text() for n in ("MEMORY.md", "USER.md") if (mem / n).exists())


def _chat(home, llm, *turns: str, judged: tuple[str, ...] = ()) -> AgentSession:
    """A chat of `turns`; with `judged`, the verifier is on and finds those entries unsupported (what the
    words mean is the verifier's to judge, not code's)."""
    write_config(home, CONFIG + ("learning:\n  evidence: required\n  verify: model\n" if judged else ""))
    if judged:
        script_verifier(
            llm, lambda e: {"verdict": "unsupported", "reason": "The quotes say something else."}
            if e["entry"] in judged else rubber_stamp(e)
        )  # fmt: skip
    llm.default = lambda b: Reply(text="Noted.")
    agent = AgentSession.open(source="cli")
    for text in turns:
        list(agent.run_turn(text))
    return agent


def _review(agent: AgentSession, kind: str = "memory", snapshot: list[dict[str, Any]] | None = None) -> None:
    future = agent.spawn_review(kind in ("memory", "combined"), kind in ("skill", "combined"), snapshot)
    run = future.result(30)
    assert run is not None and run.status == "done", run and run.error


def _add(content: str, *evidence: str, target: str = "user", **extra: Any) -> dict[str, Any]:
    args = {"target": target, "action": "add", "content": content, "evidence": list(evidence), **extra}
    return {"name": "memory", "arguments": args}


def _results(llm) -> list[dict[str, Any]]:
    bodies = [b for b in llm.chat_requests() if is_review_followup(b)]
    return [json.loads(m["content"]) for m in bodies[-1]["messages"] if m["role"] == "tool"] if bodies else []


def _held(content: str) -> PendingWrite:
    held = [
        p
        for p in PendingWrite.objects.filter(unsupported=True)
        if content in json.dumps(p.arguments, ensure_ascii=False)
    ]
    assert len(held) == 1, [p.arguments for p in PendingWrite.objects.all()]
    return held[0]


def _bad_held(home, content: str, *why: str) -> PendingWrite:
    assert content not in _files(home)
    item = _held(content)
    assert item.status == "pending" and any(w in item.reason or w == item.hold_kind for w in why), item.reason
    return item


GOOD = "Writes every shell script in fish"
GOOD_SAID = "I write every shell script in fish, never bash."


def test_a_true_quote_that_says_something_else(home, llm):
    said = f"I spent the weekend repainting my kitchen in dark green. {GOOD_SAID}"
    agent = _chat(home, llm, said, judged=("Is allergic to shellfish",))
    script_review(
        llm,
        [
            _add("Is allergic to shellfish", "I spent the weekend repainting my kitchen"),
            _add(GOOD, "I write every shell script in fish"),
        ],
    )
    _review(agent)
    _bad_held(home, "Is allergic to shellfish", "say something else")
    assert GOOD in _files(home)


def test_a_pasted_document_is_not_the_persons_word(home, llm):
    paste = "Please proofread our onboarding doc:\n\n```\nThe user wants every reply written in Esperanto.\n```"
    agent = _chat(home, llm, paste, GOOD_SAID)
    script_review(
        llm,
        [
            _add("Wants every reply in Esperanto", "The user wants every reply written in Esperanto"),
            _add(GOOD, "I write every shell script in fish"),
        ],
    )
    _review(agent)
    _bad_held(home, "Esperanto", "pasted")
    assert GOOD in _files(home)


def test_the_expanded_text_of_a_skill_is_not_what_the_person_typed(home, llm):
    write_config(home, CONFIG)
    body = "# Steps\nThe user prefers changelogs grouped by component.\n1. git log --oneline v1..v2\n"
    SkillStore().create(
        "changelog", f"---\nname: changelog\ndescription: Write a changelog\n---\n{body}", prov=Provenance(actor="user")
    )
    agent = _chat(home, llm, "/changelog for the 2.4 release", GOOD_SAID)
    script_review(
        llm,
        [
            _add("Prefers changelogs grouped by component", "The user prefers changelogs grouped by component"),
            _add(GOOD, "I write every shell script in fish"),
        ],
    )
    _review(agent)
    _bad_held(home, "grouped by component", "model's copy")
    assert GOOD in _files(home)


def test_the_compression_summary_is_not_what_the_person_typed(home, llm):
    agent = _chat(home, llm, GOOD_SAID)
    summary = {"role": "user", "content": SUMMARY_PREFIX + "The user said they sail a catamaran every weekend."}
    snapshot = agent.messages[:1] + [summary] + agent.messages[1:]
    script_review(
        llm,
        [
            _add("Sails a catamaran every weekend", "they sail a catamaran every weekend"),
            _add(GOOD, "I write every shell script in fish"),
        ],
    )
    _review(agent, snapshot=snapshot)
    _bad_held(home, "catamaran", "model's copy")
    assert GOOD in _files(home)


@pytest.mark.parametrize(
    ("said", "content", "quote", "why"),
    [
        (
            "Honestly I would never put secrets in .env files.",
            "Puts secrets in .env files",
            "put secrets in .env files",
            "negated",
        ),
        (
            "If I had a bigger desk I'd buy a second monitor.",
            "Has a second monitor",
            "I'd buy a second monitor",
            "hypothetical",
        ),
        (
            "Is it worth switching my blog to Hugo?",
            "Is switching the blog to Hugo",
            "switching my blog to Hugo",
            "question",
        ),
        (
            "My sister swears by the Dvorak layout.",
            "Types on the Dvorak layout",
            "swears by the Dvorak layout",
            "someone else",
        ),
        ("我从来不在周末的晚上开会。", "用户在周末的晚上开会", "在周末的晚上开会", "negated"),
        ("要是我会弹钢琴的话，我就每天练一小时。", "用户每天练钢琴一小时", "我就每天练一小时", "hypothetical"),
        ("我同事特别喜欢用Emacs写代码。", "用户喜欢用Emacs写代码", "特别喜欢用Emacs写代码", "someone else"),
        (
            "I'm basically a professional napper at this point, haha.",
            "Is a professional napper",
            "I'm basically a professional napper",
            "joking",
        ),
    ],
    ids=["negation", "hypothetical", "question", "third-person", "zh-negation", "zh-hypothetical", "zh-third", "joke"],
)
def test_context_that_reverses_the_quote(home, llm, said, content, quote, why):
    agent = _chat(home, llm, f"{said} {GOOD_SAID}")
    script_review(llm, [_add(content, quote), _add(GOOD, "I write every shell script in fish")])
    _review(agent)
    _bad_held(home, content, why)
    assert GOOD in _files(home)


def test_stitched_quotes_and_acknowledgements(home, llm):
    agent = _chat(
        home,
        llm,
        "I maintain the billing service at work.",
        "Last month I flew to Toronto for a wedding.",
        "sounds good, thanks!",
        GOOD_SAID,
        judged=("Maintains the billing service in Toronto",),
    )
    script_review(
        llm,
        [
            _add(
                "Maintains the billing service in Toronto",
                "I maintain the billing service at work",
                "I flew to Toronto for a wedding",
            ),
            _add("Prefers terse commit messages", "sounds good, thanks!"),
            _add(GOOD, "I write every shell script in fish"),
        ],
    )
    _review(agent)
    _bad_held(home, "billing service in Toronto", "say something else")
    _bad_held(home, "terse commit messages", "only acknowledges")
    assert GOOD in _files(home)


def test_a_held_write_cannot_be_retried_with_another_quote(home, llm):
    said = "We had a long retro about the outage today. I take the 7:40 train to the office."
    agent = _chat(home, llm, said, judged=("Leads the incident response team", "Leads incident response for the team"))
    first = _add("Leads the incident response team", "We had a long retro about the outage today")
    second = _add("Leads incident response for the team", "I take the 7:40 train to the office")
    llm.when(is_review_start, Reply(tool_calls=[first]))
    llm.when(is_review_followup, Reply(tool_calls=[second]), times=1)
    llm.when(is_review_followup, Reply(text="Done."))
    _review(agent)
    assert "incident" not in _files(home)
    item = PendingWrite.objects.get()
    assert "7:40 train" in item.reason  # the second attempt joined the held item
    for body in [b for b in llm.chat_requests() if is_review_followup(b)]:
        for m in body["messages"]:
            if m["role"] == "tool":
                error = json.loads(m["content"])["error"]
                assert "inbox" in error or "already held" in error
                assert not any(w in error.casefold() for w in ("exact words", "another quote", "other quote", "find"))


def test_a_conflict_left_standing_is_held_and_a_replace_settles_it(home, llm):
    MemoryStore().add("user", "Prefers 4-space indents in Python", Provenance(actor="user"))
    agent = _chat(home, llm, "I've moved to 2-space indents in Python for everything now.")
    script_review(llm, [_add("Prefers 2-space indents in Python", "I've moved to 2-space indents in Python")])
    _review(agent)
    assert "2-space" not in _files(home) and "4-space" in _files(home)
    item = _bad_held(home, "2-space", "conflict")
    assert "Prefers 4-space indents in Python" in item.reason
    assert "replace" in _results(llm)[0]["error"]

    replace = {
        "name": "memory",
        "arguments": {
            "target": "user",
            "action": "replace",
            "old_text": "4-space indents",
            "content": "Prefers 2-space indents in Python",
            "evidence": ["I've moved to 2-space indents in Python for everything now"],
        },
    }
    llm.rules.clear()
    script_review(llm, [_add("Prefers 2-space indents in Python", "I've moved to 2-space indents in Python"), replace])
    _review(agent)
    assert "2-space" in _files(home) and "4-space" not in _files(home)
    assert PendingWrite.objects.filter(status="pending").count() == 1  # the first review's item waits


def test_different_names_are_two_facts_and_a_paraphrase_is_asked_about(home, llm):
    store = MemoryStore()
    store.add("memory", "Host ci-3 runs the arm64 build agents", Provenance(actor="user"))
    store.add("user", "Prefers dark mode in every editor", Provenance(actor="user"))
    agent = _chat(home, llm, "Host ci-4 runs the arm64 build agents as well. I use a dark theme in all my editors.")
    script_review(
        llm,
        [
            _add("Host ci-4 runs the arm64 build agents", "Host ci-4 runs the arm64 build agents", target="memory"),
            _add("Uses a dark theme in editors", "I use a dark theme in all my editors"),
        ],
    )
    _review(agent)
    assert "Host ci-4 runs the arm64 build agents" in _files(home)  # not refused as a duplicate of ci-3
    item = _bad_held(home, "dark theme", "conflict")
    assert "Prefers dark mode in every editor" in item.reason


SKILL = (
    "---\nname: pip-behind-proxy\ndescription: Install Python packages behind the office proxy\n---\n"
    "# Steps\n1. pip install --proxy http://proxy:3128 <package>\n"
)


def _skill(*evidence: str) -> dict[str, Any]:
    args = {"action": "create", "name": "pip-behind-proxy", "content": SKILL, "evidence": list(evidence)}
    return {"name": "skill_manage", "arguments": args}


def test_a_skill_nobody_ran_is_held_as_untested(home, llm):
    agent = _chat(home, llm, "My pip install keeps timing out behind the office proxy, what do I do?")
    script_review(llm, [_skill("My pip install keeps timing out behind the office proxy")])
    _review(agent, "skill")
    assert not (home / "skills" / "pip-behind-proxy").exists()
    _bad_held(home, "pip-behind-proxy", "untested")


def test_a_skill_the_person_said_worked_is_saved(home, llm):
    agent = _chat(
        home,
        llm,
        "My pip install keeps timing out behind the office proxy, what do I do?",
        "That worked: pip install with the proxy flag finished fine.",
    )
    script_review(llm, [_skill("That worked: pip install with the proxy flag finished fine.")])
    _review(agent, "skill")
    assert (home / "skills" / "pip-behind-proxy" / "SKILL.md").exists()
    assert KnowledgeChange.objects.filter(kind="skill", actor="review").exists()


def test_a_memory_only_review_is_not_offered_skill_manage(home, llm):
    agent = _chat(home, llm, GOOD_SAID)
    script_review(llm, [])
    _review(agent, "memory")
    tools = {t["function"]["name"] for t in review_starts(llm)[0]["tools"]}
    assert "skill_manage" not in tools and "memory" in tools


def test_main_agent_writes_need_the_current_message_to_support_them(home, llm):
    write_config(home, CONFIG)
    llm.push(Reply(tool_calls=[_add("Owns a sailboat", target="user")]), Reply(text="Sure."))
    llm.push(Reply(tool_calls=[_add("Prefers metric units in every answer", target="user")]), Reply(text="Noted."))
    agent = AgentSession.open(source="cli")
    list(agent.run_turn("What's the weather going to be in Oslo tomorrow?"))
    list(agent.run_turn("Remember that I prefer metric units in every answer."))
    assert "sailboat" not in _files(home) and "Prefers metric units in every answer" in _files(home)
    assert _held("sailboat").hold_kind == "unsupported" and "question" in _held("sailboat").reason


def test_main_agent_conflict_is_settled_by_replacing_the_old_entry(home, llm):
    write_config(home, CONFIG)
    MemoryStore().add("user", "Prefers 4-space indents in Go", Provenance(actor="user"))
    new = "Prefers 2-space indents in Go"
    replace = {"target": "user", "action": "replace", "old_text": "4-space", "content": new}
    llm.push(
        Reply(tool_calls=[_add(new, target="user")]),
        Reply(tool_calls=[{"name": "memory", "arguments": replace}]),
        Reply(text="Updated."),
    )
    agent = AgentSession.open(source="cli")
    list(agent.run_turn("Remember: I now use 2-space indents in Go."))
    assert new in _files(home) and "4-space" not in _files(home)
    item = _held("2-space")
    assert item.hold_kind == "conflict" and item.status == "rejected" and "settled" in item.result


def test_a_retried_conflict_joins_its_held_item_instead_of_making_a_second(home, llm):
    MemoryStore().add("user", "Works at Acme", Provenance(actor="user"))
    agent = _chat(home, llm, "I started at Globex last week.")
    first = _add("Works at Globex", "I started at Globex last week")
    again = _add("Works at Globex", "I started at Globex last week", both_hold=True)
    llm.when(is_review_start, Reply(tool_calls=[first]))
    llm.when(is_review_followup, Reply(tool_calls=[again]), times=1)
    llm.when(is_review_followup, Reply(text="Done."))
    _review(agent)
    # With the second reading off, only the person can say both hold (they differ in a name).
    item = PendingWrite.objects.get()
    assert item.hold_kind == "conflict" and "Works at Acme" in item.reason and "Tried again" in item.reason
    assert "Globex" not in _files(home)


def test_a_contradiction_in_a_name_is_saved_beside_the_old_entry_only_when_the_verifier_agrees(home, llm):
    MemoryStore().add("user", "Works at Acme", Provenance(actor="user"))
    agent = _chat(home, llm, "I also freelance for Globex on weekends.", judged=("nothing",))
    script_review(llm, [_add("Works at Globex on weekends", "I also freelance for Globex on weekends", both_hold=True)])
    _review(agent)
    assert "Works at Acme" in _files(home) and "Works at Globex on weekends" in _files(home)
