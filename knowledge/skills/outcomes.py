"""Skill outcomes: verification after use (docs/BEHAVIOUR.md, Skills).

Each use of a skill in a turn (a `/name` invocation or a `skill_view`) is recorded with how the
turn went after the skill was loaded: a tool error, an interrupted answer, or the person's 👍/👎.
A skill with FLAG_AFTER bad outcomes not yet handed to a review is flagged "needs review", and
the next skill review receives those records so it can patch or disable the skill.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from knowledge import versions
from knowledge.models import AnswerFeedback, Message, SkillOutcome

FLAG_AFTER = 3
# How many outcomes of one flagged skill a review is given (the most recent ones).
MAX_HANDED = 5


@dataclass(frozen=True)
class Use:
    name: str
    via: str  # slash | view
    outcome: str = "ok"
    detail: str = ""


def record_turn(
    session_id: str, user_message_id: int | None, answer_message_id: int | None, uses: list[Use]
) -> list[SkillOutcome]:
    """One record per skill used in the turn (the first use of a skill in a turn counts)."""
    seen: set[str] = set()
    rows = []
    for use in uses:
        if use.name in seen:
            continue
        seen.add(use.name)
        rows.append(
            SkillOutcome(
                name=use.name,
                session_id=session_id,
                via=use.via,
                user_message_id=user_message_id,
                answer_message_id=answer_message_id,
                outcome=use.outcome,
                detail=use.detail[:2000],
            )
        )
    return SkillOutcome.objects.bulk_create(rows)


def give_verdict(message: Message, verdict: str, note: str = "") -> AnswerFeedback:
    """The person's 👍/👎 on an answer; the skills used in that answer's turn take the verdict."""
    if verdict not in ("good", "bad"):
        raise ValueError("verdict must be 'good' or 'bad'")
    with transaction.atomic():
        feedback, _ = AnswerFeedback.objects.update_or_create(
            message=message, defaults={"verdict": verdict, "note": note[:2000]}
        )
        turn_start = (
            Message.objects.filter(session_id=message.session_id, role="user", id__lte=message.pk)
            .exclude(id__in=versions.off_path_of(message.session_id))  # the question of this version
            .order_by("-id")
            .values_list("id", flat=True)
            .first()
        )
        if turn_start is not None:
            words = note or ("The person marked the answer 👎." if verdict == "bad" else "")
            SkillOutcome.objects.filter(session_id=message.session_id, user_message_id=turn_start).update(
                outcome=verdict, detail=words
            )
    return feedback


def unreviewed_bad(name: str) -> list[SkillOutcome]:
    bad = SkillOutcome.objects.filter(name=name, outcome__in=SkillOutcome.BAD, review__isnull=True)
    return list(bad.order_by("-created_at", "-id")[:MAX_HANDED])


def flagged_names() -> list[str]:
    """Skills with at least FLAG_AFTER bad outcomes that no review has been given yet, or one the
    person flagged themselves (an approved "Wrong" under an answer's Sources)."""
    rows = (
        SkillOutcome.objects.filter(outcome__in=SkillOutcome.BAD, review__isnull=True)
        .values_list("name", "via")
        .order_by("name")
    )
    counts: dict[str, int] = {}
    for name, via in rows:
        counts[name] = counts.get(name, 0) + (FLAG_AFTER if via == "person" else 1)
    return [n for n, c in counts.items() if c >= FLAG_AFTER]


def describe(outcome: SkillOutcome) -> str:
    turn = f"session {outcome.session_id}, message {outcome.user_message_id}" if outcome.session_id else "a turn"
    words = f" — {outcome.detail}" if outcome.detail else ""
    return f"- {outcome.created_at:%Y-%m-%d %H:%M} ({turn}): {outcome.get_outcome_display()}{words}"


def hand_to_review(review_id: int) -> str:
    """The outcome records of flagged skills, as a paragraph of the review request; they are marked
    as handed to this review so the flag clears and the next review does not get them again."""
    blocks = []
    for name in flagged_names():
        records = unreviewed_bad(name)
        SkillOutcome.objects.filter(name=name, outcome__in=SkillOutcome.BAD, review__isnull=True).update(
            review_id=review_id
        )
        blocks.append(f"Skill '{name}' failed in recent uses:\n" + "\n".join(describe(r) for r in records))
    if not blocks:
        return ""
    return (
        "These skills keep failing when used. Load each with skill_view and patch it (or disable it) "
        "so the failures below do not repeat:\n\n" + "\n\n".join(blocks)
    )


@dataclass(frozen=True)
class Stats:
    uses: int
    good: int
    bad: int
    last_failure: SkillOutcome | None
    needs_review: bool

    @property
    def success_rate(self) -> int | None:
        return round(100 * (self.uses - self.bad) / self.uses) if self.uses else None


def stats(names: list[str]) -> dict[str, Stats]:
    flagged = set(flagged_names())
    result: dict[str, Stats] = {}
    rows = SkillOutcome.objects.filter(name__in=names).order_by("-created_at", "-id")
    by_name: dict[str, list[SkillOutcome]] = {}
    for row in rows:
        by_name.setdefault(row.name, []).append(row)
    for name in names:
        items = by_name.get(name, [])
        bad = [r for r in items if r.is_bad]
        result[name] = Stats(
            uses=len(items),
            good=sum(1 for r in items if r.outcome in ("ok", "good")),
            bad=len(bad),
            last_failure=bad[0] if bad else None,
            needs_review=name in flagged,
        )
    return result
