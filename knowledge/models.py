"""Every persistent record of the product: conversations and their messages,
learning runs, the knowledge change log and pending writes. The records of other concerns live
in their own modules and are registered from here: attachments, model capabilities, worker
presence, and skill usage and outcomes (knowledge/skill_usage.py).

The tables of the conversation models were created by the `agent` app and moved here (with
their rows and the search index) by migrations; their names now say `knowledge_`.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

from knowledge import approvals, versions
from knowledge.attachments import MessageAttachment, api_dicts  # noqa: F401  (the model: its own module; registered from here)
from knowledge.capabilities import ModelCapabilities  # noqa: F401  (its own module; registered from here)
from knowledge.chat_sessions import ChatSessionQuerySet
from knowledge.chat_tags import ChatTag
from knowledge.compiled_query import BY_PK, NEW_ROW
from knowledge.history.presence import WorkerProcess  # noqa: F401  (its own module; registered from here)
from knowledge.history.workers import is_alive
from knowledge.provenance import ACTOR_LABELS, Provenance
from knowledge.share_links import ShareLink  # noqa: F401  (registered from here)
from knowledge.skill_usage import AnswerFeedback, SkillOutcome, SkillUsage  # noqa: F401  (registered from here)
from knowledge.vectors import EntryVector, MessageVector, RecallProgress  # noqa: F401  (registered from here)

log = logging.getLogger(__name__)


def without_nul(text: str) -> str:
    return text.replace("\x00", "\ufffd") if text and "\x00" in text else text


def without_nul_in(value: Any) -> Any:
    """`value` (parsed JSON) with every NUL in its strings, keys included, made U+FFFD. (Not by
    editing its JSON text: an argument holding the six characters \\u0000, code a model wrote,
    is no NUL and must come back as it was.)"""
    if isinstance(value, str):
        return without_nul(value)
    if isinstance(value, list):
        return [without_nul_in(item) for item in value]
    if isinstance(value, dict):
        return {without_nul(key): without_nul_in(item) for key, item in value.items()}
    return value


def _new_id() -> str:
    return uuid.uuid4().hex


class ChatSession(models.Model):
    SOURCES = [("web", "web"), ("cli", "cli")]

    id = models.CharField(primary_key=True, max_length=32, default=_new_id, editable=False)
    name = models.CharField(max_length=200, unique=True, null=True, blank=True)
    title = models.CharField(max_length=200, blank=True, default="")
    # Who chose the title: "message" (the first message, in plain words; the model may replace it
    # after the first answer), "model", or "person" (renamed, or a terminal chat's --session name).
    title_source = models.CharField(max_length=10, blank=True, default="")
    source = models.CharField(max_length=8, choices=SOURCES, default="web")
    model = models.CharField(max_length=200, blank=True, default="")
    system_prompt = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=40, blank=True, default="")
    # Who ends it (memory flush), so it is ended once: "" nobody yet, "queue" waiting for a
    # worker, else the worker (host:pid) doing it (knowledge/history/session_ends.py).
    end_worker = models.CharField(max_length=200, blank=True, default="")
    # Learning-loop counters: persisted so a restart does not lose them.
    turns_since_memory = models.PositiveIntegerField(default=0)
    iters_since_skill = models.PositiveIntegerField(default=0)
    user_turn_count = models.PositiveIntegerField(default=0)
    message_count = models.PositiveIntegerField(default=0)
    tool_call_count = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    last_prompt_tokens = models.PositiveBigIntegerField(default=0)
    compression_count = models.PositiveIntegerField(default=0)
    last_compressed_at = models.DateTimeField(null=True, blank=True)
    # After compression the live context is: system prompt, messages up to context_head_to,
    # the summary, then messages after context_cut_to. The stored history keeps everything.
    context_summary = models.TextField(blank=True, default="")
    context_head_to = models.BigIntegerField(null=True, blank=True)
    context_cut_to = models.BigIntegerField(null=True, blank=True)
    # The running turn, if any (knowledge/history/turns.py): which server process holds it, until when.
    turn_worker = models.CharField(max_length=200, blank=True, default="")
    turn_started_at = models.DateTimeField(null=True, blank=True)
    turn_lease_until = models.DateTimeField(null=True, blank=True)
    # The version of the conversation the chat shows and continues: the last message of the chosen
    # path (knowledge/versions.py). None: the newest message, which every new message becomes.
    leaf = models.ForeignKey("Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # Counts changes a new message does not show: another version chosen, a stopped answer continued.
    revision = models.PositiveIntegerField(default=0)
    # The person's organisation of the list (agent/chat/chat_list.py) and their own settings for
    # this chat, sent with its turns; blank: the defaults (agent/chat/chat_settings.py).
    pinned = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    tags = models.ManyToManyField(ChatTag, blank=True, related_name="sessions")
    instructions = models.TextField(blank=True, default="")
    temperature = models.FloatField(null=True, blank=True)
    # A private chat is kept out of learning and recall: no review, no flush, no provider sync,
    # not found by search or session_search. Stored, so a reload cannot lose it.
    private = models.BooleanField(default=False)

    # Conditional changes (a lease taken, an end claimed): knowledge/chat_sessions.py.
    objects = ChatSessionQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        indexes = [
            models.Index(fields=["-updated_at"]),
            # The few private chats, read by every search (knowledge/search/filters.py) without a
            # scan of the sessions' rows, whose system prompts come before this column.
            models.Index(fields=["id"], condition=models.Q(private=True), name="knowledge_session_private"),
        ]

    def __str__(self) -> str:
        return self.title or self.name or self.id

    @property
    def display_title(self) -> str:
        return self.title or self.name or "New chat"

    # -- State changes, by concern. Each is one UPDATE of the named columns of one row, never a
    # save(): the row is written from several processes at once (a turn, a page, a review), and
    # save() would write back every column as this process last read it. Callers update the
    # instance they hold themselves where they keep using it.

    # The person's choices on the chat's pages and menus.
    @classmethod
    def rename(cls, pk: str, title: str, source: str) -> None:
        """Set the title and who chose it ("person": the model's title never replaces it)."""
        cls.objects.filter(pk=pk).update(title=title, title_source=source)

    @classmethod
    def set_pinned(cls, pk: str, pinned: bool) -> None:
        cls.objects.filter(pk=pk).update(pinned=pinned)

    @classmethod
    def set_archived(cls, pk: str, when: datetime | None) -> None:
        """Archive the chat as of `when`, or bring it back to the list (None)."""
        cls.objects.filter(pk=pk).update(archived_at=when)

    @classmethod
    def set_settings(cls, pk: str, instructions: str, temperature: float | None) -> None:
        """The chat's own instructions and temperature, sent with its next turns."""
        cls.objects.filter(pk=pk).update(instructions=instructions, temperature=temperature)

    @classmethod
    def set_model(cls, pk: str, model: str) -> None:
        cls.objects.filter(pk=pk).update(model=model)

    @classmethod
    def set_private(cls, pk: str, private: bool) -> bool:
        """Keep the chat out of learning and recall (or let it back in); False: no such chat."""
        return cls.objects.filter(pk=pk).update(private=private) > 0

    # A turn's records: the columns each stored message or model call changes, in the same
    # UPDATE (and transaction) as the caller's, so a turn adds no query.
    @classmethod
    def record_message(cls, pk: str, columns: dict[str, Any]) -> None:
        """The counters, leaf, title and `updated_at` that one stored message changes
        (agent/chat/records.py builds them, with F() so concurrent counts add up); its SQL
        compiled once per set of columns (knowledge/compiled_query.py): a turn runs it twice."""
        BY_PK.run(cls, (pk,), columns)

    @classmethod
    def count_usage(cls, pk: str, usage: dict[str, Any]) -> None:
        """What a model call that stored no message changes: its tokens (agent/chat/records.py
        usage_updates) and the nudge counters."""
        BY_PK.run(cls, (pk,), usage)

    @classmethod
    def record_continued(cls, pk: str, columns: dict[str, Any], when: datetime) -> None:
        """A stopped answer continued in place: a change a new message does not show, so the
        revision counts it (with the continuation's own `columns`, its token counts)."""
        cls.objects.filter(pk=pk).update(**columns, revision=F("revision") + 1, updated_at=when)

    @classmethod
    def save_counters(cls, pk: str, turns_since_memory: int, iters_since_skill: int) -> None:
        """The learning loop's nudge counters, so a restart does not lose them."""
        BY_PK.run(cls, (pk,), {"turns_since_memory": turns_since_memory, "iters_since_skill": iters_since_skill})

    @classmethod
    def mark_ended(cls, pk: str, reason: str, when: datetime) -> None:
        """The end's last step, after the memory flush (knowledge/history/session_ends.py claims it)."""
        cls.objects.filter(pk=pk).update(ended_at=when, end_reason=reason)

    # The live context and the chosen version (knowledge/versions.py, agent/learning/compression.py).
    @classmethod
    def store_compression(
        cls, pk: str, *, system_prompt: str, summary: str, head_to: int | None, cut_to: int | None, when: datetime
    ) -> None:
        """The middle of the live context replaced by `summary`, counted; the last prompt's size
        is forgotten, as the next call's prompt is smaller."""
        cls.objects.filter(pk=pk).update(
            system_prompt=system_prompt,
            context_summary=summary,
            context_head_to=head_to,
            context_cut_to=cut_to,
            compression_count=F("compression_count") + 1,
            last_compressed_at=when,
            last_prompt_tokens=0,
        )

    @classmethod
    def drop_summary(cls, pk: str) -> None:
        """The summary no longer describes the chosen version: the model gets the whole of it."""
        cls.objects.filter(pk=pk).update(context_summary="", context_head_to=None, context_cut_to=None)

    @classmethod
    def choose_leaf(cls, pk: str, leaf_id: int | None) -> None:
        """Show the version ending at `leaf_id` (None: the newest message); counted as a revision."""
        cls.objects.filter(pk=pk).update(leaf_id=leaf_id, revision=F("revision") + 1)

    def api_messages(self, upto_id: int | None = None) -> list[dict[str, Any]]:
        """The live context in the chat-completions shape: the frozen system prompt, then the
        stored messages of the chosen version (after a compression: the head, the summary, the
        messages after the cut), or of the version ending at message `upto_id` if given (what a
        turn that ended there had; 0: none yet)."""
        return [{"role": "system", "content": self.system_prompt}, *(m for _, m in self.context(upto_id))]

    def context(self, upto_id: int | None = None) -> list[tuple[int, dict[str, Any]]]:
        """The live context after the system prompt, each message with the stored id it comes
        from (`api_messages`). The summary of a compression stands for the messages it replaced,
        so it carries the id of the last of them (`context_cut_to`)."""
        path = versions.path_messages(self, upto_id)
        cut = self.context_cut_to or 0
        head = [m for m in path if m.pk <= (self.context_head_to or 0)] if self.context_summary else []
        # Empty assistant rows mark answers stopped before their first token: nothing to send.
        rest = [m for m in path if m.pk > cut and (m.role != "assistant" or m.content or m.tool_calls)]
        out = list(zip((m.pk for m in head + rest), api_dicts(head + rest), strict=True))
        if self.context_summary:
            out.insert(len(head), (cut, {"role": "user", "content": self.context_summary}))
        return out


class Message(models.Model):
    ROLES = [("system", "system"), ("user", "user"), ("assistant", "assistant"), ("tool", "tool")]

    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="messages")
    # The message this one follows; None: the chat's first message. Messages with the same parent
    # and role are versions of one turn (an edited question, a regenerated answer).
    # A message deleted on its own (in the admin) leaves what followed it in place, as a new start.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    role = models.CharField(max_length=10, choices=ROLES)
    content = models.TextField(blank=True, default="")
    tool_calls = models.JSONField(null=True, blank=True)
    tool_call_id = models.CharField(max_length=100, blank=True, default="")
    tool_name = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    token_count = models.PositiveIntegerField(default=0)
    finish_reason = models.CharField(max_length=40, blank=True, default="")
    # The model's thinking for this reply (reasoning_content / reasoning): shown collapsed,
    # never as the answer, and sent back to servers that require it (DeepSeek thinking mode).
    reasoning = models.TextField(blank=True, default="")
    # Fields the server put on this reply for it to come back with it (`PROVIDER_FIELDS`):
    # OpenRouter's signed `reasoning_details`, a message-level `extra_content`.
    provider_fields = models.JSONField(null=True, blank=True)
    # What memory providers recalled for the turn this answer ends (agent/chat/sources.py): a list
    # of {"provider", "text", …}; None for an answer stored before sources were kept.
    sources = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["session", "id"])]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # (parent_id, not parent: reading `parent` would fetch the row.)
        if self._state.adding and getattr(self, "parent_id", None) is None and not getattr(self, "starts_chat", False):
            # Appended without a parent (an import, a script): it follows the newest message.
            self.parent = Message.objects.filter(session_id=self.session_id).order_by("-id").first()
        # PostgreSQL text cannot hold NUL; a message carrying one is stored with U+FFFD instead
        # of failing the turn (SQLite would keep it, and nothing shows a NUL anyway).
        self.content = without_nul(self.content)
        self.reasoning = without_nul(self.reasoning)
        # The JSON columns too: PostgreSQL's jsonb refuses \u0000 as its text type refuses NUL.
        for column in ("tool_calls", "provider_fields", "sources"):
            if value := getattr(self, column):
                setattr(self, column, without_nul_in(value))
        if self._state.adding and self.pk is None and not args and not kwargs and NEW_ROW.run(self):
            return  # a new message, written as the ORM would without building its query again
        super().save(*args, **kwargs)

    def to_api(self) -> dict[str, Any]:
        """The OpenAI chat-completions shape of this message."""
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.role == "assistant" and self.tool_calls:
            msg["tool_calls"] = self.tool_calls
            if not self.content:
                msg["content"] = None
        if self.role == "assistant" and self.reasoning:
            msg["reasoning_content"] = self.reasoning
        if self.role == "assistant" and self.provider_fields:
            msg.update(self.provider_fields)
        if self.role == "tool":
            msg["tool_call_id"] = self.tool_call_id
        return msg


class ReviewRun(models.Model):
    STATUSES = [("queued", "queued"), ("running", "running"), ("done", "done"), ("failed", "failed")]

    session = models.ForeignKey(ChatSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviews")
    trigger = models.CharField(max_length=40, default="nudge")
    prompt_kind = models.CharField(max_length=20)  # memory | skill | combined
    model = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=10, choices=STATUSES, default="queued")
    summary = models.TextField(blank=True, default="")
    changes = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    iterations = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The server process running it (knowledge/history/workers.py), so a dead one's runs can be failed;
    # "queue" while it waits on the durable queue.
    worker = models.CharField(max_length=200, blank=True, default="")
    # The last message of the conversation it reviews (a queued job rebuilds it from here); the
    # chat shows what the review learned under that message (the answer the review followed).
    upto_message_id = models.BigIntegerField(null=True, blank=True)
    # What the person asked a review on demand to look at ("docker"); the prompt carries it, also
    # when a queue worker or another process runs the review from this row.
    focus = models.CharField(max_length=500, blank=True, default="")

    ACTIVE = ("queued", "running")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["session", "status"])]

    def __str__(self) -> str:
        return f"review {self.pk} ({self.prompt_kind}, {self.status})"

    def start(self, worker: str) -> bool:
        """queued -> running, unless another live review of the same session is running (then it
        stays queued and the caller waits): one review per session at a time, across processes."""
        with transaction.atomic():
            if self.session_id:
                # The session's row is the lock: locking the running runs alone locks nothing when
                # none runs yet, and on PostgreSQL two starts then both saw none and both ran.
                list(ChatSession.objects.select_for_update().filter(pk=self.session_id).values_list("pk"))
            running = ReviewRun.objects.filter(session_id=self.session_id, status="running")
            if self.session_id and any(is_alive(r.worker) for r in running.exclude(pk=self.pk)):
                return False
            now = timezone.now()
            started = ReviewRun.objects.filter(pk=self.pk, status="queued").update(
                status="running", worker=worker, started_at=now
            )
        if started:
            self.status, self.worker, self.started_at = "running", worker, now
        return bool(started)

    def finish(self, *, summary: str, changes: list[dict[str, str]], error: str, duration_ms: int) -> None:
        """running -> done (or failed: an error and nothing changed)."""
        self.summary, self.changes, self.error = summary, changes, error
        self.status = "failed" if error and not changes else "done"
        self.duration_ms = duration_ms
        self.finished_at = timezone.now()
        self.save()

    def fail(self, reason: str) -> None:
        ReviewRun.objects.filter(pk=self.pk, status__in=self.ACTIVE).update(
            status="failed", error=reason, finished_at=timezone.now()
        )


class KnowledgeChange(models.Model):
    """One change to a memory file or a skill, written by the store that made it."""

    KINDS = [("memory", "memory"), ("skill", "skill")]
    ACTORS = list(ACTOR_LABELS.items())

    kind = models.CharField(max_length=10, choices=KINDS)
    # memory: "memory" | "user"; skill: the skill's name.
    target = models.CharField(max_length=200)
    action = models.CharField(max_length=40)
    actor = models.CharField(max_length=10, choices=ACTORS)
    session = models.ForeignKey(
        "ChatSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="knowledge_changes"
    )
    review = models.ForeignKey(
        "ReviewRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="knowledge_changes"
    )
    message_id = models.BigIntegerField(null=True, blank=True)
    # For skills: the path relative to the skills root of the file that changed.
    path = models.CharField(max_length=500, blank=True, default="")
    before = models.TextField(blank=True, default="")
    after = models.TextField(blank=True, default="")
    # Files that did not exist before the change (so undo deletes rather than empties them).
    existed_before = models.BooleanField(default=True)
    exists_after = models.BooleanField(default=True)
    summary = models.CharField(max_length=300, blank=True, default="")
    # Skill files removed by one delete share a batch, so undoing one brings the folder back.
    batch = models.CharField(max_length=32, blank=True, default="", db_index=True)
    # before/after hold base64 (a binary supporting file) rather than text.
    binary = models.BooleanField(default=False)
    undoes = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="undone_by")
    # The verbatim quotes that supported the write: [{"quote": ..., "message_id": ...}].
    evidence = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["kind", "target"])]

    def __str__(self) -> str:
        return f"{self.kind}:{self.target} {self.action} by {self.actor}"


class PendingWrite(models.Model):
    """A review's write held for the user's approval (memory.write_approval / skills.write_approval)."""

    STATUSES = [("pending", "pending"), ("approved", "approved"), ("rejected", "rejected"), ("failed", "failed")]

    class Hold:
        """Why a held write waits; APPROVAL: not held, it waits because approval mode is on."""

        APPROVAL = ""
        UNSUPPORTED = "unsupported"
        CONFLICT = "conflict"
        UNTESTED = "untested"
        DUPLICATE = "duplicate"
        INSTRUCTION = "instruction"
        REMOVAL = "removal"
        SECRET = "secret"
        UNCHECKED = "unchecked"
        CHOICES = [
            (APPROVAL, "Waits for approval"),
            (UNSUPPORTED, "Not shown by the conversation"),
            (CONFLICT, "Conflict"),
            (UNTESTED, "Not shown to work"),
            (DUPLICATE, "Already known"),
            (INSTRUCTION, "Instruction"),
            (REMOVAL, "Removal"),
            (SECRET, "Secret"),
            (UNCHECKED, "Could not be checked"),
        ]

    kind = models.CharField(max_length=10)  # memory | skill
    tool_name = models.CharField(max_length=40)
    arguments = models.JSONField()
    session = models.ForeignKey("ChatSession", null=True, blank=True, on_delete=models.SET_NULL)
    review = models.ForeignKey("ReviewRun", null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=STATUSES, default="pending")
    result = models.TextField(blank=True, default="")
    # Held because its evidence was missing or not found in the conversation (not for approval mode).
    unsupported = models.BooleanField(default=False)
    reason = models.TextField(blank=True, default="")
    hold_kind = models.CharField(max_length=12, choices=Hold.CHOICES, default=Hold.APPROVAL, blank=True)
    # A conflict hold: the existing entry the write contradicts, {"target": ..., "text": ...}.
    conflict = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"

    def _claim(self) -> bool:
        """Mark the item decided; False if another request (a second tab, a double click) got there first."""
        now = timezone.now()
        claimed = PendingWrite.objects.filter(pk=self.pk, status="pending", decided_at__isnull=True).update(
            decided_at=now
        )
        if claimed != 1:
            self.refresh_from_db()
            return False
        self.decided_at = now
        return True

    def approve(self, arguments: dict[str, Any] | None = None) -> bool:
        """Apply the write (with edited arguments if given) through its store and record the outcome
        (approved or failed). False if it was already decided elsewhere, so nothing was applied."""

        def write(prov: Provenance) -> str:
            if arguments is not None:
                self.arguments = arguments
            return approvals.apply(self, prov)

        return self._decide(write, ["arguments"])

    def settle(self, write: Callable[[Provenance], str]) -> bool:
        """Decide the item by `write(provenance)` instead of its own arguments (a conflict the person
        settled by letting the new entry replace the old one); recorded as approve() records."""
        return self._decide(write, [])

    def _decide(self, write: Callable[[Provenance], str], fields: list[str]) -> bool:
        if not self._claim():
            return False
        prov = Provenance(actor="user", review_id=self.review_id, session_id=self.session_id)
        try:
            self.result = write(prov)
        except Exception as exc:  # the item is claimed: record the failure, never leave it undecidable
            log.exception("applying pending write %s failed", self.pk)
            self.result = json.dumps({"success": False, "error": f"Could not apply it: {type(exc).__name__}: {exc}"})
        self.status = "approved" if approvals.succeeded(self.result) else "failed"
        self.save(update_fields=[*fields, "status", "result", "decided_at"])
        return True

    def reject(self) -> bool:
        if not self._claim():
            return False
        self.status, self.result = "rejected", "Rejected by the user; nothing was written."
        self.save(update_fields=["status", "result", "decided_at"])
        return True
