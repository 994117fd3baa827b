"""Django admin for sessions, messages and review runs (SPEC §8)."""

from __future__ import annotations

from django.contrib import admin

from agent.models import ChatSession, Message, ReviewRun


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
    raw_id_fields = ("parent",)
    readonly_fields = ("id", "started_at", "updated_at", "ended_at", "last_compressed_at")
    ordering = ("-updated_at",)


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("id", "session", "role", "short_content", "tool_name", "token_count", "created_at")
    list_filter = ("role", "session__source", "finish_reason")
    search_fields = ("content", "tool_name", "session__title", "session__id")
    date_hierarchy = "created_at"
    raw_id_fields = ("session",)
    readonly_fields = ("created_at",)
    list_select_related = ("session",)

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
