"""Stored sessions, messages and review runs (SPEC §4, §5)."""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models


def _new_id() -> str:
    return uuid.uuid4().hex


class ChatSession(models.Model):
    SOURCES = [("web", "web"), ("cli", "cli")]

    id = models.CharField(primary_key=True, max_length=32, default=_new_id, editable=False)
    name = models.CharField(max_length=200, unique=True, null=True, blank=True)
    title = models.CharField(max_length=200, blank=True, default="")
    source = models.CharField(max_length=8, choices=SOURCES, default="web")
    model = models.CharField(max_length=200, blank=True, default="")
    system_prompt = models.TextField(blank=True, default="")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children")
    started_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=40, blank=True, default="")
    # Learning-loop counters (SPEC §5): persisted so a restart does not lose them.
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

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["-updated_at"])]

    def __str__(self) -> str:
        return self.title or self.name or self.id

    @property
    def display_title(self) -> str:
        return self.title or self.name or "New chat"


class Message(models.Model):
    ROLES = [("system", "system"), ("user", "user"), ("assistant", "assistant"), ("tool", "tool")]

    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=10, choices=ROLES)
    content = models.TextField(blank=True, default="")
    tool_calls = models.JSONField(null=True, blank=True)
    tool_call_id = models.CharField(max_length=100, blank=True, default="")
    tool_name = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    token_count = models.PositiveIntegerField(default=0)
    finish_reason = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["session", "id"])]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    def to_api(self) -> dict[str, Any]:
        """The OpenAI chat-completions shape of this message."""
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.role == "assistant" and self.tool_calls:
            msg["tool_calls"] = self.tool_calls
            if not self.content:
                msg["content"] = None
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
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"review {self.pk} ({self.prompt_kind}, {self.status})"
