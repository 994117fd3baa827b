"""Django admin for every record: sessions, messages, review runs, the change log, pending writes
and skill usage.

The change log is history: it is read-only here (undo goes through the stores, which write
the files and record the undo), so the admin cannot make the log disagree with the disk.
"""

from __future__ import annotations

import re

from django.contrib import admin
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.http import HttpRequest

from knowledge.attachments import MessageAttachment
from knowledge.chat_tags import ChatTag
from knowledge.history.presence import WorkerProcess
from knowledge.models import (
    AnswerFeedback,
    ChatSession,
    KnowledgeChange,
    Message,
    ModelCapabilities,
    PendingWrite,
    ReviewRun,
    SkillOutcome,
    SkillUsage,
)
from knowledge.search import matching_ids_sql
from knowledge.share_links import ShareLink
from knowledge.vectors import EntryVector, MessageVector, RecallProgress

SESSION_ID = re.compile(r"[0-9a-f]{32}")


class MessageInline(admin.TabularInline):
    model = Message
    fields = ("role", "content", "tool_name", "created_at")
    readonly_fields = ("created_at",)
    extra = 0
    show_change_link = True
    # Long sessions would make the change page huge; the Message admin lists them all.
    max_num = 0
    can_delete = False


@admin.register(ChatSession)
class ChatSessionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "source", "model", "message_count", "user_turn_count", "started_at", "updated_at")
    list_filter = ("source", "end_reason", "model")
    search_fields = ("id", "name", "title")
    date_hierarchy = "started_at"
    raw_id_fields = ("leaf",)
    readonly_fields = ("id", "started_at", "updated_at", "ended_at", "last_compressed_at")
    ordering = ("-updated_at",)


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("id", "session", "role", "short_content", "tool_name", "token_count", "created_at")
    # A date filter, not date_hierarchy: the hierarchy's year links ran a date function over every
    # message on each page load (seconds at 1M messages, bench/search.py).
    list_filter = ("role", "session__source", "finish_reason", "created_at")
    # The search box searches the full-text index (content, tool name, tool arguments; words as
    # on the search page) or takes a session id: a LIKE scan with a count over every message took
    # seconds at 1M messages (bench/search.py).
    search_fields = ("content",)
    search_help_text = "Words in the message (full-text index), or a session id."
    show_full_result_count = False  # no count(*) of every message beside each search
    raw_id_fields = ("session", "parent")
    readonly_fields = ("created_at",)
    list_select_related = ("session",)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Message], search_term: str
    ) -> tuple[QuerySet[Message], bool]:
        if not search_term.strip():
            return queryset, False
        term = search_term.strip()
        if SESSION_ID.fullmatch(term):  # a session id (as the session's page shows it)
            return queryset.filter(session_id=term), False
        found = matching_ids_sql(term)
        if found is None:  # only punctuation or operators: nothing for the index to match
            return queryset.none(), False
        sql, params = found
        return queryset.filter(pk__in=RawSQL(sql, params)), False

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:100]


@admin.register(ReviewRun)
class ReviewRunAdmin(admin.ModelAdmin):
    list_display = ("id", "session", "trigger", "prompt_kind", "status", "summary", "duration_ms", "created_at")
    list_filter = ("status", "trigger", "prompt_kind")
    search_fields = ("summary", "error", "model", "session__title")
    date_hierarchy = "created_at"
    raw_id_fields = ("session",)
    readonly_fields = ("created_at", "finished_at")
    list_select_related = ("session",)


@admin.register(KnowledgeChange)
class KnowledgeChangeAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "target", "action", "actor", "summary", "session", "review", "created_at")
    list_filter = ("kind", "actor", "action")
    search_fields = ("target", "summary", "path", "before", "after")
    date_hierarchy = "created_at"
    raw_id_fields = ("session", "review", "undoes")
    readonly_fields = ("created_at",)
    list_select_related = ("session", "review")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: KnowledgeChange | None = None) -> bool:
        return False


@admin.register(PendingWrite)
class PendingWriteAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "tool_name", "status", "unsupported", "session", "review", "created_at", "decided_at")
    list_filter = ("status", "unsupported", "kind", "tool_name")
    search_fields = ("tool_name", "result", "reason")
    date_hierarchy = "created_at"
    raw_id_fields = ("session", "review")
    readonly_fields = ("created_at", "decided_at")


@admin.register(SkillUsage)
class SkillUsageAdmin(admin.ModelAdmin):
    list_display = ("name", "uses", "views", "last_used", "created_by")
    list_filter = ("created_by",)
    search_fields = ("name",)
    ordering = ("-uses", "-views")
    readonly_fields = ("last_used",)


@admin.register(ModelCapabilities)
class ModelCapabilitiesAdmin(admin.ModelAdmin):
    """What each model server was found to support (written by the capability probe and the client)."""

    list_display = ("model", "base_url", "updated_at")
    search_fields = ("model", "base_url")
    readonly_fields = ("updated_at",)


@admin.register(SkillOutcome)
class SkillOutcomeAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "via", "outcome", "session", "review", "created_at")
    list_filter = ("outcome", "via")
    search_fields = ("name", "detail")
    raw_id_fields = ("session", "review")
    readonly_fields = ("created_at",)


@admin.register(AnswerFeedback)
class AnswerFeedbackAdmin(admin.ModelAdmin):
    list_display = ("id", "message", "verdict", "created_at")
    list_filter = ("verdict",)
    search_fields = ("note",)
    raw_id_fields = ("message",)


@admin.register(ChatTag)
class ChatTagAdmin(admin.ModelAdmin):
    """The tags a person gave their chats (the chat list filters by them)."""

    list_display = ("name",)
    search_fields = ("name",)


@admin.register(WorkerProcess)
class WorkerProcessAdmin(admin.ModelAdmin):
    """The processes serving this database, as each last said it was alive (the reclaim rounds)."""

    list_display = ("worker", "kind", "home", "started_at", "seen_at")
    list_filter = ("kind",)
    readonly_fields = ("worker", "kind", "home", "started_at", "seen_at")


@admin.register(MessageAttachment)
class MessageAttachmentAdmin(admin.ModelAdmin):
    """Images attached to messages (the files are in the home's attachments folder, by checksum)."""

    list_display = ("name", "ext", "size", "session", "message", "created_at")
    list_filter = ("ext",)
    search_fields = ("name", "sha256")
    raw_id_fields = ("message", "session")
    readonly_fields = ("sha256", "ext", "size", "created_at")


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):
    """Read-only links to chats; the token is the link, so it is shown only in part."""

    list_display = ("id", "session", "token_start", "created_at", "expires_at", "revoked_at")
    raw_id_fields = ("session",)
    exclude = ("token",)
    readonly_fields = ("token_start", "created_at")

    @admin.display(description="token")
    def token_start(self, obj: ShareLink) -> str:
        return f"{obj.token[:6]}…"


@admin.register(MessageVector)
class MessageVectorAdmin(admin.ModelAdmin):
    """Each message's embedding by model, for search by meaning (rebuilt by the background embedding)."""

    list_display = ("message", "model")
    list_filter = ("model",)
    raw_id_fields = ("message",)
    exclude = ("vector",)


@admin.register(EntryVector)
class EntryVectorAdmin(admin.ModelAdmin):
    """Memory entries' embeddings by model and entry digest."""

    list_display = ("id", "model", "digest")
    list_filter = ("model",)
    exclude = ("vector",)


@admin.register(RecallProgress)
class RecallProgressAdmin(admin.ModelAdmin):
    """How far the background embedding came, per model, and which process holds its lease."""

    list_display = ("model", "high_water", "embedded", "worker", "lease_until", "error", "updated_at")
