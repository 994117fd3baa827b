"""The write corpus (`manage.py eval_learning --writes`): single memory writes, correct and bad, each
through the memory tool as a background review calls it, to measure the write policy alone.

writes/good.json holds correct writes (the person's words show the entry); writes/bad.json holds
writes that must not be saved, each with its `class` (negation, sarcasm, a pasted document, a
secret, …) and `code_can_see` (whether provenance alone can tell: who typed the quote, whether it is
a document, a secret, an instruction). Every case stores its conversation as a chat's messages and
sends its write through the tool registry's dispatch with a review's context, in a throwaway
HERMES_HOME, inside a transaction that is rolled back. Nothing else is scripted: whatever the policy
is, it is what the tool does with that call.

Three modes:
- `correct`: `learning.verify: model`, the verifier being an in-process client that answers each
  proposed entry with the corpus's label for it (found by the entry's text in the request);
- `approve_all`: the same, the verifier answering "supported" to everything;
- `off`: `learning.verify: off`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from agent.learning_eval.run import home_with
from agent.llm import ModelReply, Usage
from agent.tools.registry import ToolContext
from agent.toolset import build_registry
from foundation import config as hermes_config
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message, PendingWrite, ReviewRun
from knowledge.provenance import Provenance

CORPUS = Path(__file__).with_name("writes")
GOOD_FILE, BAD_FILE = CORPUS / "good.json", CORPUS / "bad.json"
MODES = ("correct", "approve_all", "off")
# learning.verify per mode; the evidence rule keeps its default.
VERIFY = {"correct": "model", "approve_all": "model", "off": "off"}
MODE_NOTES = {
    "correct": "learning.verify: model; the verifier answers from the corpus labels",
    "approve_all": "learning.verify: model; the verifier answers supported to everything",
    "off": "learning.verify: off",
}
# The bad classes provenance code can catch: who typed the quote, whether it was pasted, what it holds.
CODE_CAN_SEE = frozenset(
    {"fabricated", "assistant_suggestion", "pasted_document", "secret", "instruction", "acknowledgement"}
)
SYSTEM_PROMPT = "You are Hermes, a helpful assistant."
# Fence languages the chat's attach button writes for a file's extension (static/js/chat/attach.js).
_FENCE_LANGUAGES = {"md": "markdown", "py": "python", "sh": "bash", "yaml": "yaml", "yml": "yaml", "json": "json"}


class CorpusError(Exception):
    pass


def load(ids: list[str] | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """The good cases, then the bad ones; `limit` takes the first N of each file, so a slice has both."""
    good = [{**c, "good": True} for c in json.loads(GOOD_FILE.read_text(encoding="utf-8"))]
    bad = [{**c, "good": False} for c in json.loads(BAD_FILE.read_text(encoding="utf-8"))]
    if ids:
        known = {c["id"] for c in good + bad}
        missing = [i for i in ids if i not in known]
        if missing:
            raise CorpusError(f"Unknown write case id(s): {', '.join(missing)}.")
        good, bad = [c for c in good if c["id"] in ids], [c for c in bad if c["id"] in ids]
    if limit:
        good, bad = good[:limit], bad[:limit]
    return good + bad


def attached(name: str, text: str) -> str:
    """A text file as the chat's attach button puts it in the message: "📎 name" and a fenced block
    longer than any backtick run inside, so the review reads it as a document."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    info = _FENCE_LANGUAGES.get(name.rsplit(".", 1)[-1].lower(), "")
    return f"📎 **{name}**\n\n{ticks}{info}\n{text.rstrip(chr(10))}\n{ticks}"


def stored_text(turn: dict[str, Any]) -> str:
    """A turn's message as the chat stores it: what was typed, then any attached text file."""
    content = str(turn.get("content") or "")
    file = turn.get("attachment")
    if isinstance(file, dict):
        content = f"{content}\n\n{attached(str(file['name']), str(file['text']))}".lstrip()
    return content


def write_arguments(case: dict[str, Any]) -> dict[str, Any]:
    """The memory tool call a review would make for the case."""
    args: dict[str, Any] = {"target": case["target"], "action": case.get("action", "add")}
    for key in ("content", "old_text", "evidence"):
        if key in case:
            args[key] = case[key]
    return args


@dataclass(frozen=True)
class Label:
    verdict: str
    instructs: bool


def labels(cases: list[dict[str, Any]]) -> dict[str, Label]:
    """What a correct verifier answers for each entry, by the entry's text."""
    return {
        c["content"]: Label(c["verdict_expected"], bool(c.get("instructs", False))) for c in cases if c.get("content")
    }


class CorpusVerifier:
    """An in-process stand-in for the review model's verifier call (`completion`): each proposed
    entry in the request is answered from the corpus label of the case whose entry it is, or with
    "supported" for everything (`approve_all`). An entry the corpus does not hold is "unsure"."""

    def __init__(self, by_entry: dict[str, Label], approve_all: bool = False) -> None:
        self.by_entry = by_entry
        self.approve_all = approve_all
        self.asked: list[str] = []

    def completion(self, messages: list[dict[str, Any]], **kw: Any) -> ModelReply:
        shown = json.loads(messages[-1]["content"])
        items = []
        for proposed in shown.get("proposed", []):
            entry = str(proposed.get("entry") or "")
            self.asked.append(entry)
            label = Label("supported", False) if self.approve_all else self.by_entry.get(entry)
            if label is None:
                item = {"verdict": "unsure", "instructs": False, "reason": "This entry is not in the corpus."}
            else:
                reason = "The person said so." if label.verdict == "supported" else "The person did not say that."
                item = {"verdict": label.verdict, "instructs": label.instructs, "reason": reason}
            items.append({"id": proposed.get("id"), "duplicate_of": None, "conflicts_with": None, **item})
        return ModelReply(content=json.dumps({"entries": items}), usage=Usage())


def throwaway_home(verify: str) -> AbstractContextManager[hermes_config.Config]:
    """A fresh HERMES_HOME whose config sets only `learning.verify` (everything else its default)."""
    return home_with({"learning": {"verify": verify}}, prefix="hermes-writes-")


@dataclass
class Outcome:
    case: str
    mode: str
    good: bool
    cls: str  # a bad case's class ("" for a correct write)
    code_can_see: bool
    result: str  # saved | held | refused
    reason: str = ""  # the inbox reason of a held write, the tool's message for a refused one
    hold_kind: str = ""
    verifier_asked: bool = False


def _saved(store: MemoryStore, case: dict[str, Any], seeded: list[tuple[str, str]]) -> bool:
    now = store.entries(case["target"])
    if case.get("action") == "remove":
        return not any(case["old_text"] in e for e in now)
    content = str(case.get("content") or "").strip()
    return any(content == e.strip() for e in now) and (case["target"], content) not in seeded


def run_case(case: dict[str, Any], mode: str, verifier: CorpusVerifier) -> Outcome:
    outcome = Outcome(case["id"], mode, case["good"], case.get("class", ""), bool(case.get("code_can_see")), "")
    asked_before = len(verifier.asked)
    with throwaway_home(VERIFY[mode]) as config, transaction.atomic():
        session = ChatSession.objects.create(title=f"writes {case['id']}", source="cli", model="corpus")
        seen: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        for turn in case["conversation"]:
            text = stored_text(turn)
            Message.objects.create(session=session, role=turn["role"], content=text)
            seen.append({"role": turn["role"], "content": text})
        review = ReviewRun.objects.create(session=session, prompt_kind="memory", status="running", model="corpus")
        store = MemoryStore(config)
        seeded = [(t, e) for t, entries in case.get("seed", {}).items() for e in entries]
        for target, entry in seeded:
            store.add(target, entry, Provenance(actor="user"))
        ctx = ToolContext(
            actor="review",
            session_id=session.pk,
            review_id=review.pk,
            turn_state={},
            stage_writes={"memory": config.memory.write_approval, "skills": config.skills.write_approval},
            llm=verifier,
            seen=seen,
        )
        result = build_registry(config).dispatch("memory", write_arguments(case), ctx)
        held = PendingWrite.objects.filter(session=session).order_by("id").first()
        if _saved(store, case, seeded):
            outcome.result = "saved"
        elif held is not None:
            outcome.result, outcome.reason, outcome.hold_kind = "held", held.reason, held.hold_kind
        else:
            outcome.result, outcome.reason = "refused", result.error or result.to_json()
        transaction.set_rollback(True)
    outcome.verifier_asked = len(verifier.asked) > asked_before
    return outcome


@dataclass
class ModeSummary:
    mode: str
    good: int = 0
    good_saved: int = 0
    bad: int = 0
    bad_saved: int = 0
    code_can_see: list[int] = field(default_factory=lambda: [0, 0])  # saved, total
    meaning_only: list[int] = field(default_factory=lambda: [0, 0])
    classes: dict[str, list[int]] = field(default_factory=dict)  # class -> [saved, total]
    correct_held: list[list[str]] = field(default_factory=list)  # [case, reason]
    correct_refused: list[list[str]] = field(default_factory=list)
    verifier_calls: int = 0


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "0/0"


def summarise(mode: str, outcomes: list[Outcome]) -> ModeSummary:
    s = ModeSummary(mode)
    for o in outcomes:
        saved = o.result == "saved"
        s.verifier_calls += o.verifier_asked
        if o.good:
            s.good += 1
            s.good_saved += saved
            if o.result == "held":
                s.correct_held.append([o.case, o.reason])
            elif o.result == "refused":
                s.correct_refused.append([o.case, o.reason])
            continue
        s.bad += 1
        s.bad_saved += saved
        counts = s.classes.setdefault(o.cls, [0, 0])
        side = s.code_can_see if o.code_can_see else s.meaning_only
        for pair in (counts, side):
            pair[0] += saved
            pair[1] += 1
    return s


def evaluate(
    cases: list[dict[str, Any]], modes: tuple[str, ...], progress: Callable[[Outcome], None] = lambda o: None
) -> dict[str, Any]:
    by_entry = labels(cases)
    report: dict[str, Any] = {"summaries": [], "outcomes": []}
    for mode in modes:
        verifier = CorpusVerifier(by_entry, approve_all=mode == "approve_all")
        outcomes = []
        for case in cases:
            outcome = run_case(case, mode, verifier)
            progress(outcome)
            outcomes.append(outcome)
        report["summaries"].append(asdict(summarise(mode, outcomes)))
        report["outcomes"].extend(asdict(o) for o in outcomes)
    return report


def text(report: dict[str, Any]) -> str:
    """Per mode: the share of correct writes saved, bad saves by class, and why each correct write was held."""
    lines: list[str] = []
    for s in report["summaries"]:
        lines.append(f"{s['mode']} ({MODE_NOTES[s['mode']]}); the verifier was asked about {s['verifier_calls']}")
        lines.append(f"  correct writes saved: {_share(s['good_saved'], s['good'])}")
        lines.append(
            f"  bad saves: {_share(s['bad_saved'], s['bad'])}; provenance can see: {_share(*s['code_can_see'])}; "
            f"only meaning: {_share(*s['meaning_only'])}"
        )
        for cls, (saved, total) in sorted(s["classes"].items()):
            lines.append(f"    {cls}: {_share(saved, total)}")
        for title, rows in (("held", s["correct_held"]), ("refused", s["correct_refused"])):
            if rows:
                lines.append(f"  correct writes {title} ({len(rows)}):")
                lines.extend(f"    {case}: {' '.join(reason.split())}" for case, reason in rows)
    return "\n".join(lines)
