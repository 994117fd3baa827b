"""The background review (SPEC §5, seed §20.3): a shadow run of the same loop that saves
what the conversation taught into memory and skills.

It runs on a bounded thread pool, at most one review per session at a time (a second one
waits for the first rather than being dropped), with its own counters off, at most
`review.max_iterations` model calls, and only the four knowledge tools — enforced by giving
the loop a registry that holds nothing else, so any other call is refused by the dispatcher.
Its outcome is recorded on a ReviewRun and published to the notification hook.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.db import close_old_connections
from django.utils import timezone

from agent import notify
from agent.loop import AgentLoop, ModelCalled, ToolFinished, TurnDone, TurnError
from agent.tools.registry import ToolContext, ToolRegistry
from hermes_site.config import Config
from knowledge.models import ReviewRun

log = logging.getLogger(__name__)

REVIEW_TOOLS = ("memory", "skill_manage", "skills_list", "skill_view")

# The three prompts of the seed (§20.3.1), verbatim; the combined prompt's "..." stand for the
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

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bg-review")
_session_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
_pending: dict[str, list[Future[ReviewRun | None]]] = defaultdict(list)
_registry_lock = threading.Lock()


def prompt_kind(review_memory: bool, review_skills: bool) -> str:
    if review_memory and review_skills:
        return "combined"
    return "memory" if review_memory else "skill"


def summarize_results(tool_messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """The 💾 summary: messages of successful results that changed something, de-duplicated
    in order and joined with " · " (SPEC §5)."""
    actions: list[str] = []
    changes: list[dict[str, str]] = []
    for msg in tool_messages:
        try:
            data = json.loads(msg.get("content") or "{}")
        except (json.JSONDecodeError, TypeError):
            continue
        if not isinstance(data, dict) or not data.get("success") or not data.get("changed"):
            continue
        message = str(data.get("message") or "").strip()
        if message:
            actions.append(message)
            changes.append({"message": message, "target": str(data.get("target") or data.get("path") or "")})
    return " · ".join(dict.fromkeys(actions)), changes


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
) -> Future[ReviewRun | None]:
    kind = prompt_kind(review_memory, review_skills)
    run = ReviewRun.objects.create(
        session_id=session_id, trigger=trigger, prompt_kind=kind, model=config.review_model, status="queued"
    )
    job = ReviewJob(run.pk, session_id, list(snapshot), kind, config, registry, client_factory)
    future = _pool.submit(_run_review, job)
    with _registry_lock:
        _pending[session_id].append(future)
    return future


def wait_for_reviews(session_id: str, timeout: float) -> bool:
    """Block until this session's queued reviews finish (the terminal chat before exit)."""
    deadline = time.monotonic() + timeout
    with _registry_lock:
        futures = list(_pending.get(session_id, []))
    for f in futures:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        try:
            f.result(timeout=remaining)
        except TimeoutError:
            return False
    return True


def is_running(session_id: str) -> bool:
    with _registry_lock:
        return any(not f.done() for f in _pending.get(session_id, []))


@dataclass(frozen=True)
class ReviewJob:
    run_id: int
    session_id: str
    snapshot: list[dict[str, Any]]  # a copy: the chat goes on appending to its own list
    kind: str
    config: Config
    registry: ToolRegistry
    client_factory: Any


def _run_review(job: ReviewJob) -> ReviewRun | None:
    lock = _session_locks[job.session_id]
    with lock:  # one review per session at a time; a second waits here, it is not dropped
        try:
            return _execute(job)
        finally:
            close_old_connections()
            with _registry_lock:
                _pending[job.session_id] = [f for f in _pending[job.session_id] if not f.done()]


def _execute(job: ReviewJob) -> ReviewRun:
    run_id, session_id, kind, config = job.run_id, job.session_id, job.kind, job.config
    run = ReviewRun.objects.get(pk=run_id)
    run.status = "running"
    run.save(update_fields=["status"])
    started = time.monotonic()
    client = None
    tool_messages: list[dict[str, Any]] = []
    error = ""
    try:
        client = job.client_factory(config, config.review_model)
        ctx = ToolContext(
            actor="review",
            session_id=session_id,
            review_id=run_id,
            turn_state={},
            stage_writes={
                "memory": bool(config.get("memory", "write_approval")),
                "skills": bool(config.get("skills", "write_approval")),
            },
            llm=client,
        )
        loop = AgentLoop(
            client=client,
            registry=job.registry.subset(REVIEW_TOOLS),
            ctx=ctx,
            max_iterations=int(config.get("review", "max_iterations")),
        )
        messages = job.snapshot + [{"role": "user", "content": PROMPTS[kind]}]
        for event in loop.run(messages):
            if isinstance(event, ModelCalled):
                run.prompt_tokens += event.usage.prompt_tokens
                run.completion_tokens += event.usage.completion_tokens
                run.iterations = event.iteration
            elif isinstance(event, ToolFinished):
                tool_messages.append(event.message)
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
    summary, changes = summarize_results(tool_messages)
    run.summary = summary or NOTHING_TO_SAVE
    run.changes = changes
    run.error = error
    run.status = "failed" if error and not changes else "done"
    run.duration_ms = int((time.monotonic() - started) * 1000)
    run.finished_at = timezone.now()
    run.save()
    notify.publish(
        notify.ReviewNotice(
            session_id=session_id,
            review_id=run_id,
            prompt_kind=kind,
            summary=summary,
            status=run.status,
            error=error,
            changes=changes,
        )
    )
    return run
