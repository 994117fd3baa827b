"""Measuring learning quality (`manage.py eval_learning`): labelled conversations through the real
review path, each in a throwaway HERMES_HOME, with the evidence rule on and off.

A case's labels are key terms: `must_save` lists facts (each a list of terms that must all occur,
"a|b" meaning either) that a good review saves; `must_not_save` lists what it must not. A saved
item (memory entry or created skill) is correct when it matches a `must_save` fact and no
`must_not_save` one; every other saved item is a bad save. A case may seed memory (`seed`: target ->
entries) to see updates, conflicts and duplicates; `repeats` labels facts the seed already holds
(saving one again is a duplicate left). Every mode gets the same prompt (the evidence rule
included): only the gate differs — `off`, `required` (the deterministic checks) and `verified`
(the deterministic checks, then the verifier's second reading by the review model). Database rows
a case makes are rolled back; its files vanish with its home.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.db import transaction

from agent.learning.compression import SUMMARY_PREFIX
from agent.learning.review import run_review_now
from agent.toolset import build_registry
from foundation import config as hermes_config
from knowledge.memory.ops import TARGETS
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message, PendingWrite
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from knowledge.verification import conflicts
from knowledge.verification.similarity import near_duplicate

CASES_FILE = Path(__file__).with_name("cases.json")
MODES = ("off", "required", "verified")
# What each mode sets: (learning.evidence, learning.verify).
GATES = {"off": ("off", "off"), "required": ("required", "off"), "verified": ("required", "model")}
# What a case's home inherits from the person's configuration: how to reach the model.
_INHERITED = ("model", "review")


class EvalError(Exception):
    pass


def load_cases(path: Path = CASES_FILE, ids: list[str] | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    if ids:
        known = {c["id"] for c in cases}
        missing = [i for i in ids if i not in known]
        if missing:
            raise EvalError(f"Unknown case id(s): {', '.join(missing)}. Known: {', '.join(sorted(known))}.")
        cases = [c for c in cases if c["id"] in ids]
    return cases[:limit] if limit else cases


@dataclass
class CaseResult:
    case: str
    mode: str
    saved: list[str] = field(default_factory=list)
    correct: int = 0
    facts: int = 0
    recalled: int = 0
    unsupported: int = 0
    bad_saves: int = 0
    held_but_correct: int = 0
    conflicts_left: int = 0
    duplicates_left: int = 0
    skills_created: int = 0
    tokens: int = 0
    error: str = ""


def _matches(text: str, terms: list[str]) -> bool:
    low = text.casefold()
    return all(any(alt.casefold() in low for alt in term.split("|")) for term in terms)


def is_correct(case: dict[str, Any], text: str) -> bool:
    must, must_not = case.get("must_save", []), case.get("must_not_save", [])
    return any(_matches(text, fact) for fact in must) and not any(_matches(text, bad) for bad in must_not)


def score(case: dict[str, Any], result: CaseResult, held: Sequence[str] = ()) -> None:
    must = case.get("must_save", [])
    result.facts = len(must)
    result.recalled = sum(1 for fact in must if any(_matches(s, fact) for s in result.saved))
    result.correct = sum(1 for s in result.saved if is_correct(case, s))
    result.bad_saves = len(result.saved) - result.correct
    result.held_but_correct = sum(1 for h in held if is_correct(case, h))


def conversation(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The case as chat-completions messages; a "tool" line becomes a call and its result."""
    out: list[dict[str, Any]] = []
    for i, (role, text) in enumerate(case["conversation"]):
        if role == "tool":
            call_id = f"call_{i}"
            fn = {"name": "terminal", "arguments": "{}"}
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": call_id, "type": "function", "function": fn}],
                }
            )
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
        else:
            out.append({"role": role, "content": text})
    return out


def model_copy(case: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the reviewer sees, where it is not what was stored: `model_sees` (message index -> text,
    e.g. a /skill invocation expanded) and a compression `summary` in front, as the live context has."""
    seen = [dict(m) for m in messages]
    for index, text in case.get("model_sees", {}).items():
        seen[int(index)]["content"] = text
    if case.get("summary"):
        seen.insert(0, {"role": "user", "content": SUMMARY_PREFIX + case["summary"]})
    return seen


@contextmanager
def home_with(data: dict[str, Any], prefix: str = "hermes-eval-") -> Iterator[hermes_config.Config]:
    """A fresh HERMES_HOME whose config.yaml is `data`, for one case; the previous home comes back after."""
    previous = os.environ.get("HERMES_HOME")
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        Path(tmp, "config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
        os.environ["HERMES_HOME"] = tmp
        hermes_config.reset()
        try:
            yield hermes_config.get()
        finally:
            if previous is None:
                os.environ.pop("HERMES_HOME", None)
            else:
                os.environ["HERMES_HOME"] = previous
            hermes_config.reset()


def throwaway_home(base: hermes_config.Config, mode: str) -> AbstractContextManager[hermes_config.Config]:
    """A fresh home with `base`'s model settings and the gate of `mode`."""
    data = {key: base.data[key] for key in _INHERITED}
    evidence, verify = GATES[mode]
    data["learning"] = {"evidence": evidence, "verify": verify}
    return home_with(data)


def run_case(case: dict[str, Any], mode: str, base: hermes_config.Config, client_factory: Any) -> CaseResult:
    result = CaseResult(case=case["id"], mode=mode)
    with throwaway_home(base, mode) as config, transaction.atomic():
        session = ChatSession.objects.create(title=f"eval {case['id']}", source="cli", model=config.review_model)
        messages = conversation(case)
        for m in messages:
            Message.objects.create(
                session=session,
                role=m["role"],
                content=m.get("content") or "",
                tool_calls=m.get("tool_calls"),
                tool_call_id=m.get("tool_call_id", ""),
            )
        snapshot = [{"role": "system", "content": "You are Hermes, a helpful assistant."}, *model_copy(case, messages)]
        memory = MemoryStore(config)
        seeded = [(t, e) for t, entries in case.get("seed", {}).items() for e in entries]
        for target, entry in seeded:
            memory.add(target, entry, Provenance(actor="user"))
        run = run_review_now(
            session_id=session.pk,
            snapshot=snapshot,
            kind=case.get("kind", "memory"),
            config=config,
            registry=build_registry(config),
            client_factory=client_factory,
            evidence_rule=True,
        )
        skills = SkillStore(config).list()
        now = [(t, e) for t in TARGETS for e in memory.entries(t)]
        result.saved = [e for t, e in now if (t, e) not in seeded]
        result.conflicts_left = sum(1 for e in result.saved if conflicts.find(e, [p for p in now if p in seeded]))
        result.saved += [f"{s.name}: {s.description}\n{_body(s.path)}" for s in skills]
        result.skills_created = len(skills)
        result.duplicates_left = sum(1 for e in result.saved if _repeats(case, e, [p[1] for p in seeded]))
        held = list(PendingWrite.objects.filter(session=session, unsupported=True))
        result.unsupported = len(held)
        result.tokens = run.prompt_tokens + run.completion_tokens
        result.error = run.error
        transaction.set_rollback(True)
    score(case, result, [_held_text(p.arguments) for p in held])
    return result


def _repeats(case: dict[str, Any], entry: str, seeded: list[str]) -> bool:
    """A saved entry that says what the seed already held: labelled so (`repeats`), or alike."""
    return any(_matches(entry, fact) for fact in case.get("repeats", [])) or any(
        near_duplicate(entry, s) for s in seeded
    )


def _held_text(arguments: Any) -> str:
    """What a held write would have saved (a memory entry's content, a skill's text)."""
    args = arguments if isinstance(arguments, dict) else {}
    raw = args.get("operations")
    ops: list[Any] = raw if isinstance(raw, list) else [args]
    parts = [str(op.get("content") or "") for op in ops if isinstance(op, dict)]
    return "\n".join(p for p in parts if p) or str(args.get("name") or "")


def _body(folder: Path) -> str:
    path = folder / "SKILL.md"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@dataclass
class Summary:
    mode: str
    cases: int
    saved: int
    correct: int
    precision: float | None
    recall: float | None
    unsupported: int
    bad_saves: int
    held_but_correct: int
    conflicts_left: int
    duplicates_left: int
    skills_created: int
    tokens: int
    errors: int


def summarise(mode: str, results: list[CaseResult]) -> Summary:
    saved = sum(len(r.saved) for r in results)
    correct = sum(r.correct for r in results)
    facts = sum(r.facts for r in results)
    return Summary(
        mode=mode,
        cases=len(results),
        saved=saved,
        correct=correct,
        precision=round(correct / saved, 3) if saved else None,
        recall=round(sum(r.recalled for r in results) / facts, 3) if facts else None,
        unsupported=sum(r.unsupported for r in results),
        bad_saves=sum(r.bad_saves for r in results),
        held_but_correct=sum(r.held_but_correct for r in results),
        conflicts_left=sum(r.conflicts_left for r in results),
        duplicates_left=sum(r.duplicates_left for r in results),
        skills_created=sum(r.skills_created for r in results),
        tokens=sum(r.tokens for r in results),
        errors=sum(1 for r in results if r.error),
    )


def evaluate(
    cases: list[dict[str, Any]],
    modes: tuple[str, ...],
    client_factory: Any,
    progress: Callable[[CaseResult], None] = lambda r: None,
) -> dict[str, Any]:
    base = hermes_config.get()
    report: dict[str, Any] = {"model": base.review_model, "summaries": [], "cases": []}
    for mode in modes:
        results = []
        for case in cases:
            result = run_case(case, mode, base, client_factory)
            progress(result)
            results.append(result)
        report["summaries"].append(asdict(summarise(mode, results)))
        report["cases"].extend(asdict(r) for r in results)
    return report


COLUMNS = (
    "mode",
    "cases",
    "saved",
    "correct",
    "precision",
    "recall",
    "unsupported",
    "bad_saves",
    "held_but_correct",
    "conflicts_left",
    "duplicates_left",
    "skills_created",
    "tokens",
)


def table(report: dict[str, Any]) -> str:
    def cell(v: Any) -> str:
        return "—" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)

    rows = [list(COLUMNS)] + [[cell(s[c]) for c in COLUMNS] for s in report["summaries"]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [" | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)
