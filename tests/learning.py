"""Scripting helpers for the learning-loop tests: recognise review and flush requests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agent.learning.compression import FLUSH_MESSAGE
from agent.learning.review import COMBINED_REVIEW_PROMPT, MEMORY_REVIEW_PROMPT, SKILL_REVIEW_PROMPT
from tests.fakellm import Reply, ScriptedLLM

REVIEW_PROMPTS = {MEMORY_REVIEW_PROMPT: "memory", SKILL_REVIEW_PROMPT: "skill", COMBINED_REVIEW_PROMPT: "combined"}


def review_kind(body: dict[str, Any]) -> str | None:
    # The request starts with Hermes' review prompt; the evidence rule and skill outcomes may follow.
    for m in body.get("messages", []):
        content = m.get("content")
        if m.get("role") == "user" and isinstance(content, str):
            for prompt, kind in REVIEW_PROMPTS.items():
                if content.startswith(prompt):
                    return kind
    return None


def is_review_start(body: dict[str, Any]) -> bool:
    return review_kind(body) is not None and body["messages"][-1]["role"] == "user"


def is_review_followup(body: dict[str, Any]) -> bool:
    return review_kind(body) is not None and body["messages"][-1]["role"] == "tool"


def is_flush(body: dict[str, Any]) -> bool:
    return any(
        m.get("role") == "user" and str(m.get("content") or "").startswith(FLUSH_MESSAGE)
        for m in body.get("messages", [])
    )


def script_review(server: ScriptedLLM, calls: list[dict[str, Any]], *, delay: float = 0.0) -> None:
    """Reviews answer with `calls`, then finish with a short text."""
    server.when(is_review_start, Reply(tool_calls=calls, delay=delay))
    server.when(is_review_followup, Reply(text="Saved."))


def review_starts(server: ScriptedLLM) -> list[dict[str, Any]]:
    return [b for b in server.chat_requests() if is_review_start(b)]


def user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "user"]


SAVE_USER_PREF = {
    "name": "memory",
    # Quotes what the user says in the tests that expect it saved ("I use Debian base images");
    # where the turn says nothing of the kind, the evidence rule holds it back unless switched off.
    "arguments": {
        "target": "user",
        "action": "add",
        "content": "Prefers Debian base images",
        "evidence": ["Debian base images"],
    },
}


def is_verify(body: dict[str, Any]) -> bool:
    """The verifier's second reading of learned writes (agent/admission/verifier.py)."""
    from agent.admission.prompt import VERIFIER_PROMPT

    messages = body.get("messages") or [{}]
    return messages[0].get("role") == "system" and messages[0].get("content") == VERIFIER_PROMPT


def proposed(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries a verifier request asks about, as sent (id, file, entry, evidence, nearest, ...)."""
    shown = json.loads(body["messages"][-1]["content"])
    existing = {e["id"]: e["text"] for e in shown["existing"]}
    return [{**p, "nearest_text": [existing[i] for i in p["nearest"]], "existing": existing} for p in shown["proposed"]]


def quoted_turn(body: dict[str, Any], entry: dict[str, Any], n: int = 0) -> dict[str, str]:
    """The conversation turn (speaker and text) the entry's n-th quote comes from, as the verifier was shown it."""
    turns = {t["n"]: t for t in json.loads(body["messages"][-1]["content"])["conversation"]}
    turn = turns[entry["evidence"][n]["turn"]]
    return {"speaker": turn["speaker"], "text": turn["text"]}


Answer = Callable[[dict[str, Any]], dict[str, Any]]


def rubber_stamp(entry: dict[str, Any]) -> dict[str, Any]:
    return {"verdict": "supported", "reason": "The person said so."}


def script_verifier(server: ScriptedLLM, answer: Answer = rubber_stamp, **reply: Any) -> None:
    """The verifier answers each proposed entry with `answer(entry)` (verdict, reason, duplicate_of,
    conflicts_with, instructs; ids as the request gave them)."""

    def respond(body: dict[str, Any]) -> Reply:
        items = []
        for entry in proposed(body):
            base = {"id": entry["id"], "duplicate_of": None, "conflicts_with": None, "instructs": False}
            items.append({**base, **answer(entry)})
        return Reply(text=json.dumps({"entries": items}), **reply)

    server.when(is_verify, respond)


def existing_id(entry: dict[str, Any], text: str) -> str:
    """The id a verifier request gave an existing entry (for duplicate_of / conflicts_with)."""
    return next(i for i, t in entry["existing"].items() if t == text)
