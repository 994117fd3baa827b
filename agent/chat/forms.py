"""The chat pages' forms: rename, new chat, delete, the version shown, the chat's model (the
first-run panel's model connection is the settings page's form: knowledge/views/model_key.py).

Bad input comes back as the field's error in plain words: the rename form is re-rendered with
what was typed; version and model choice answer JSON with `error` (shown by the page).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from knowledge.models import ChatSession

TITLE_CHARS = 200
MODEL_NAME_CHARS = 200


class RenameForm(forms.Form):
    title = forms.CharField(required=False, strip=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # `in=list`: the chat list's row form posted it, not the header's ("in" is a Python keyword).
        self.fields["in"] = forms.CharField(required=False, widget=forms.HiddenInput)

    @property
    def in_list(self) -> bool:
        return self["in"].value() == "list"

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
        ChatSession.rename(session.pk, self.cleaned_data["title"], "person")
        session.title = self.cleaned_data["title"]


_WHICH_MESSAGE = "Which message was not said (message_id is missing or not a number)."


class VersionForm(forms.Form):
    """‹ or › on a message: which message is shown now, and the version before (-1) or after (1) it."""

    message_id = forms.IntegerField(error_messages={"required": _WHICH_MESSAGE, "invalid": _WHICH_MESSAGE})
    step = forms.TypedChoiceField(
        choices=[("-1", "previous"), ("1", "next")],
        coerce=int,
        error_messages={"required": "Say which way to go (step -1 or 1).", "invalid_choice": "step is -1 or 1."},
    )


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
        ChatSession.set_model(session.pk, self.cleaned_data["model"])
        return str(self.cleaned_data["model"])


class NewChatForm(forms.Form):
    """New chat, from the chat shown (`from`): an empty one is reused, another one is ended."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["from"] = forms.CharField(required=False, widget=forms.HiddenInput)  # a Python keyword

    def previous(self) -> ChatSession | None:
        return ChatSession.objects.filter(pk=self.cleaned_data.get("from", "")).first()


class DeleteChatForm(forms.Form):
    """Delete a chat; `current` is the chat the page shows, which stays unless it is the one deleted."""

    current = forms.CharField(required=False, widget=forms.HiddenInput)

    def leaves_page(self, deleted: str) -> bool:
        """Whether the page showed the deleted chat (no `current` at all: a page of that chat's own;
        an empty one: a page showing no chat, which stays)."""
        return "current" not in self.data or self.cleaned_data.get("current") == deleted
