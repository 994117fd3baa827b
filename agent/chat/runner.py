"""One chat session's driver: load it, run turns through the loop, persist, learn.

Both the browser consumer and the terminal command use `AgentSession`. It owns the live
message list (system prompt first), saves every message as soon as it exists (so a crash or a
model error loses nothing that was said), keeps the nudge counters on the session row, and
after each completed turn hands the conversation to the background review.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, fields, replace
from typing import Any

from django.db import close_old_connections
from django.db.models import F
from django.utils import timezone

from agent import clients
from agent.chat import chat_settings, image_parts, titles
from agent.chat import records as turn_records
from agent.chat import versions as chat_versions
from agent.chat.skill_use import SkillUseTracker
from agent.chat.slash import model_text_of
from agent.chat.validation import message_error
from agent.conversation import Conversation
from agent.learning.compression import TokenCount, compress, flush_memory, needs_compression
from agent.learning.nudge import NudgeCounters
from agent.learning.providers import ProviderManager, inject_context, sources_of
from agent.learning.review import spawn_review
from agent.llm import ChatClient, LLMError, StopSignal
from agent.loop import AgentLoop, Event, ModelCalled, ModelClient, TextDelta, ToolFinished, TurnDone, TurnError
from agent.tools.registry import ToolContext, ToolRegistry
from agent.toolset import build_registry
from foundation import config as hermes_config
from foundation.config import Config
from knowledge import versions
from knowledge.capabilities import DbCapabilityStore
from knowledge.compiled_query import SessionRowQuery
from knowledge.models import ChatSession, Message, ReviewRun
from knowledge.skills import outcomes
from knowledge.skills.store import SkillStore

log = logging.getLogger(__name__)


@dataclass
class TurnStarted:
    user_message_id: int
    text: str
    kind: str = "message"  # or an agent/chat/versions.py KIND
    answer_id: int | None = None  # the stopped answer a "continue" extends


@dataclass
class TurnSaved:
    """Emitted after TurnDone/TurnError once everything of the turn is stored."""

    session_id: str
    review_spawned: bool
    turns_until_memory_review: int | None
    iters_until_skill_review: int | None


@dataclass(frozen=True)
class TurnShape:
    """What the stored chat says about its next turn, read in one query when the turn starts.

    The counts tell whether an agent's conversation is still the stored one (another server
    process may have answered, compressed or switched versions); the rest are the chat's own
    settings, which the settings panel or the model menu may have changed on any worker.
    `AgentSession.is_current` and `AgentSession.follow` are the only readers."""

    message_count: int
    compression_count: int
    revision: int
    model: str
    instructions: str
    temperature: float | None
    private: bool  # a private chat counts nothing toward a review (knowledge/private_chats.py)

    @classmethod
    def read(cls, session_id: str) -> TurnShape | None:
        """The chat's shape as stored now; None when it no longer exists."""
        row = _SHAPE.row(session_id)
        if row is None:
            return None
        count, compressions, revision, model, instructions, temperature, private = row
        return cls(
            message_count=int(count),
            compression_count=int(compressions),
            revision=int(revision),
            model=str(model or ""),
            instructions=str(instructions or ""),
            temperature=None if temperature is None else float(temperature),
            private=bool(private),  # SQLite stores it as 0 or 1
        )


# One read at the start of every turn, its SQL compiled once per process.
_SHAPE = SessionRowQuery(
    ChatSession, lambda pk: ChatSession.objects.filter(pk=pk).values_list(*(f.name for f in fields(TurnShape)))[:1]
)


RunnerEvent = Event | TurnStarted | TurnSaved
ClientFactory = Callable[[Config, str | None], ModelClient]


def default_client_factory(config: Config, model: str | None = None) -> ModelClient:
    """A client on the process's shared connection to the configured server (agent/clients.py).

    What the server refused is stored, so every session and process starts adapted."""
    client: ChatClient = clients.shared.chat_client(config, model, capabilities=DbCapabilityStore())
    return client


class InputTooLarge(ValueError):
    pass


@dataclass
class _Turn:
    """What one turn did, gathered while it runs: its answer, its error, the skills it used."""

    user_message_id: int
    skills: SkillUseTracker
    answer: turn_records.StreamedAnswer | chat_versions.ContinuedAnswer  # the model call's answer as it streams
    answer_id: int | None = None
    error: str = ""
    final: TurnDone | None = None


class AgentSession:
    def __init__(
        self,
        session: ChatSession,
        *,
        config: Config | None = None,
        registry: ToolRegistry | None = None,
        client_factory: ClientFactory = default_client_factory,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.clock = clock  # paces the checkpoints of a streaming answer
        self.config = config or hermes_config.get()
        # The process's config (not one a caller built) is followed: a setting saved since, on any worker.
        self._follows_config = self.config is hermes_config.get() and registry is None
        if registry is None:
            registry = build_registry(self.config)
        self.registry = registry
        self.client_factory = client_factory
        self._client: ModelClient | None = None
        self._client_key = ""  # the API key the client was made with (a key saved since needs a new one)
        # The model's view of the chat, derived from its stored rows (agent/conversation.py).
        self.conversation = Conversation(session)
        self.token_count = TokenCount()  # estimate of self.messages, for compression
        # Messages stored so far as this agent knows them: another process's turn changes the count.
        self.known_messages = session.message_count
        self.counters = NudgeCounters(
            memory_interval=self.config.memory.nudge_interval,
            skill_interval=self.config.skills.creation_nudge_interval,
            memory_available="memory" in self.registry,
            skill_available="skill_manage" in self.registry,
            turns_since_memory=session.turns_since_memory,
            iters_since_skill=session.iters_since_skill,
        )
        # The counters as the session row holds them: each message stored writes them in its own
        # UPDATE, so the turn's end writes them only when they changed after its last message.
        self._stored_counters = (session.turns_since_memory, session.iters_since_skill)
        self.providers = ProviderManager.from_config(self.config.memory.provider, session.pk)
        self.interrupt: threading.Event = StopSignal()
        self._turn_lock = threading.Lock()
        self._recalled: list[dict[str, Any]] = []  # what the providers recalled for the running turn
        self._answered = titles.AnsweredBefore()  # whether a turn is the chat's first exchange (its title)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation as the model reads it (the tool-calling loop appends to this list)."""
        return self.conversation.messages

    @property
    def leaf_id(self) -> int | None:
        """The last stored message of the version this agent continues: the parent of the next one."""
        return self.conversation.leaf_id

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        *,
        session_id: str | None = None,
        name: str | None = None,
        source: str = "cli",
        **kwargs: Any,
    ) -> AgentSession:
        """Resume the session with this id or name, or create it (with its system prompt)."""
        config: Config = kwargs.get("config") or hermes_config.get()
        kwargs["config"] = config
        return cls(turn_records.open_session(config, session_id=session_id, name=name, source=source), **kwargs)

    @property
    def client(self) -> ModelClient:
        if self._client is None:
            self._client = self.client_factory(self.config, None)
            self._client_key = self.config.api_key
        if isinstance(self._client, ChatClient):
            self._client.temperature = self.session.temperature
        return self._client

    def is_current(self, shape: TurnShape | None) -> bool:
        """Whether the stored chat (`shape`, just read) is still the conversation this agent holds:
        no turn or compression by another server process, no other version chosen, not deleted.
        An agent that is not current is reopened from the stored rows."""
        return (
            shape is not None
            and shape.message_count == self.known_messages
            and shape.compression_count == self.session.compression_count
            and shape.revision == self.session.revision
        )

    def follow(self, shape: TurnShape | None) -> None:
        """Bring this current agent up to everything else that governs its next turn: the config
        saved since (on any worker), the chat's model, instructions and temperature (`shape`), and
        the API key; the model client is closed when what it was made with changed."""
        self._follow_config()
        if shape is not None:
            self.session.instructions, self.session.temperature = shape.instructions, shape.temperature
            self.session.private = self.counters.private = shape.private
            if shape.model != self.session.model:
                self.session.model = shape.model
                self.close()  # the next call gets a client for the chat's model
        if self._client is not None and self.config.api_key != self._client_key:
            self.close()  # a key saved on the settings page since: the next call uses it

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- turns --------------------------------------------------------------------------------
    def user_turn_count(self) -> int:
        return int(self.session.user_turn_count)

    def run_turn(
        self,
        user_text: str,
        interrupt: threading.Event | None = None,
        request: chat_versions.TurnRequest | None = None,
        shape: TurnShape | None = None,
    ) -> Iterator[RunnerEvent]:
        """A new question, or (`request`) an edit, a regenerated or continued answer (agent/chat/versions.py).

        `shape`: the chat as the caller just read it (None: read here)."""
        self.follow(shape if shape is not None else TurnShape.read(self.session.pk))
        request = request or chat_versions.TurnRequest()
        limit = self.config.agent.max_message_chars
        error = message_error(user_text, limit, len(request.images)) if request.needs_text else None
        if error is not None:
            raise InputTooLarge(error)
        with self._turn_lock:
            self.interrupt = interrupt or StopSignal()
            yield from self._run_turn_locked(user_text, request)

    def _follow_config(self) -> None:
        """A setting saved since the last turn, on this worker or another, governs this turn
        (one stat of config.yaml when nothing changed)."""
        fresh = hermes_config.refresh()
        if not self._follows_config or fresh is self.config:
            return
        self.close()  # the next model call gets a client for the new model settings
        self.config, self.registry = fresh, build_registry(fresh)
        self.counters.memory_interval = fresh.memory.nudge_interval
        self.counters.skill_interval = fresh.skills.creation_nudge_interval
        self.counters.memory_available = "memory" in self.registry
        self.counters.skill_available = "skill_manage" in self.registry

    def _open_turn(self, user_text: str, request: chat_versions.TurnRequest) -> tuple[Message, _Turn, TurnStarted]:
        """Store the question (or find the one answered again) and give the model its context."""
        target = chat_versions.target(self.session, request)
        if target.after is not None:  # another version than the chosen one goes on
            versions.keep_summary(self.session, versions.Tree.load(self.session.pk).path(target.after))
            self.conversation.go_to(target.after)
        user_msg = target.question
        if user_msg is None:
            # The stored message is what the user typed; the model gets the expanded text.
            # One transaction per turn step: the message and its session counters together.
            user_msg = self._store(
                {"role": "user", "content": user_text},
                first_user=self.session.user_turn_count == 0,
                session_updates={"user_turn_count": F("user_turn_count") + 1},
            )
            self.session.user_turn_count += 1
        model_text, slash_name = model_text_of(user_msg.content, SkillStore(self.config))
        chat_versions.put_question(self.conversation, target, user_msg, model_text)
        if target.question is None:  # stored just now: its images (an edit's: the original's) go with it
            image_parts.attach(self.messages[-1], request, user_msg.pk, self.session.pk)
        # A checkpointed answer is stored as any message of the turn: after the last one of its version.
        streamed = turn_records.StreamedAnswer(
            self.session,
            clock=self.clock,
            store=lambda msg: self._store(msg, finish_reason=turn_records.DRAFT_REASON),
        )
        answer = chat_versions.answer_of(target, self.session, streamed)
        turn = _Turn(user_msg.pk, SkillUseTracker(slash_name), answer)
        answer_id = target.answer.pk if target.answer else None
        return user_msg, turn, TurnStarted(user_msg.pk, user_msg.content, request.kind, answer_id)

    def _run_turn_locked(self, user_text: str, request: chat_versions.TurnRequest) -> Iterator[RunnerEvent]:
        self.counters.turn_started()
        user_msg, turn, started = self._open_turn(user_text, request)
        user_text = user_msg.content
        yield started
        ctx = ToolContext(
            actor="agent",
            session_id=self.session.pk,
            message_id=user_msg.pk,
            turn_state={},
            llm=self.client,
            seen=self.messages,
            user_text=user_text,
        )
        # Providers see the ORIGINAL user text; their context goes into the API copy only.
        recalled = self.providers.prefetch_all(user_text)
        # Kept with the turn's answer (agent/chat/sources.py): its "Sources" list shows them.
        self._recalled = sources_of(recalled)
        loop = AgentLoop(
            client=self.client,
            registry=self.registry,
            ctx=ctx,
            max_iterations=self.config.agent.max_iterations,
            api_view=lambda msgs: image_parts.with_images(
                chat_settings.with_instructions(inject_context(msgs, recalled) or msgs, self.session.instructions),
                getattr(self.client, "accepts_images", True),
            ),
            before_call=self._maybe_compress,
        )
        for event in loop.run(self.messages, self.interrupt):
            self._persist(event, turn)
            if isinstance(event, TurnDone):
                event = replace(event, final_text=turn.answer.shown(event.final_text))
            yield event
        self.conversation.turn_ended()
        yield self._after_turn(user_text, turn)

    def _persist(self, event: Event, turn: _Turn) -> None:
        """Store what the event produced as soon as it exists, and note what the turn did."""
        if isinstance(event, TextDelta):
            turn.answer.add(event.text)  # checkpointed as it streams (counted when first stored)
        elif isinstance(event, ModelCalled):
            stored = self._model_called(event, turn.answer)
            if stored is not None and event.message.get("content"):
                turn.answer_id = stored.pk
        elif isinstance(event, ToolFinished):
            self.counters.tool_called(event.name)
            self._store(event.message, tool_name=event.name)
            turn.skills.tool_finished(event.name, str(event.message.get("content") or ""))
        elif isinstance(event, TurnError):
            turn.error = event.message
            partial = {"role": "assistant", "content": event.partial_text or "".join(turn.answer.text)}
            row = turn.answer.finish(partial, finish_reason="error")
            if row is None and partial["content"]:
                row = self._store(partial, finish_reason="error")
            turn.answer_id = row.pk if row is not None else turn.answer_id
        elif isinstance(event, TurnDone):
            turn.final = event

    def _after_turn(self, user_text: str, turn: _Turn) -> TurnSaved:
        self.counters.turn_finished()
        final = turn.final
        interrupted = final is None or final.interrupted
        if not self.session.private:  # an outcome's record goes to later skill reviews, with what the turn said
            uses = turn.skills.uses(interrupted=interrupted, error=turn.error)
            if uses:  # most turns use no skill: nothing to record
                outcomes.record_turn(self.session.pk, turn.user_message_id, turn.answer_id, uses)
        mem_flag, skill_flag = self.counters.take_flags()
        spawned = False
        completed = final is not None and bool(final.final_text) and not final.interrupted
        if completed and final is not None:
            self.providers.sync_all(user_text, final.final_text)
            self.providers.queue_prefetch_all(user_text)
            titles.after_turn(self.session, self.config, turn.user_message_id, self._answered)
        # A review is a tool-calling agent: with a model the server says cannot call tools it
        # could only spend tokens (the chat page tells the person reviews are off).
        can_call_tools = getattr(self.client, "can_call_tools", True)
        if completed and (mem_flag or skill_flag) and can_call_tools:
            self.spawn_review(mem_flag, skill_flag)
            spawned = True
        self._save_counters()
        return TurnSaved(
            session_id=self.session.pk,
            review_spawned=spawned,
            turns_until_memory_review=self.counters.turns_until_memory(),
            iters_until_skill_review=self.counters.iters_until_skill(),
        )

    def _maybe_compress(self, messages: list[dict[str, Any]]) -> None:
        if needs_compression(self):
            compress(self)

    def spawn_review(
        self, review_memory: bool, review_skills: bool, snapshot: list[dict[str, Any]] | None = None
    ) -> Future[ReviewRun | None]:
        """A background review of this session's conversation (or of `snapshot`)."""
        return spawn_review(
            session_id=self.session.pk,
            snapshot=list(self.messages if snapshot is None else snapshot),
            review_memory=review_memory,
            review_skills=review_skills,
            config=self.config,
            registry=self.registry,
            client_factory=self.client_factory,
        )

    # -- persistence --------------------------------------------------------------------------
    def _store(self, msg: dict[str, Any], **kw: Any) -> Message:
        """Store one message of this session (agent/chat/records.py) after the last one of its
        version, and count it as known."""
        counters = self._counter_updates()
        kw["session_updates"] = {**(kw.get("session_updates") or {}), **counters}
        m = turn_records.store_message(self.session, msg, parent_id=self.leaf_id, **kw)
        self._stored_counters = (counters["turns_since_memory"], counters["iters_since_skill"])
        self.known_messages += 1
        self.conversation.stored(m.pk)
        return m

    def _model_called(
        self, event: ModelCalled, answer: turn_records.StreamedAnswer | chat_versions.ContinuedAnswer
    ) -> Message | None:
        """Count the call; store its message (if any) with the usage in one transaction: into
        the answer's checkpointed row when it has one."""
        self.counters.model_called()
        counters = self._counter_updates()
        usage = {**turn_records.usage_updates(self.session, event), **counters}
        stored: dict[str, Any] = {
            "finish_reason": event.finish_reason,
            "tokens": event.usage.completion_tokens,
            "session_updates": usage,
            # Kept on the row that shows the answer (one with text); [] says nothing was recalled.
            "sources": self._recalled if event.message.get("content") else None,
        }
        finished = answer.finish(event.message, **stored)
        if finished is not None:
            self._stored_counters = (counters["turns_since_memory"], counters["iters_since_skill"])
            return finished
        # An answer stopped before its first token is kept as an empty row marked interrupted,
        # so a reload still says it was stopped (the model is never sent it: api_messages).
        stopped_early = event.finish_reason == "interrupted"
        if event.message.get("content") or event.message.get("tool_calls") or stopped_early:
            return self._store(event.message, **stored)
        ChatSession.count_usage(self.session.pk, usage)
        self._stored_counters = (counters["turns_since_memory"], counters["iters_since_skill"])
        return None

    def _counter_updates(self) -> dict[str, int]:
        """The nudge counters as they stand, for the session UPDATE of a message being stored."""
        return {
            "turns_since_memory": self.counters.turns_since_memory,
            "iters_since_skill": self.counters.iters_since_skill,
        }

    def _save_counters(self) -> None:
        """The counters kept on the session row (a restart goes on from them): written here only
        when the turn's end changed them after its last stored message (a review fired)."""
        now = (self.counters.turns_since_memory, self.counters.iters_since_skill)
        if now != self._stored_counters:
            ChatSession.save_counters(self.session.pk, *now)
            self._stored_counters = now
        self.session.turns_since_memory = self.counters.turns_since_memory
        self.session.iters_since_skill = self.counters.iters_since_skill

    # -- ending -------------------------------------------------------------------------------
    def end(self, reason: str = "closed") -> None:
        """End the session: memory flush (docs/BEHAVIOUR.md, The learning loop), mark it ended, release the client.

        Waits for a turn of this agent still running, so ending never cuts an answer off."""
        with self._turn_lock:
            self._end(reason)

    def _end(self, reason: str) -> None:
        try:
            flush_memory(self)
            self.providers.on_session_end_all(self.messages)
        except LLMError as exc:
            log.warning("memory flush at session end failed: %s", exc)
        finally:
            self.providers.shutdown_all()
            ChatSession.mark_ended(self.session.pk, reason, timezone.now())
            self.close()
            close_old_connections()
