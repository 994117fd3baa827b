"""Message actions on one chat: choose a version of a turn, the chat's model, export.

The browser calls these with fetch and shows any `error` it gets back in plain words.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from agent.chat import connection, presenter, titles
from agent.chat import export as chat_export
from agent.chat import service as chat_service
from agent.chat.forms import ModelChoiceForm, RenameForm, VersionForm
from agent.llm import LLMError
from foundation import config as hermes_config
from knowledge import versions
from knowledge.history import learned
from knowledge.models import ChatSession
from knowledge.views.forms import errors_text


def _refuse(message: str, status: int = 400, fields: dict[str, list[str]] | None = None) -> JsonResponse:
    return JsonResponse({"error": message, **({"fields": fields} if fields else {})}, status=status)


def _invalid(form: VersionForm | ModelChoiceForm) -> JsonResponse:
    """Every error of the form in one line, and per field (the page shows `error`)."""
    return _refuse(errors_text(form), fields={name: list(errors) for name, errors in form.errors.items()})


@require_POST
def choose_version(request: HttpRequest, session_id: str) -> HttpResponse:
    """‹ or › on a message with versions: show the version before or after it (`step` -1 or 1)
    and the conversation that follows it. The page gets the messages again (a form post
    without JavaScript: the chat, at that message)."""
    session = get_object_or_404(ChatSession, pk=session_id)
    form = VersionForm(request.POST)
    if not form.is_valid():
        return _invalid(form)
    if chat_service.is_busy(session.pk):
        return _refuse(chat_service.BUSY_MESSAGE, status=409)
    try:
        shown = versions.step(session, form.cleaned_data["message_id"], form.cleaned_data["step"])
    except versions.VersionError as exc:
        return _refuse(str(exc))
    if not request.htmx:
        return redirect(reverse("chat", args=[session.pk]) + f"#m{shown}")
    response = _messages(request, session)
    response["X-Shown-Message"] = str(shown)
    return response


def _messages(request: HttpRequest, session: ChatSession) -> HttpResponse:
    context = {"session": session, "items": presenter.conversation(session), "learned": learned.for_session(session.pk)}
    return render(request, "chat/_messages.html", context)


@require_GET
def messages_fragment(request: HttpRequest, session_id: str) -> HttpResponse:
    """The conversation as the chat page shows it, for the page to swap in after a version changed."""
    return _messages(request, get_object_or_404(ChatSession, pk=session_id))


@require_POST
def set_model(request: HttpRequest, session_id: str) -> JsonResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    form = ModelChoiceForm(request.POST)
    if not form.is_valid():
        return _invalid(form)
    return JsonResponse({"model": form.save(session)})


@require_GET
def models(request: HttpRequest) -> JsonResponse:
    """The names the model server lists (`/v1/models`); an error when it lists none or fails."""
    config = hermes_config.get()
    try:
        names = connection.server_models(config)
    except connection.ModelsUnavailable as exc:
        return _refuse(f"The model server did not list its models ({exc}); type a name instead.", 502)
    return JsonResponse({"models": names})


def _download(body: str, session: ChatSession, extension: str, content_type: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    name = slugify(session.display_title)[:60] or "chat"
    response["Content-Disposition"] = f'attachment; filename="{name}.{extension}"'
    return response


@require_GET
def export_markdown(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    return _download(chat_export.as_markdown(session), session, "md", "text/markdown")


@require_GET
def export_json(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    return _download(chat_export.as_json(session), session, "json", "application/json")


@require_POST
def suggest_title(request: HttpRequest, session_id: str) -> HttpResponse:
    """The rename form again, filled with the model's suggestion (saved only when the person saves)."""
    session = get_object_or_404(ChatSession, pk=session_id)
    context: dict[str, object] = {"session": session}
    try:
        context["form"] = RenameForm(initial={"title": titles.suggest_title(session)})
    except titles.NothingToTitle as exc:
        context["error"] = str(exc)
    except LLMError as exc:
        context["error"] = f"No suggestion: {exc.message}"
    return render(request, "chat/_rename_form.html", context)
