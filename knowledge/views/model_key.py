"""The settings page's model key: save or remove the API key kept in the home.

The key is never shown back: the page says where the key in use comes from and its last four
characters. A key in the environment wins, and the page says so (saving one here is then only
used once the variable is unset).
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from hermes_site import config as hermes_config
from knowledge import api_key

KEY_CHARS = 500


class ApiKeyForm(forms.Form):
    key = forms.CharField(required=False, strip=True)
    remove = forms.BooleanField(required=False)

    def clean_key(self) -> str:
        key = str(self.cleaned_data["key"])
        if len(key) > KEY_CHARS:
            raise ValidationError(f"An API key is at most {KEY_CHARS} characters; this is {len(key):,}.", code="long")
        if any(ch.isspace() or not ch.isprintable() for ch in key):
            raise ValidationError("An API key is one word without spaces; nothing was saved.", code="spaces")
        return key

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if not self.errors and not data.get("key") and not data.get("remove"):
            raise ValidationError("Paste the API key to save it; nothing was saved.", code="empty")
        return data

    def save(self, config: hermes_config.Config) -> str:
        """Save or remove the key; what happened, in words."""
        if self.cleaned_data["remove"]:
            return "The saved key was removed." if api_key.remove(config) else "No key was saved."
        api_key.save(config, self.cleaned_data["key"])
        return f"Key saved (ends {api_key.masked(self.cleaned_data['key'])})."


def key_context(form: ApiKeyForm | None = None, message: str = "") -> dict[str, object]:
    config = hermes_config.get()
    return {"key_form": form or ApiKeyForm(), "key": api_key.status(config), "key_message": message}


@require_POST
def save_key(request: HttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST)
    if not form.is_valid():
        return render(request, "knowledge/_model_key.html", key_context(form), status=200 if request.htmx else 400)
    message = form.save(hermes_config.get())
    if not request.htmx:
        return redirect("settings")
    return render(request, "knowledge/_model_key.html", key_context(message=message))
