"""How skills are used: their view and use counts, each use's outcome, and the person's verdict
on an answer (which a skill's outcome reads). The logic is knowledge/skills/outcomes.py; the
tables are registered from knowledge/models.py."""

from __future__ import annotations

from django.db import models


class SkillUsage(models.Model):
    name = models.CharField(max_length=64, unique=True)
    views = models.PositiveIntegerField(default=0)
    uses = models.PositiveIntegerField(default=0)
    last_used = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=10, blank=True, default="")
    # The curator never proposes a pinned skill; an archived skill is out of the prompt and the
    # slash menu, its files kept on disk until the person restores it.
    pinned = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class SkillOutcome(models.Model):
    """One use of a skill in a turn (slash command or skill_view) and how it went (docs/BEHAVIOUR.md, Skills)."""

    OUTCOMES = [
        ("ok", "ok"),
        ("tool_error", "tool error"),
        ("interrupted", "interrupted"),
        ("bad", "👎"),
        ("good", "👍"),
    ]
    BAD = ("tool_error", "interrupted", "bad")

    name = models.CharField(max_length=64, db_index=True)
    session = models.ForeignKey("ChatSession", null=True, blank=True, on_delete=models.SET_NULL)
    via = models.CharField(max_length=10)  # slash | view
    user_message_id = models.BigIntegerField(null=True, blank=True)
    answer_message_id = models.BigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=12, choices=OUTCOMES, default="ok")
    detail = models.TextField(blank=True, default="")  # what failed, or the person's words
    # The skill review that was handed this outcome (so it is handed over once).
    review = models.ForeignKey("ReviewRun", null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name}: {self.outcome}"

    @property
    def is_bad(self) -> bool:
        return self.outcome in self.BAD


class AnswerFeedback(models.Model):
    """The person's 👍/👎 on one answer."""

    VERDICTS = [("good", "👍"), ("bad", "👎")]

    message = models.OneToOneField("Message", on_delete=models.CASCADE, related_name="feedback")
    verdict = models.CharField(max_length=4, choices=VERDICTS)
    note = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.verdict} on {self.message_id}"
