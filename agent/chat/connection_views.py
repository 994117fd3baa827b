"""The model connection's two buttons, for the first-run panel and the settings page alike
(the form and its partial: knowledge/views/model_key.py, templates/knowledge/_model_connection.html).

Check asks the server with what is typed — its model list, then what the named model can do —
and saves nothing. Save writes config.yaml and the key file, then shows the saved state. An
htmx request gets the form back in place; a plain post (no JavaScript) gets the settings page
with the result, or, after a save, the page it came from.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from agent.chat import connection
from foundation import config as hermes_config
from knowledge.views import settings as settings_views
from knowledge.views.model_key import ConnectionForm, connection_context, saved_state

PARTIAL = "knowledge/_model_connection.html"
PLACES = ("setup", "settings")

# What the first-run panel suggests for the usual servers (any OpenAI-compatible one works).
PRESETS = [
    {"label": "OpenAI", "base_url": "https://api.openai.com/v1", "model": "gpt-4o-mini"},
    {"label": "OpenRouter", "base_url": "https://openrouter.ai/api/v1", "model": "openai/gpt-4o-mini"},
    {"label": "Ollama (local)", "base_url": "http://127.0.0.1:11434/v1", "model": "qwen2.5:7b"},
    {"label": "llama.cpp / vLLM / LM Studio", "base_url": "http://127.0.0.1:8080/v1", "model": "local"},
]


def setup_context() -> dict[str, Any]:
    """The first-run panel's context (the chat page shows it while no model is configured)."""
    return {"presets": PRESETS, **connection_context(place="setup")}


class PlaceForm(forms.Form):
    """Which page the connection form was sent from: the first-run panel or the settings page."""

    place = forms.ChoiceField(choices=[(p, p) for p in PLACES], required=False)


def _place(request: HttpRequest) -> str:
    form = PlaceForm(request.POST)
    return (form.cleaned_data["place"] or "settings") if form.is_valid() else "settings"


def _answer(request: HttpRequest, ctx: dict[str, Any], status: int = 200) -> HttpResponse:
    if request.htmx:
        # htmx swaps only 2xx answers: a refused form comes back in place with its errors.
        return render(request, PARTIAL, ctx)
    return settings_views.page(request, connection=ctx, status=status)


@require_POST
def check(request: HttpRequest) -> HttpResponse:
    form = ConnectionForm(request.POST, config=hermes_config.get(), checking=True)
    ctx = connection_context(form, place=_place(request))
    if not form.is_valid():
        return _answer(request, ctx, status=400)
    config, key = form.candidate()
    found = connection.check(config, key)
    ctx["connection_check"] = {
        "ok": found.ok,
        "error": found.error,
        "models": found.models[:8],
        "count": len(found.models),
        "listed": not config.model_name or config.model_name in found.models,
        "model": config.model_name,
        "steps": found.steps,
    }
    return _answer(request, ctx)


@require_POST
def save(request: HttpRequest) -> HttpResponse:
    place = _place(request)
    form = ConnectionForm(request.POST, config=hermes_config.get())
    saved = form.save() if form.is_valid() else None
    if saved is None:
        return _answer(request, connection_context(form, place=place), status=400)
    if not request.htmx:
        return redirect("home" if place == "setup" else "settings")
    return render(request, PARTIAL, connection_context(place=place, saved=saved_state(saved)))
