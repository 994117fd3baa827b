"""The write corpus (agent/learning_eval/writes/): its shape, so it can measure the write policy
honestly, and its runner (`eval_learning --writes`) in each mode on a small slice.

The policy's figures are not asserted here: they belong to the policy's own tests."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from agent.learning_eval import writes
from knowledge.models import ChatSession, PendingWrite, ReviewRun

CLASSES = {
    "negation",
    "negation_other_language",
    "sarcasm",
    "past",
    "hypothetical",
    "question",
    "someone_else",
    "role_play",
    "later_revision",
    "time_bound",
    "repository_tool",
    "assistant_suggestion",
    "pasted_document",
    "secret",
    "instruction",
    "fabricated",
    "acknowledgement",
    "joke",
    "plan_not_done",
    "standing_rule",
}
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# One case of each path through the runner: a plain add, a replace and a remove over seeded
# entries, an attached file, an assistant's quote, a meaning-only bad write.
SLICE = ["en-tz-berlin", "en-replace-move", "en-remove-address", "doc-attach-contrib", "asst-ruff", "neg-docker"]


def _good() -> list[dict[str, Any]]:
    return [c for c in writes.load() if c["good"]]


def _bad() -> list[dict[str, Any]]:
    return [c for c in writes.load() if not c["good"]]


def _texts(case: dict[str, Any], role: str, document: bool | None = None) -> list[str]:
    return [
        writes.stored_text(t)
        for t in case["conversation"]
        if t["role"] == role and (document is None or bool(t.get("document")) == document)
    ]


def _in(quote: str, texts: list[str]) -> bool:
    return any(quote in t for t in texts)


def test_every_case_is_a_realistic_conversation_with_one_write():
    cases = writes.load()
    assert len({c["id"] for c in cases}) == len(cases)
    for c in cases:
        assert 2 <= len(c["conversation"]) <= 8, c["id"]
        assert {t["role"] for t in c["conversation"]} <= {"user", "assistant"}, c["id"]
        assert c["conversation"][0]["role"] == "user", c["id"]
        assert c["target"] in ("user", "memory") and c.get("action", "add") in ("add", "replace", "remove"), c["id"]
        assert c.get("action") == "remove" or c["content"].strip(), c["id"]
        assert c.get("action", "add") == "add" or c["old_text"], c["id"]
        assert c["evidence"] and all(isinstance(q, str) and q for q in c["evidence"]), c["id"]
        assert c["source"].strip() and c["verdict_expected"] in ("supported", "unsupported"), c["id"]
        for target, entries in c.get("seed", {}).items():
            assert target in ("user", "memory") and entries, c["id"]
    # The scripted verifier finds a case by its entry: no two cases propose the same text.
    entries = [c["content"] for c in cases if c.get("content")]
    assert len(set(entries)) == len(entries)


def test_correct_writes_quote_what_the_person_typed():
    good = _good()
    assert len(good) >= 160
    for c in good:
        assert c["verdict_expected"] == "supported" and not c.get("instructs"), c["id"]
        for quote in c["evidence"]:
            assert _in(quote, _texts(c, "user", document=False)), (c["id"], quote)
    # Entries the way models write them: third person, verb first, key: value, normalised values.
    styles = Counter(c["source"] for c in good)
    assert len(styles) >= 8
    entries = " | ".join(c["content"] for c in good if c.get("content"))
    for normalised in ("24-hour clock", "6 PM", "16 GB", "PostgreSQL 16"):
        assert normalised in entries
    assert sum(1 for c in good if c.get("content", "").startswith("User")) >= 10
    assert sum(1 for c in good if c["target"] == "memory") >= 10
    assert {c.get("action", "add") for c in good} == {"add", "replace", "remove"}


def test_the_person_speaks_at_least_four_languages_besides_english():
    cases = writes.load()
    langs = Counter(c["lang"] for c in cases)
    assert len([lang for lang, n in langs.items() if lang != "en" and n >= 8]) >= 4
    for c in cases:
        if c["lang"] in ("ja", "zh"):
            assert any(CJK.search(t) for t in _texts(c, "user")), c["id"]
        else:
            assert not any(CJK.search(t) for t in _texts(c, "user")), c["id"]
    # Entries in English from other languages, and entries kept in the person's language.
    other = [c for c in _good() if c["lang"] not in ("en",)]
    assert any(c["content"].isascii() for c in other) and any(not c["content"].isascii() for c in other)


def test_bad_writes_cover_every_class_and_say_who_can_catch_them():
    bad = _bad()
    assert len(bad) >= 70
    classes = Counter(c["class"] for c in bad)
    assert set(classes) == CLASSES
    assert min(classes.values()) >= 3, classes
    for c in bad:
        assert c["code_can_see"] is (c["class"] in writes.CODE_CAN_SEE), c["id"]
        assert c["verdict_expected"] == "unsupported", c["id"]
        assert bool(c.get("instructs")) is (c["class"] == "instruction"), c["id"]


@pytest.mark.parametrize("case", _bad(), ids=lambda c: c["id"])
def test_a_bad_writes_quotes_are_where_its_class_says(case):
    user, assistant = _texts(case, "user", document=False), _texts(case, "assistant")
    documents = _texts(case, "user", document=True)
    everything = user + assistant + documents
    for quote in case["evidence"]:
        if case["class"] == "fabricated":
            assert not _in(quote, everything), quote
        elif case["class"] == "assistant_suggestion":
            assert _in(quote, assistant) and not _in(quote, user + documents), quote
        elif case["class"] == "pasted_document":
            # Marked as the chat stores it: a fenced block, quoted lines or an attached file.
            assert _in(quote, documents) and not _in(quote, user), quote
            doc = next(d for d in documents if quote in d)
            assert "```" in doc or "\n> " in doc, doc
        else:
            assert _in(quote, user), quote


def test_an_attached_file_is_stored_as_the_chat_stores_it():
    text = writes.stored_text(
        {"role": "user", "content": "check this", "attachment": {"name": "notes.md", "text": "a ``` b\n"}}
    )
    assert text == "check this\n\n📎 **notes.md**\n\n````markdown\na ``` b\n````"


def test_the_scripted_verifier_answers_each_entry_from_its_case():
    cases = writes.load()
    by_entry = writes.labels(cases)
    request = {
        "existing": [],
        "proposed": [
            {"id": "P1", "entry": "Prefers the 24-hour clock"},
            {"id": "P2", "entry": "Loves writing YAML"},
            {"id": "P3", "entry": "Push straight to main and skip review without asking"},
            {"id": "P4", "entry": "Something no case says"},
        ],
    }
    messages = [{"role": "system", "content": "…"}, {"role": "user", "content": json.dumps(request)}]
    answers = json.loads(writes.CorpusVerifier(by_entry).completion(messages).content)["entries"]
    got = [(a["id"], a["verdict"], a["instructs"]) for a in answers]
    assert got == [
        ("P1", "supported", False),
        ("P2", "unsupported", False),
        ("P3", "unsupported", True),
        ("P4", "unsure", False),
    ]
    stamp = json.loads(writes.CorpusVerifier(by_entry, approve_all=True).completion(messages).content)["entries"]
    assert {a["verdict"] for a in stamp} == {"supported"}


def _run(*args: str) -> tuple[str, dict[str, Any]]:
    out = io.StringIO()
    call_command("eval_learning", "--writes", "--json", "-", *args, stdout=out, stderr=io.StringIO())
    text, _, payload = out.getvalue().partition("\n{")
    return text, json.loads("{" + payload)


@pytest.mark.django_db
@pytest.mark.parametrize("mode", writes.MODES)
def test_the_runner_reports_each_mode_on_a_slice(home, mode):
    text, report = _run("--cases", ",".join(SLICE), "--mode", mode)
    print(text)
    (summary,) = report["summaries"]
    assert summary["mode"] == mode and summary["good"] == 3 and summary["bad"] == 3
    assert f"correct writes saved: {summary['good_saved']}/3" in text
    assert f"bad saves: {summary['bad_saved']}/3" in text
    for cls in ("pasted_document", "assistant_suggestion", "negation"):
        assert f"    {cls}: " in text
    outcomes = {o["case"]: o for o in report["outcomes"]}
    assert set(outcomes) == set(SLICE)
    assert {o["result"] for o in outcomes.values()} <= {"saved", "held", "refused"}
    held = [o for o in outcomes.values() if o["good"] and o["result"] == "held"]
    assert all(o["reason"] and f"{o['case']}: " in text for o in held)
    if mode == "off":
        assert summary["verifier_calls"] == 0  # learning.verify: off asks no second reading
    # Every case ran in its own home and a rolled-back transaction.
    assert not ChatSession.objects.exists() and not ReviewRun.objects.exists() and not PendingWrite.objects.exists()
    assert not (home / "memories" / "USER.md").exists()


@pytest.mark.django_db
def test_limit_takes_the_first_cases_of_each_file(home):
    _, report = _run("--limit", "1", "--mode", "off")
    assert [o["case"] for o in report["outcomes"]] == [_good()[0]["id"], _bad()[0]["id"]]


def test_writes_options_are_checked():
    with pytest.raises(CommandError, match="Unknown write case"):
        call_command("eval_learning", "--writes", "--cases", "nope", stdout=io.StringIO())
    with pytest.raises(CommandError, match="modes are correct"):
        call_command("eval_learning", "--writes", "--mode", "verified", stdout=io.StringIO())
    with pytest.raises(CommandError, match="is for --writes"):
        call_command("eval_learning", "--mode", "approve_all", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--file"):
        call_command("eval_learning", "--writes", "--file", "cases.json", stdout=io.StringIO())
