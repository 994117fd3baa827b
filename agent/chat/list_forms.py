"""Forms of the chat list and of one chat's own settings: pin, archive, tags, instructions, temperature.

Each refusal says what is allowed, in plain words; nothing is saved from a form with an error.
Saving goes through `QuerySet.update`, so organising a chat does not change when it was last
used (its place among the dates).
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from knowledge.chat_tags import TAG_CHARS, ChatTag
from knowledge.models import ChatSession

INSTRUCTIONS_CHARS = 8_000
TEMPERATURE_MIN, TEMPERATURE_MAX = 0.0, 2.0
TAGS_PER_CHAT = 12


class FlagForm(forms.Form):
    """Pin or archive: `on` is "1" to set the flag, anything else (or nothing) to clear it."""

    on = forms.CharField(required=False)

    @property
    def value(self) -> bool:
        return self.cleaned_data.get("on") == "1"

    def pin(self, session: ChatSession) -> None:
        ChatSession.set_pinned(session.pk, self.value)
        session.pinned = self.value

    def archive(self, session: ChatSession) -> None:
        when = timezone.now() if self.value else None
        ChatSession.set_archived(session.pk, when)
        session.archived_at = when


class TagForm(forms.Form):
    """Add a tag to a chat (`add`), or take one off (`remove`)."""

    add = forms.CharField(required=False)
    remove = forms.CharField(required=False)

    def __init__(self, data: object = None, *, session: ChatSession) -> None:
        super().__init__(data)
        self.session = session

    def clean_add(self) -> str:
        name = " ".join(str(self.cleaned_data["add"]).split()).lstrip("#").strip()
        if len(name) > TAG_CHARS:
            raise ValidationError(f"A tag is at most {TAG_CHARS} characters; this one is {len(name)}.", code="too_long")
        if name and self.session.tags.count() >= TAGS_PER_CHAT and not self.session.tags.filter(name=name).exists():
            raise ValidationError(f"A chat has at most {TAGS_PER_CHAT} tags; remove one first.", code="too_many")
        return name

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if not data.get("add") and not data.get("remove") and not self.errors:
            raise ValidationError("Type a tag to add.", code="empty")
        return data

    def save(self) -> None:
        if self.cleaned_data["add"]:
            tag, _ = ChatTag.objects.get_or_create(name=self.cleaned_data["add"])
            self.session.tags.add(tag)
        if self.cleaned_data["remove"]:
            self.session.tags.remove(*ChatTag.objects.filter(name=self.cleaned_data["remove"]))
            # A tag on no chat any more leaves the filter's choices.
            ChatTag.objects.filter(sessions__isnull=True).delete()


class ChatSettingsForm(forms.Form):
    """One chat's instructions (added to its system prompt) and temperature; blank: the defaults."""

    instructions = forms.CharField(required=False, strip=True, widget=forms.Textarea)
    temperature = forms.FloatField(
        required=False,
        error_messages={"invalid": "The temperature is a number from 0 to 2, like 0.7 (or blank for the default)."},
    )

    def clean_instructions(self) -> str:
        text = str(self.cleaned_data["instructions"]).replace("\r\n", "\n")
        if len(text) > INSTRUCTIONS_CHARS:
            raise ValidationError(
                f"Instructions are at most {INSTRUCTIONS_CHARS:,} characters; these are {len(text):,}.",
                code="too_long",
            )
        return text

    def clean_temperature(self) -> float | None:
        value = self.cleaned_data["temperature"]
        if value is not None and not TEMPERATURE_MIN <= value <= TEMPERATURE_MAX:
            raise ValidationError(
                f"The temperature is a number from 0 to 2 (got {value:g}); blank uses the default.", code="range"
            )
        return value

    def save(self, session: ChatSession) -> None:
        instructions, temperature = self.cleaned_data["instructions"], self.cleaned_data["temperature"]
        ChatSession.set_settings(session.pk, instructions, temperature)
        session.instructions, session.temperature = instructions, temperature
