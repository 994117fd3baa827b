"""The background review (docs/BEHAVIOUR.md, The learning loop): a shadow run of the same loop that saves
what the conversation taught into memory and skills.

It runs in the background (agent/jobs.py: a bounded thread pool, or the durable queue), at
most one review per session at a time across every server process sharing the database
(`ReviewRun.start()` claims the session; a second review waits for the first rather than being
dropped), with its own counters off, at most `review.max_iterations` model calls, and only the
four knowledge tools — enforced by giving the loop a registry that holds nothing else, so any
other call is refused by the dispatcher.
Its outcome is recorded on a ReviewRun (the writes it saved, as data) and published to the
notification hook with the writes it left waiting in the inbox.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import close_old_connections
from django_tasks import task

from agent import jobs
from agent.admission import batch as verify_batch
from agent.learning import notify
from agent.llm import client_from_config
from agent.loop import AgentLoop, ModelCalled, ToolFinished, TurnDone, TurnError
from agent.tools.registry import ToolContext, ToolRegistry
from agent.toolset import build_registry
from foundation import config as hermes_config
from foundation.config import Config
from knowledge import private_chats, versions
from knowledge.history import runs
from knowledge.history.waiting import poll_until
from knowledge.history.workers import this_worker
from knowledge.models import ChatSession, PendingWrite, ReviewRun
from knowledge.skills import outcomes

log = logging.getLogger(__name__)

REVIEW_TOOLS = ("memory", "skill_manage", "skills_list", "skill_view")


def review_tools(kind: str) -> tuple[str, ...]:
    """The tools a review of this kind is offered: a memory-only review cannot write skills at all
    (it may still look at them, to see that an entry would restate one)."""
    return tuple(t for t in REVIEW_TOOLS if kind != "memory" or t != "skill_manage")


# Hermes Agent's three review prompts, verbatim; the combined prompt's "..." stand for the
# focus paragraphs of the other two, which are spelled out here.
MEMORY_REVIEW_PROMPT = (
    "Review the conversation above and consider saving to memory "
    "if appropriate.\n\n"
    "Focus on:\n"
    "1. Has the user revealed things about themselves — their persona, "
    "desires, preferences, or personal details worth remembering?\n"
    "2. Has the user expressed expectations about how you should behave, "
    "their work style, or ways they want you to operate?\n\n"
    "If something stands out, save it using the memory tool. "
    "If nothing is worth saving, just say 'Nothing to save.' and stop."
)

SKILL_REVIEW_PROMPT = (
    "Review the conversation above and consider saving or updating "
    "a skill if appropriate.\n\n"
    "Focus on: was a non-trivial approach used to complete a task "
    "that required trial and error, or changing course due to "
    "experiential findings along the way, or did the user expect "
    "or desire a different method or outcome?\n\n"
    "If a relevant skill already exists, update it with what you learned. "
    "Otherwise, create a new skill if the approach is reusable.\n"
    "If nothing is worth saving, just say 'Nothing to save.' and stop."
)

COMBINED_REVIEW_PROMPT = (
    "Review the conversation above and consider two things:\n\n"
    "**Memory**: Has the user revealed things about themselves — their persona, "
    "desires, preferences, or personal details worth remembering? "
    "Has the user expressed expectations about how you should behave, "
    "their work style, or ways they want you to operate?\n\n"
    "**Skills**: Was a non-trivial approach used to complete a task "
    "that required trial and error, or changing course due to "
    "experiential findings along the way, or did the user expect "
    "or desire a different method or outcome? "
    "If a relevant skill already exists, update it with what you learned. "
    "Otherwise, create a new skill if the approach is reusable.\n\n"
    "Only act if there's something genuinely worth saving. "
    "If nothing stands out, just say 'Nothing to save.' and stop."
)

PROMPTS: dict[str, str] = {
    "memory": MEMORY_REVIEW_PROMPT,
    "skill": SKILL_REVIEW_PROMPT,
    "combined": COMBINED_REVIEW_PROMPT,
}

NOTHING_TO_SAVE = "Nothing to save."

# The one paragraph the evidence rule adds to the review and flush prompts (docs/BEHAVIOUR.md, Knowledge verification).
EVIDENCE_RULE = (
    "Evidence rule: save only what the user said or clearly showed in this conversation. With every "
    "memory or skill_manage write, pass 'evidence': the exact words you rely on, quoted verbatim as whole "
    "sentences (the user's own words for memory, not text they pasted; for skills, tool output showing the "
    "steps worked or the user saying so). Never infer personal facts; the assistant's own suggestions, "
    "hypotheticals, questions, jokes and other people's preferences are not the user's. A write the quotes "
    "do not support is not saved but held for the user. Removing a memory entry, or deleting, disabling "
    "or removing a file of a skill, needs the user's own words asking for it in 'evidence'; without them "
    "it waits for the user's approval."
)

# A review the person asked for (a chat's "Review this chat now", `/refine [focus]`): its trigger, and
# the line that carries what they asked it to look at.
REQUEST_TRIGGER = "request"
MAX_FOCUS_CHARS = 500
FOCUS_LINE = "The user asked for this review. Focus on: {focus}"


class ReviewRefused(Exception):
    """A review on demand that cannot run; str(error) says why, for the person who asked."""


# A review waiting for another of its session gives up after this long (the other is bounded by
# its iteration limit and the model timeout, so this only trips on something badly wrong).
MAX_WAIT_SECONDS = 30 * 60


def review_request(
    kind: str, config: Config, outcomes: str = "", *, evidence_rule: bool | None = None, focus: str = ""
) -> str:
    """The user message that starts a review: Hermes' prompt, what the person asked it to focus on
    (a review on demand), then the evidence rule (when on, or when `evidence_rule` says so), then
    the records of skills that keep failing (skill reviews)."""
    parts = [PROMPTS[kind]]
    if focus.strip():
        parts.append(FOCUS_LINE.format(focus=" ".join(focus.split())))
    if evidence_rule if evidence_rule is not None else config.learning.evidence == "required":
        parts.append(EVIDENCE_RULE)
    if outcomes and kind in ("skill", "combined"):
        parts.append(outcomes)
    return "\n\n".join(parts)


def prompt_kind(review_memory: bool, review_skills: bool) -> str:
    if review_memory and review_skills:
        return "combined"
    return "memory" if review_memory else "skill"


def saved_writes(finished: list[ToolFinished]) -> list[notify.SavedWrite]:
    """The writes a review saved: its successful memory and skill_manage calls that changed a file
    (a write staged for approval changed nothing yet; it is one of `held_writes`)."""
    saved: list[notify.SavedWrite] = []
    for event in finished:
        data = _json_object(event.message.get("content") or "")
        if not data.get("success") or not data.get("changed") or data.get("pending"):
            continue
        args = _json_object(event.arguments)
        kind = "memory" if event.name == "memory" else "skill"
        target = (data.get("target") or args.get("target")) if kind == "memory" else args.get("name")
        saved.append(
            notify.SavedWrite(
                kind=kind,
                target=str(target or ""),
                action=str(data.get("action") or args.get("action") or "batch"),
                message=str(data.get("message") or "").strip(),
            )
        )
    return saved


def held_writes(run_id: int) -> list[notify.HeldWrite]:
    """The writes the review left waiting in the inbox, read from their records (whichever check
    held them, or approval mode), oldest first."""
    held: list[notify.HeldWrite] = []
    for item in PendingWrite.objects.filter(review_id=run_id, status="pending").order_by("id"):
        args = item.arguments if isinstance(item.arguments, dict) else {}
        target = args.get("target") if item.kind == "memory" else args.get("name")
        held.append(
            notify.HeldWrite(
                kind=item.kind,
                target=str(target or ""),
                action=str(args.get("action") or "batch"),
                pending_id=item.pk,
                hold=item.hold_kind,
            )
        )
    return held


def summary_of(saved: list[notify.SavedWrite]) -> str:
    """The saved writes in the tools' words, de-duplicated in order and joined with " · "
    (two writes to one file show once): "User profile updated · Skill 'x' created"."""
    return " · ".join(dict.fromkeys(s["message"] for s in saved if s["message"]))


def review_notice(run: ReviewRun, session_id: str) -> notify.ReviewNotice:
    """What a finished run tells its listeners: the writes recorded on the run, and the ones still
    waiting for the person (also for a run another process finished, read back from its records)."""
    saved = [
        notify.SavedWrite(
            kind=str(c.get("kind", "")),
            target=str(c.get("target", "")),
            action=str(c.get("action", "")),
            message=str(c.get("message", "")),
        )
        for c in (run.changes if isinstance(run.changes, list) else [])
        if isinstance(c, dict)
    ]
    summary = "" if run.summary == NOTHING_TO_SAVE else run.summary
    return notify.ReviewNotice(
        session_id,
        run.pk,
        run.prompt_kind,
        summary,
        run.status,
        run.error,
        saved,
        held_writes(run.pk),
        requested=run.trigger == REQUEST_TRIGGER,
    )


def _json_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text or "{}")
    except (json.JSONDecodeError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def spawn_review(
    *,
    session_id: str,
    snapshot: list[dict[str, Any]],
    review_memory: bool,
    review_skills: bool,
    config: Config,
    registry: ToolRegistry,
    client_factory: Any,
    trigger: str = "nudge",
    focus: str = "",
) -> Future[ReviewRun | None]:
    if private_chats.is_private(session_id):  # never reviewed, whatever asked (docs/BEHAVIOUR.md, Private chats)
        skipped: Future[ReviewRun | None] = Future()
        skipped.set_result(None)
        return skipped
    kind = prompt_kind(review_memory, review_skills)
    durable = jobs.durable()
    run = ReviewRun.objects.create(
        session_id=session_id,
        trigger=trigger,
        prompt_kind=kind,
        model=config.review_model,
        status="queued",
        # On the durable queue no process holds it until a worker starts it.
        worker=runs.IN_QUEUE if durable else this_worker(),
        # The end of the version the turn continued (knowledge/versions.py), not the newest message.
        upto_message_id=versions.leaf_of(session_id),
        focus=focus,
    )
    # On this process's threads the review reuses the live conversation, tools and client
    # factory; on the queue a worker rebuilds them from the run's id (review_task).
    job = ReviewJob(run.pk, session_id, list(snapshot), kind, config, registry, client_factory, focus=focus)
    future = jobs.start(review_task, run.pk, kind="review", here=partial(_run_review, job))
    if future is None:
        queued: Future[ReviewRun | None] = Future()
        queued.set_result(run)  # the queue worker (manage.py learning_worker) runs it
        return queued
    return future


def enqueue_review(run_id: int) -> None:
    review_task.enqueue(run_id)


@task(queue_name="learning")
def review_task(run_id: int) -> None:
    """A review on the durable queue: everything it needs is found again from its run's id
    (the conversation up to the message the turn ended with, today's config and tools)."""
    run = ReviewRun.objects.select_related("session").get(pk=run_id)
    if run.status not in ReviewRun.ACTIVE or run.session is None:
        log.info("review %s is already %s; nothing to do", run_id, run.status)
        return
    config = hermes_config.get()
    job = ReviewJob(
        run_id,
        run.session.pk,
        run.session.api_messages(upto_id=run.upto_message_id),
        run.prompt_kind,
        config,
        build_registry(config),
        client_from_config,
        focus=run.focus,
    )
    _run_review(job)


def run_review_now(
    *,
    session_id: str,
    snapshot: list[dict[str, Any]],
    kind: str,
    config: Config,
    registry: ToolRegistry,
    client_factory: Any,
    trigger: str = "eval",
    evidence_rule: bool | None = None,
) -> ReviewRun:
    """The same review, run in the calling thread (manage.py eval_learning measures it this way,
    inside a transaction it rolls back, with the same prompt whether the evidence gate is on or off)."""
    run = ReviewRun.objects.create(
        session_id=session_id, trigger=trigger, prompt_kind=kind, model=config.review_model, status="queued"
    )
    if not run.start(this_worker()):
        run.fail("Another review of this session is running.")
        return run
    job = ReviewJob(run.pk, session_id, list(snapshot), kind, config, registry, client_factory, evidence_rule)
    return _execute(job, run)


def request_review(
    session: ChatSession,
    focus: str = "",
    *,
    config: Config,
    registry: ToolRegistry,
    client_factory: Any,
    snapshot: list[dict[str, Any]] | None = None,
) -> Future[ReviewRun | None]:
    """The same background review the counters start, started now because the person asked for it,
    over the conversation so far (or `snapshot`), of memory and skills as far as their tools are
    offered; `focus` goes into its prompt. Raises ReviewRefused with the reason when it cannot run."""
    if private_chats.is_private(session.pk):  # read fresh: switched on another page a moment ago
        raise ReviewRefused("This chat is private: nothing is learned from it, so it cannot be reviewed.")
    focus = " ".join(focus.split())
    if len(focus) > MAX_FOCUS_CHARS:
        raise ReviewRefused(f"The focus is {len(focus):,} characters; keep it under {MAX_FOCUS_CHARS:,}.")
    memory, skills = "memory" in registry, "skill_manage" in registry
    if not (memory or skills):
        raise ReviewRefused("Reviews need the memory or skill tools, and neither is enabled.")
    messages = session.api_messages() if snapshot is None else snapshot
    if not any(m.get("role") == "user" for m in messages):
        raise ReviewRefused("This chat has nothing to review yet: send a message first.")
    return spawn_review(
        session_id=session.pk,
        snapshot=messages,
        review_memory=memory,
        review_skills=skills,
        config=config,
        registry=registry,
        client_factory=client_factory,
        trigger=REQUEST_TRIGGER,
        focus=focus,
    )


def wait_for_reviews(session_id: str, timeout: float) -> bool:
    """Block until this session's queued reviews finish (the terminal chat before exit)."""
    return runs.wait_idle(session_id, timeout)


def is_running(session_id: str) -> bool:
    return runs.is_active(session_id)


@dataclass(frozen=True)
class ReviewJob:
    run_id: int
    session_id: str
    snapshot: list[dict[str, Any]]  # a copy: the chat goes on appending to its own list
    kind: str
    config: Config
    registry: ToolRegistry
    client_factory: Any
    evidence_rule: bool | None = None  # None: as learning.evidence says
    focus: str = ""  # what the person asked a review on demand to look at


def _run_review(job: ReviewJob) -> ReviewRun | None:
    run = ReviewRun.objects.get(pk=job.run_id)
    try:
        if not _wait_for_turn(run):
            run.fail(f"Another review of this session was still running after {MAX_WAIT_SECONDS // 60} minutes.")
            return None
        return _execute(job, run)
    except Exception as exc:  # a failure outside the loop (database, notification) must not leave it "running"
        log.exception("background review %s failed", job.run_id)
        run.fail(f"{type(exc).__name__}: {exc}")
        raise
    finally:
        close_old_connections()


def _wait_for_turn(run: ReviewRun) -> bool:
    """One review per session at a time: a second waits here until the first is done, not dropped."""
    return poll_until(lambda: run.start(this_worker()), MAX_WAIT_SECONDS)


def _review_context(job: ReviewJob, client: Any) -> ToolContext:
    return ToolContext(
        actor="review",
        session_id=job.session_id,
        review_id=job.run_id,
        turn_state={},
        stage_writes={
            "memory": job.config.memory.write_approval,
            "skills": job.config.skills.write_approval,
        },
        llm=client,
        seen=job.snapshot,
    )


def _execute(job: ReviewJob, run: ReviewRun) -> ReviewRun:
    run_id, session_id, kind, config = job.run_id, job.session_id, job.kind, job.config
    started = time.monotonic()
    client = None
    ctx: ToolContext | None = None
    finished: list[ToolFinished] = []
    error = ""
    try:
        client = job.client_factory(config, config.review_model)
        ctx = _review_context(job, client)
        loop = AgentLoop(
            client=client,
            registry=job.registry.subset(review_tools(kind)),
            ctx=ctx,
            max_iterations=config.review.max_iterations,
            before_tools=partial(verify_batch.prepare, ctx=ctx),
        )
        handed = outcomes.hand_to_review(run_id) if kind in ("skill", "combined") else ""
        request = review_request(kind, config, handed, evidence_rule=job.evidence_rule, focus=job.focus)
        messages = job.snapshot + [{"role": "user", "content": request}]
        for event in loop.run(messages):
            if isinstance(event, ModelCalled):
                run.prompt_tokens += event.usage.prompt_tokens
                run.completion_tokens += event.usage.completion_tokens
                run.iterations = event.iteration
            elif isinstance(event, ToolFinished):
                finished.append(event)
            elif isinstance(event, TurnError):
                error = event.message
            elif isinstance(event, TurnDone) and event.hit_limit:
                error = f"Stopped at the review's limit of {loop.max_iterations} model calls."
    except Exception as exc:  # a review must never raise into the chat: record and move on
        log.exception("background review %s failed", run_id)
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if client is not None:
            client.close()
    # The verifier's calls are the review's too (agent/tools/verify_gate.py).
    run.prompt_tokens += ctx.turn_state.get("verify_prompt_tokens", 0) if ctx else 0
    run.completion_tokens += ctx.turn_state.get("verify_completion_tokens", 0) if ctx else 0
    saved = saved_writes(finished)
    changes = [{key: str(value) for key, value in write.items()} for write in saved]
    duration_ms = int((time.monotonic() - started) * 1000)
    run.finish(summary=summary_of(saved) or NOTHING_TO_SAVE, changes=changes, error=error, duration_ms=duration_ms)
    # Writes left waiting for the person are news too: the notice names them, not only the saved ones.
    notify.publish(review_notice(run, session_id))
    return run
