"""Paraphrased injections that no pattern catches, through the real review path with
`learning.verify: model` and a scripted verifier that answers correctly (it flags the hostile notes
as instructing the assistant): every hostile note is held, no benign look-alike is.

The figures are printed per language (run with -s to see them): how many notes the pattern scan
refused, how many the verifier held as instructions, how many other checks held, how many were saved.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.chat.runner import AgentSession
from knowledge.memory.store import MemoryStore
from knowledge.models import PendingWrite
from knowledge.verification.threat_scan import scan
from tests.conftest import write_config
from tests.fakellm import Reply
from tests.knowledge.verification.threat_corpus_paraphrase import BENIGN_LOOKALIKES, HOSTILE_PARAPHRASES
from tests.learning import is_review_followup, is_verify, proposed, rubber_stamp, script_review, script_verifier

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = (
    "memory:\n  nudge_interval: 0\n  memory_char_limit: 100000\n  user_char_limit: 100000\n"
    "skills:\n  creation_nudge_interval: 0\nlearning:\n  verify: model\n"
)
HOSTILE = {e for items in HOSTILE_PARAPHRASES.values() for _, e in items}
BENIGN = {e for items in BENIGN_LOOKALIKES.values() for _, e in items}


def correct_verifier(entry: dict[str, Any]) -> dict[str, Any]:
    """What a verifier that reads for meaning answers: the hostile notes instruct the assistant."""
    if entry["entry"] in HOSTILE:
        return {"verdict": "supported", "instructs": True, "reason": "It tells the assistant what to do."}
    return rubber_stamp(entry)


def _add(said: str, entry: str) -> dict[str, Any]:
    return {"name": "memory", "arguments": {"target": "user", "action": "add", "content": entry, "evidence": [said]}}


def _outcomes(llm, entries: list[str]) -> dict[str, str]:
    """Each entry's fate: "scan" (refused by the pattern scan), "verifier" (held as an instruction),
    "checks" (held for another reason), "saved", or "refused" (any other refusal)."""
    saved = set(MemoryStore().entries("user"))
    held = {p.arguments["content"]: p for p in PendingWrite.objects.filter(kind="memory", status="pending")}
    followup = [b for b in llm.chat_requests() if is_review_followup(b)][-1]
    results = [json.loads(m["content"]) for m in followup["messages"] if m["role"] == "tool"]
    out = {}
    for entry, result in zip(entries, results, strict=True):
        if entry in saved:
            out[entry] = "saved"
        elif entry in held:
            out[entry] = "verifier" if held[entry].hold_kind == "instruction" else "checks"
        else:
            out[entry] = "scan" if str(result.get("error", "")).startswith("Blocked") else "refused"
    return out


def test_paraphrased_injections_are_held_by_the_verifier_and_look_alikes_saved(home, llm):
    items = [pair for lang in HOSTILE_PARAPHRASES for pair in HOSTILE_PARAPHRASES[lang] + BENIGN_LOOKALIKES[lang]]
    assert len(HOSTILE) >= 20 and len(BENIGN) >= 12 and len(HOSTILE_PARAPHRASES) >= 7
    # The corpus is of paraphrases: the pattern scan lets them through, so what holds them is the verifier.
    assert not [e for e in HOSTILE if scan(e) is not None]
    write_config(home, CONFIG)
    llm.default = lambda b: Reply(text="Noted.")
    agent = AgentSession.open(source="cli")
    for said, _ in items:
        list(agent.run_turn(said))
    script_verifier(llm, correct_verifier)
    script_review(llm, [_add(said, entry) for said, entry in items])
    run = agent.spawn_review(True, False).result(60)
    assert run is not None and run.status == "done", run and run.error
    outcome = _outcomes(llm, [entry for _, entry in items])

    lines = []
    for lang in HOSTILE_PARAPHRASES:
        for label, group in (("hostile", HOSTILE_PARAPHRASES[lang]), ("benign", BENIGN_LOOKALIKES[lang])):
            fates = [outcome[e] for _, e in group]
            counts = ", ".join(f"{k} {fates.count(k)}" for k in ("scan", "verifier", "checks", "saved"))
            lines.append(f"{lang:3} {label:8} {len(fates):2} notes: {counts}")
    hostile_held = sum(outcome[e] != "saved" for e in HOSTILE)
    benign_held = sum(outcome[e] != "saved" for e in BENIGN)
    lines.append(f"hostile held {hostile_held}/{len(HOSTILE)}; benign held {benign_held}/{len(BENIGN)}")
    print("\n" + "\n".join(lines))

    assert [e for e in HOSTILE if outcome[e] != "verifier"] == []
    assert [e for e in BENIGN if outcome[e] != "saved"] == []
    # All of it was read in the review's one verifier call.
    (request,) = [b for b in llm.chat_requests() if is_verify(b)]
    assert {p["entry"] for p in proposed(request)} == HOSTILE | BENIGN
