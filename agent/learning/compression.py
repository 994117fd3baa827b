"""Memory flush and context compression (docs/BEHAVIOUR.md, The learning loop).

The flush runs on a copy of the conversation: the flush message, the model's reply and the
tool results never enter the live message list or the stored history. Its memory calls go
through the same store (recorded with actor "flush") and do not touch the nudge counters,
because the runner never sees them.

Compression keeps the system prompt, the first `protect_first_n` messages and a tail of at
least 8 messages (never separating a tool call from its results), and replaces the middle by
one summary message; then the system prompt is rebuilt once, so memory saved during the
session shows up.
"""

from __future__ import annotations

import json
import logging
import operator
from functools import partial
from typing import Any, Protocol

from django.utils import timezone

from agent.admission import batch as verify_batch
from agent.conversation import Conversation
from agent.learning.providers import ProviderManager
from agent.llm import LLMError
from agent.loop import AgentLoop, ModelClient, TurnError
from agent.tools.registry import ToolContext, ToolRegistry
from foundation.config import Config
from knowledge import private_chats
from knowledge.models import ChatSession
from knowledge.prompt import build_system_prompt


class AgentSession(Protocol):
    """What flush and compression need of a live session (agent.chat.runner.AgentSession has it)."""

    config: Config
    registry: ToolRegistry
    session: ChatSession
    conversation: Conversation  # the model's view, derived from the stored rows
    token_count: TokenCount
    providers: ProviderManager  # the external memory providers, told before compression

    @property
    def messages(self) -> list[dict[str, Any]]: ...

    @property
    def client(self) -> ModelClient: ...

    def user_turn_count(self) -> int: ...


log = logging.getLogger(__name__)

FLUSH_MESSAGE = (
    "[System: The session is being compressed. "
    "Save anything worth remembering — prioritize user preferences, "
    "corrections, and recurring patterns over task-specific details.]"
)

SUMMARY_PREFIX = "[Summary of the earlier part of this conversation, made to save context]\n"
MIN_TAIL = 8
SUMMARY_INPUT_CHARS = 60_000

SUMMARY_INSTRUCTION = (
    "Summarise the conversation below for your own future reference. Keep the user's goals, "
    "decisions, facts, file names, commands and open questions; drop pleasantries. "
    "Write at most 300 words."
)


# The evidence rule's paragraph for the flush (docs/DECISIONS.md, record 5); the review has its own wording of it.
FLUSH_EVIDENCE_RULE = (
    "Evidence rule: save only what the user said or clearly showed. With every memory write pass "
    "'evidence': the user's exact words, quoted verbatim. Never infer personal facts; a write whose "
    "quotes are not found in the conversation is not saved."
)


def flush_request(config: Config) -> str:
    if config.learning.evidence == "required":
        return FLUSH_MESSAGE + "\n\n" + FLUSH_EVIDENCE_RULE
    return FLUSH_MESSAGE


def flush_memory(agent: AgentSession) -> bool:
    """One model call offering only `memory`; returns True if a flush ran (never for a private chat)."""
    config = agent.config
    min_turns = config.memory.flush_min_turns
    memory_on = config.memory_on
    if min_turns == 0 or not memory_on or "memory" not in agent.registry:
        return False
    if agent.user_turn_count() < min_turns:
        return False
    # A private chat is never flushed; read from the row, as a chat switched on another page or
    # worker since this agent's last turn is private too (knowledge/private_chats.py).
    if private_chats.is_private(agent.session.pk):
        return False
    scratch = list(agent.messages) + [{"role": "user", "content": flush_request(config)}]
    ctx = ToolContext(
        actor="flush", session_id=agent.session.pk, turn_state={}, seen=list(agent.messages), llm=agent.client
    )
    # max_iterations=1: one call; its memory calls run, and no second call is made. Its writes are
    # read by the verifier in one batch, as a review's are.
    loop = AgentLoop(
        client=agent.client,
        registry=agent.registry.subset(["memory"]),
        ctx=ctx,
        max_iterations=1,
        before_tools=partial(verify_batch.prepare, ctx=ctx),
    )
    for event in loop.run(scratch):
        if isinstance(event, TurnError):
            log.warning("memory flush model call failed: %s", event.message)
    return True


def _chars(message: dict[str, Any]) -> int:
    return len(json.dumps(message, ensure_ascii=False))


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    # ~4 characters per token is the usual rule of thumb for English text and JSON.
    return sum(_chars(m) for m in messages) // 4


class TokenCount:
    """`estimate_tokens` of one session's message list, measuring each message once.

    Checked before every model call, the estimate serialised the whole conversation each time
    (~5% of the server's CPU per turn with 80 messages, under bench/live.py). The list only grows, or is
    rewritten by compression; a message is never changed in place once in it (the loop appends
    new dicts), so a message seen at the same place is the same size."""

    def __init__(self) -> None:
        self._seen: list[dict[str, Any]] = []
        self._sizes: list[int] = []
        self._total = 0

    def __call__(self, messages: list[dict[str, Any]]) -> int:
        seen = self._seen
        if len(seen) > len(messages) or not all(map(operator.is_, seen, messages)):
            same = 0  # rewritten (compression): keep the measured messages still in front
            while same < min(len(seen), len(messages)) and seen[same] is messages[same]:
                same += 1
            del seen[same:], self._sizes[same:]
            self._total = sum(self._sizes)
        for m in messages[len(seen) :]:
            seen.append(m)
            self._sizes.append(_chars(m))
            self._total += self._sizes[-1]
        return self._total // 4


def needs_compression(agent: AgentSession) -> bool:
    config = agent.config
    if not config.compression.enabled:
        return False
    limit = config.compression.threshold * config.context_window
    reported = int(agent.session.last_prompt_tokens or 0)
    return reported > limit or agent.token_count(agent.messages) > limit


def _split_points(messages: list[dict[str, Any]], protect: int) -> tuple[int, int] | None:
    """Where the head ends and the tail starts in `messages` (the context after the system prompt)."""
    head_end = protect
    while head_end < len(messages) and messages[head_end].get("role") == "tool":
        head_end += 1  # keep tool results with the call that asked for them
    tail_start = max(head_end, len(messages) - MIN_TAIL)
    while tail_start > head_end and messages[tail_start].get("role") == "tool":
        tail_start -= 1  # never start the tail with results whose call was summarised
    if tail_start - head_end < 2:
        return None
    return head_end, tail_start


def _summarise(agent: AgentSession, middle: list[dict[str, Any]]) -> str:
    lines = []
    for m in middle:
        text = m.get("content") or ""
        if m.get("tool_calls"):
            text += " " + json.dumps([c["function"] for c in m["tool_calls"]], ensure_ascii=False)
        lines.append(f"{m['role']}: {text}")
    transcript = "\n".join(lines)[-SUMMARY_INPUT_CHARS:]
    try:
        summary = agent.client.complete(
            [{"role": "system", "content": SUMMARY_INSTRUCTION}, {"role": "user", "content": transcript}],
            max_tokens=800,
        ).strip()
        if summary:
            return summary
    except LLMError as exc:
        log.warning("compression summary failed, using the fallback: %s", exc)
    # Fallback: the first line of each user message, so the thread of the conversation survives.
    asks = [str(m["content"]).splitlines()[0][:200] for m in middle if m["role"] == "user" and m.get("content")]
    return "Earlier, the user asked about:\n" + "\n".join(f"- {a}" for a in asks[-30:])


def compress(agent: AgentSession) -> bool:
    """Flush, then replace the middle of the live context by a summary. True if it compressed.

    The split is made on the stored rows the model reads (each with its id): the summary replaces
    the rows after the head's last one up to the tail's first, and the model's view is derived
    again from the rows."""
    entries = agent.conversation.entries()
    points = _split_points([m for _, m in entries], agent.config.compression.protect_first_n)
    if points is None:
        return False
    flush_memory(agent)
    # The memory providers get the whole conversation before its middle goes (handed over: the
    # turn does not wait for them; a private chat's is kept from them).
    agent.providers.on_pre_compress_all(agent.messages)
    head, middle = entries[: points[0]], entries[points[0] : points[1]]
    summary = SUMMARY_PREFIX + _summarise(agent, [m for _, m in middle])
    ChatSession.store_compression(
        agent.session.pk,
        system_prompt=build_system_prompt(agent.config),
        summary=summary,
        head_to=head[-1][0] if head else None,
        cut_to=middle[-1][0],
        when=timezone.now(),
    )
    agent.session.refresh_from_db()
    agent.conversation.rederive()
    return True
