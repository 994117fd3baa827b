"""The knowledge change log, pending writes and skill usage (SPEC §7)."""

from __future__ import annotations

from django.db import models


class KnowledgeChange(models.Model):
    """One change to a memory file or a skill, written by the store that made it."""

    KINDS = [("memory", "memory"), ("skill", "skill")]
    ACTORS = [
        ("agent", "main agent"),
        ("review", "review"),
        ("flush", "flush"),
        ("user", "user"),
        ("import", "import"),
        ("external", "external edit"),
        ("undo", "undo"),
    ]

    kind = models.CharField(max_length=10, choices=KINDS)
    # memory: "memory" | "user"; skill: the skill's name.
    target = models.CharField(max_length=200)
    action = models.CharField(max_length=40)
    actor = models.CharField(max_length=10, choices=ACTORS)
    session = models.ForeignKey(
        "agent.ChatSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="knowledge_changes"
    )
    review = models.ForeignKey(
        "agent.ReviewRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="knowledge_changes"
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
    undoes = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="undone_by")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["kind", "target"])]

    def __str__(self) -> str:
        return f"{self.kind}:{self.target} {self.action} by {self.actor}"


class PendingWrite(models.Model):
    """A review's write held for the user's approval (memory.write_approval / skills.write_approval)."""

    STATUSES = [("pending", "pending"), ("approved", "approved"), ("rejected", "rejected"), ("failed", "failed")]

    kind = models.CharField(max_length=10)  # memory | skill
    tool_name = models.CharField(max_length=40)
    arguments = models.JSONField()
    session = models.ForeignKey("agent.ChatSession", null=True, blank=True, on_delete=models.SET_NULL)
    review = models.ForeignKey("agent.ReviewRun", null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=STATUSES, default="pending")
    result = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool_name} ({self.status})"


class SkillUsage(models.Model):
    name = models.CharField(max_length=64, unique=True)
    views = models.PositiveIntegerField(default=0)
    uses = models.PositiveIntegerField(default=0)
    last_used = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=10, blank=True, default="")

    def __str__(self) -> str:
        return self.name
