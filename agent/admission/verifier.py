"""The second reading of learned writes: the model judges what they mean (docs/EVIDENCE.md, The verifier).

With `learning.verify: model` (and the evidence rule on), a review's or flush's write that passed
the provenance checks (agent/admission/provenance.py) is read by the review model, without tools. It
sees the conversation (agent/admission/conversation.py: the quoted messages with the turns around
them, every later turn on the same subject and the rest nearest first, within CONVERSATION_CHARS,
documents marked as documents), each proposed entry with its quotes and the signals the words around
them gave (agent/admission/signals.py), and the existing entries nearest to it by meaning
(agent/admission/nearest.py). It answers whether each entry is supported, repeats or contradicts an
existing one, and whether it instructs the assistant rather than stating a fact.

Its answer must be one JSON object, `{"entries": [...]}` with one item per proposed id and strict
booleans; a JSON schema is asked for where the server takes one (`response_format`, learned per
server by the model client). Anything else (prose around it, two objects, an id answered twice or
not at all, "True." for true) holds the writes as unchecked: every ambiguity resolves toward
holding. A server that cannot be reached leaves the lexical fallback to decide (agent/admission/
provenance.py); the call's tokens are added to the review run's (`ctx.turn_state`).

Review-created and patched skills are read the same way (agent/admission/skills.py); all the memory
and skill writes of one model reply are read in one call (agent/admission/batch.py).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent.admission import conversation, nearest, provenance, signals
from agent.admission.prompt import RESPONSE_FORMAT, VERDICTS, VERIFIER_PROMPT
from agent.admission.provenance import Decision
from agent.llm import LLMError
from agent.tools.registry import ToolContext
from foundation import config as hermes_config
from knowledge.models import PendingWrite
from knowledge.skills.format import SkillError, parse_skill_md
from knowledge.skills.store import SkillStore
from knowledge.verification import conflicts, evidence
from knowledge.verification.similarity import similarity

log = logging.getLogger(__name__)

Hold = PendingWrite.Hold
# How many existing entries are shown beside each proposed one (nearest first), and how much of a
# skill (proposed or existing) is shown: enough for its description and steps.
NEAREST = 8
SKILLS_NEAREST = 3
SKILL_CHARS = 3000
USAGE_KEYS = ("verify_prompt_tokens", "verify_completion_tokens")


class VerifyError(Exception):
    """The verifier's answer was not the one unambiguous JSON object asked for."""


@dataclass(frozen=True)
class Proposal:
    key: str  # identifies the entry within a review (target, action, content, old_text)
    target: str
    action: str
    content: str
    replaces: str  # the existing entry a replace rewrites ("" for an add)
    both_hold: bool
    evidence: tuple[tuple[str, int | None], ...]  # (quote, stored message id)
    nearest: tuple[tuple[str, str], ...]  # (file, entry); a skill's file is SKILL_FILE + its name
    kind: str = "memory"  # or "skill"
    signals: tuple[signals.Signal, ...] = ()


# The "file" of an existing skill among the entries shown to the verifier: "skill:<name>".
SKILL_FILE = "skill:"


@dataclass(frozen=True)
class Reading:
    verdict: str  # supported | unsupported | unsure | failed (the answer was unusable) | unreachable
    reason: str = ""
    duplicate_of: tuple[str, str] | None = None
    conflicts_with: tuple[str, str] | None = None
    instructs: bool = False


def enabled(ctx: ToolContext) -> bool:
    return provenance.verifying(ctx)


def _key(target: str, op: dict[str, Any]) -> str:
    return json.dumps([target, op.get("action"), op.get("content"), op.get("old_text")], ensure_ascii=False)


def quoted(args: dict[str, Any], ctx: ToolContext, kind: str = "memory") -> tuple[tuple[str, int | None], ...]:
    """Each quote with the stored message it was found in."""
    verdict = evidence.check(args.get("evidence"), ctx.seen, kind, ctx.session_id)
    return tuple((q.quote, q.message_id) for q in verdict.quotes)


def skill_texts() -> list[tuple[str, str]]:
    """Every skill as the verifier sees it: (SKILL_FILE + name, its description and steps)."""
    store = SkillStore(hermes_config.get())
    out = []
    for info in store.list():
        try:
            body = parse_skill_md(store.read(info.name), lenient=True).body
        except SkillError:
            body = ""  # a broken SKILL.md still has the description the index shows
        out.append((SKILL_FILE + info.name, f"{info.description}\n{body}".strip()[:SKILL_CHARS]))
    return out


def _entry_score(content: str, entry: str) -> float:
    return similarity(content, entry) + (1.0 if conflicts.same_subject(content, entry) else 0.0)


def embedding_cache(ctx: ToolContext) -> dict[str, list[float]]:
    cache: dict[str, list[float]] = ctx.turn_state.setdefault("verifier_vectors", {})
    return cache


def _nearest(
    content: str, existing: Sequence[tuple[str, str]], replaces: str, ctx: ToolContext
) -> tuple[tuple[str, str], ...]:
    others = [(w, e) for w, e in existing if e != replaces]
    near = nearest.rank(content, others, _entry_score, llm=ctx.llm, cache=embedding_cache(ctx))[:NEAREST]
    # The skills that hold most of the entry's words: an entry may restate a procedure a skill has.
    skills = sorted(((nearest.held_share(content, t), (w, t)) for w, t in skill_texts()), key=lambda s: -s[0])
    near += [pair for share, pair in skills[:SKILLS_NEAREST] if share > 0]
    return tuple(([(w, replaces) for w, e in existing if e == replaces][:1]) + near)


def proposals(args: dict[str, Any], ctx: ToolContext, existing: Sequence[tuple[str, str]]) -> list[Proposal]:
    target = str(args.get("target") or "memory")
    verdict = evidence.check(args.get("evidence"), ctx.seen, "memory", ctx.session_id)
    shown = tuple((q.quote, q.message_id) for q in verdict.quotes)
    out = []
    for op in provenance.memory_ops(args):
        content = op.get("content")
        if op.get("action") not in ("add", "replace") or not isinstance(content, str) or not content.strip():
            continue
        old = op.get("old_text") if op.get("action") == "replace" else None
        replaces = next((e for w, e in existing if isinstance(old, str) and old and old in e), "")
        out.append(
            Proposal(
                key=_key(target, op),
                target=target,
                action=str(op.get("action")),
                content=content,
                replaces=replaces,
                both_hold=args.get("both_hold") is True,
                evidence=shown,
                nearest=_nearest(content, existing, replaces, ctx),
                signals=tuple(signals.read(content, verdict.located)),
            )
        )
    return out


def request(batch: Sequence[Proposal], ctx: ToolContext) -> tuple[list[dict[str, str]], dict[str, tuple[str, str]]]:
    """The verifier's messages, and the existing entries by the ids it may answer with."""
    ids: dict[tuple[str, str], str] = {}
    for p in batch:
        for pair in p.nearest:
            ids.setdefault(pair, f"E{len(ids) + 1}")
    turns, numbers = conversation.excerpt(
        conversation.turns(ctx.session_id, ctx.seen),
        (mid for p in batch for _q, mid in p.evidence),
        (p.content for p in batch),
    )
    shown = {
        "conversation": turns,
        "existing": [{"id": i, **_where(w), "text": e} for (w, e), i in ids.items()],
        "proposed": [
            {
                "id": f"P{n}",
                "kind": p.kind,
                **_where(_file(p)),
                "action": p.action,
                "entry": p.content,
                "replaces": ids.get((_file(p), p.replaces)) if p.replaces else None,
                "says_both_hold": p.both_hold,
                "nearest": [ids[pair] for pair in p.nearest],
                "evidence": [
                    {"quote": q, "turn": numbers.get(mid) if mid is not None else None} for q, mid in p.evidence
                ],
                "signals": [s.sentence for s in p.signals],
            }
            for n, p in enumerate(batch, 1)
        ],
    }
    messages = [
        {"role": "system", "content": VERIFIER_PROMPT},
        {"role": "user", "content": json.dumps(shown, ensure_ascii=False, indent=1)},
    ]
    return messages, {i: pair for pair, i in ids.items()}


def _file(p: Proposal) -> str:
    return p.target if p.kind == "memory" else SKILL_FILE + p.target


def _where(file: str) -> dict[str, str]:
    """How an entry's place is shown: a memory file, or a skill by name."""
    if file.startswith(SKILL_FILE):
        return {"file": "skill", "skill": file[len(SKILL_FILE) :]}
    return {"file": file}


_FENCED = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.S)


def _answer_object(text: str) -> dict[str, Any]:
    """The answer as exactly one JSON object holding a list of entries (a fence around it is allowed;
    prose, a second object or a verdict quoted from the conversation before it are not)."""
    body = text.strip()
    fenced = _FENCED.match(body)
    body = fenced.group(1).strip() if fenced else body
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise VerifyError("it was not one JSON object") from exc
    if not isinstance(value, dict) or not isinstance(value.get("entries"), list):
        raise VerifyError('it held no "entries" list')
    return value


def _entry_ref(value: Any, existing: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().upper() not in existing:
        raise VerifyError(f"it named {value!r}, which is not an existing entry's id")
    return existing[value.strip().upper()]


def _reading(item: dict[str, Any], existing: dict[str, tuple[str, str]]) -> Reading:
    verdict = item.get("verdict")
    if verdict not in VERDICTS:
        raise VerifyError(f"its verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    instructs = item.get("instructs", False)
    if not isinstance(instructs, bool):
        raise VerifyError(f'"instructs" was {instructs!r}, not true or false')
    return Reading(
        verdict,
        " ".join(str(item.get("reason") or "").split())[:300],
        _entry_ref(item.get("duplicate_of"), existing),
        _entry_ref(item.get("conflicts_with"), existing),
        instructs,
    )


def parse_answer(text: str, batch: Sequence[Proposal], existing: dict[str, tuple[str, str]]) -> dict[str, Reading]:
    items = _answer_object(text)["entries"]
    wanted = {f"P{n}": p for n, p in enumerate(batch, 1)}
    readings: dict[str, Reading] = {}
    for item in items:
        pid = item.get("id") if isinstance(item, dict) else None
        if not isinstance(pid, str) or pid not in wanted:
            raise VerifyError(f"it answered for {pid!r}, which was not proposed")
        if wanted[pid].key in readings:
            raise VerifyError(f"it answered {pid} twice")
        assert isinstance(item, dict)
        readings[wanted[pid].key] = _reading(item, existing)
    for pid, p in wanted.items():
        readings.setdefault(p.key, Reading("failed", f"its answer gave no verdict for {pid}"))
    return readings


def read(batch: Sequence[Proposal], ctx: ToolContext) -> dict[str, Reading]:
    """One tool-less call over the batch; every entry is held if the answer is unusable."""
    if not batch:
        return {}
    messages, existing = request(batch, ctx)
    completion = getattr(ctx.llm, "completion", None)
    if completion is None:
        return {p.key: Reading("unreachable", "no model was available to read it") for p in batch}
    try:
        reply = completion(messages, max_tokens=200 + 150 * len(batch), response_format=RESPONSE_FORMAT)
        for key, used in zip(USAGE_KEYS, (reply.usage.prompt_tokens, reply.usage.completion_tokens), strict=True):
            ctx.turn_state[key] = ctx.turn_state.get(key, 0) + used
        return parse_answer(reply.content, batch, existing)
    except LLMError as exc:
        log.warning("the verifier call failed: %s", exc)
        return {p.key: Reading("unreachable", f"the model could not be reached ({exc})") for p in batch}
    except VerifyError as exc:
        why = f"the model's answer was not the one JSON object asked for ({exc})"
    return {p.key: Reading("failed", why) for p in batch}


def readings(ctx: ToolContext) -> dict[str, Reading]:
    """This review's readings so far, by proposal key (a write already read is not read again)."""
    found: dict[str, Reading] = ctx.turn_state.setdefault("verifier_readings", {})
    return found


def unread(args: dict[str, Any], ctx: ToolContext, existing: Sequence[tuple[str, str]]) -> list[Proposal]:
    """The proposals of one memory call still to be read; none when provenance holds it anyway
    (agent/admission/batch.py gathers them for the reply's one call)."""
    if provenance.decide(args, ctx, "memory", existing).held_reason:
        return []
    return [p for p in proposals(args, ctx, existing) if p.key not in readings(ctx)]


def _names_skill(ref: tuple[str, str] | None) -> bool:
    return ref is not None and ref[0].startswith(SKILL_FILE)


def _skill_hold(decision: Decision, r: Reading, said: str) -> Decision:
    """A memory entry the verifier finds repeating or contradicting a skill: held naming the skill
    (the inbox's Replace / Keep both settle two memory entries, not an entry and a skill)."""
    advice = "Patch '{}' with skill_manage if something in it changed."
    if _names_skill(r.conflicts_with):
        name = r.conflicts_with[0][len(SKILL_FILE) :] if r.conflicts_with else ""
        return decision.holding(
            f"It says something else than the skill '{name}'{said}", Hold.CONFLICT, advice=advice.format(name)
        )
    name = r.duplicate_of[0][len(SKILL_FILE) :] if r.duplicate_of else ""
    return decision.holding(
        f"It restates the skill '{name}', which holds this already{said}", Hold.DUPLICATE, advice=advice.format(name)
    )


def unchecked(decision: Decision, r: Reading) -> Decision:
    return decision.holding(
        f"It could not be checked a second time ({r.reason}), so it was not saved unchecked.", Hold.UNCHECKED
    )


def _hold(
    decision: Decision, p: Proposal, r: Reading, args: dict[str, Any], existing: Sequence[tuple[str, str]]
) -> Decision | None:
    """The hold a reading calls for, or None when it lets the entry be saved."""
    said = f": {r.reason}" if r.reason else "."
    if r.verdict == "failed":
        return unchecked(decision, r)
    if r.verdict == "unreachable":
        # The lexical fallback decides, as with the verifier off.
        fallback = signals.fallback_reason(p.signals)
        if fallback:
            return decision.holding(f"{fallback} The second reading was not available ({r.reason}).")
        return provenance.fallback_conflict(args, existing, decision)
    if r.instructs:
        return decision.holding(
            f"It reads as an instruction to the assistant rather than a fact about you{said}", Hold.INSTRUCTION
        )
    if r.verdict != "supported":
        how = "does not show it" if r.verdict == "unsupported" else "may not show it"
        return decision.holding(f"On a second reading, the conversation {how}{said}")
    if _names_skill(r.conflicts_with) or _names_skill(r.duplicate_of):
        return _skill_hold(decision, r, said)
    if r.conflicts_with is not None and r.conflicts_with[1] != p.replaces:
        where, text = r.conflicts_with
        why = f"It is about the same thing as the {where} entry {text!r} and says something else{said}"
        advice = "" if p.both_hold else provenance.CONFLICT_ADVICE
        return decision.holding(why, Hold.CONFLICT, advice=advice, conflict={"target": where, "text": text})
    if r.duplicate_of is not None and r.duplicate_of[1] != p.replaces:
        where, text = r.duplicate_of
        why = f"It says the same as the {where} entry {text!r}, already saved{said}"
        return decision.holding(why, Hold.DUPLICATE, advice="The entry is already known: nothing more to do.")
    return None


def second_reading(
    args: dict[str, Any], ctx: ToolContext, existing: Sequence[tuple[str, str]], decision: Decision
) -> Decision:
    """`decision` (a write provenance let through), or the hold the verifier asks for."""
    if decision.held_reason or not enabled(ctx):
        return decision
    batch = proposals(args, ctx, existing)
    missing = [p for p in batch if p.key not in readings(ctx)]
    readings(ctx).update(read(missing, ctx))
    for p in batch:
        held = _hold(decision, p, readings(ctx)[p.key], args, existing)
        if held is not None:
            return held
    return decision
