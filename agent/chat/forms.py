"""The chat pages' forms: first-run model setup, rename, fork (edit and resend), the chat's model.

Bad input comes back as the field's error in plain words: the setup panel and the rename form are
re-rendered with what was typed; fork and model choice answer JSON with `error` (shown by the page).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from agent.chat import branching
from knowledge.models import ChatSession
from knowledge.views.forms import ConfigForm

TITLE_CHARS = 200
MODEL_NAME_CHARS = 200
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class SetupForm(ConfigForm):
    """The first-run panel: the three model settings, checked as the settings page checks them
    (the base URL must be an http(s) address). The key itself is never asked for nor written."""

    def layout(self) -> list[tuple[str, str, str, str]]:
        return [
            ("base_url", "model.base_url", "Base URL", ""),
            ("model", "model.name", "Model", ""),
            ("api_key_env", "model.api_key_env", "API key variable", ""),
        ]

    PLACEHOLDERS = {"base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini", "api_key_env": DEFAULT_KEY_ENV}

    @property
    def placed(self) -> list[tuple[forms.BoundField, str, str]]:
        """Each field with its placeholder and the environment variable in use instead, if any."""
        return [(self[name], placeholder, self.envs[name]) for name, placeholder in self.PLACEHOLDERS.items()]

    def clean_api_key_env(self) -> str:
        return str(self.cleaned_data["api_key_env"]) or DEFAULT_KEY_ENV


class RenameForm(forms.Form):
    title = forms.CharField(required=False, strip=False)

    def clean_title(self) -> str:
        title = " ".join(str(self.cleaned_data["title"]).split())
        if not title:
            raise ValidationError("Give the chat a title; it was not renamed.", code="empty")
        if len(title) > TITLE_CHARS:
            raise ValidationError(
                f"A title is at most {TITLE_CHARS} characters; this one is {len(title):,}.", code="too_long"
            )
        return title

    def save(self, session: ChatSession) -> None:
        # The person's title: the model's automatic one never replaces it (agent/chat/titles.py).
        ChatSession.objects.filter(pk=session.pk).update(title=self.cleaned_data["title"], title_source="person")
        session.title = self.cleaned_data["title"]


_WHICH_MESSAGE = "Which message to edit was not said (message_id is missing or not a number)."


class ForkForm(forms.Form):
    """Edit-and-resend: which user message of the chat, and the new text the page then sends."""

    message_id = forms.IntegerField(error_messages={"required": _WHICH_MESSAGE, "invalid": _WHICH_MESSAGE})
    text = forms.CharField(required=False, strip=False)

    def __init__(self, data: Any = None, *, session: ChatSession) -> None:
        super().__init__(data)
        self.session = session

    def clean_text(self) -> str:
        text = str(self.cleaned_data["text"])
        if not text.strip():
            raise ValidationError("The edited message is empty. Nothing was sent.", code="empty")
        return text

    def clean_message_id(self) -> int:
        message_id = int(self.cleaned_data["message_id"])
        try:
            branching.fork_point(self.session, message_id)
        except branching.ForkError as exc:
            raise ValidationError(str(exc), code="not_forkable") from exc
        return message_id

    def save(self) -> ChatSession:
        return branching.fork_before(self.session, self.cleaned_data["message_id"])


class ModelChoiceForm(forms.Form):
    """The model one chat uses; any name the server takes (its list is only a suggestion)."""

    model = forms.CharField(error_messages={"required": "Give a model name (the server's list is only a suggestion)."})

    def clean_model(self) -> str:
        name = str(self.cleaned_data["model"])
        if len(name) > MODEL_NAME_CHARS or any(ch.isspace() for ch in name):
            raise ValidationError(
                f"A model name is one word of at most {MODEL_NAME_CHARS} characters.", code="not_a_name"
            )
        return name

    def save(self, session: ChatSession) -> str:
        ChatSession.objects.filter(pk=session.pk).update(model=self.cleaned_data["model"])
        return str(self.cleaned_data["model"])
