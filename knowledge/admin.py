"""Django admin for the change log, pending writes and skill usage (SPEC §8).

The change log is history: it is read-only here (undo goes through the stores, which write
the files and record the undo), so the admin cannot make the log disagree with the disk.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from knowledge.models import KnowledgeChange, PendingWrite, SkillUsage


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
    list_display = ("id", "kind", "tool_name", "status", "session", "review", "created_at", "decided_at")
    list_filter = ("status", "kind", "tool_name")
    search_fields = ("tool_name", "result")
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
