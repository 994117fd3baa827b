"""Message actions on one chat: fork to edit or regenerate, the chat's model, export.

The browser calls these with fetch and shows any `error` it gets back in plain words.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_POST

from agent.chat import branching, connection, titles
from agent.chat import export as chat_export
from agent.chat import service as chat_service
from agent.chat.forms import ForkForm, ModelChoiceForm, RenameForm
from agent.llm import LLMError
from hermes_site import config as hermes_config
from knowledge.models import ChatSession
from knowledge.views.forms import errors_text


def _refuse(message: str, status: int = 400, fields: dict[str, list[str]] | None = None) -> JsonResponse:
    return JsonResponse({"error": message, **({"fields": fields} if fields else {})}, status=status)


def _invalid(form: ForkForm | ModelChoiceForm) -> JsonResponse:
    """Every error of the form in one line, and per field (the page shows `error`)."""
    return _refuse(errors_text(form), fields={name: list(errors) for name, errors in form.errors.items()})


def _forked(fork: ChatSession, text: str) -> JsonResponse:
    return JsonResponse({"url": reverse("chat", args=[fork.pk]), "session": fork.pk, "text": text})


@require_POST
def fork(request: HttpRequest, session_id: str) -> JsonResponse:
    """Edit-and-resend: a new branch before the edited message; the page sends `text` there."""
    session = get_object_or_404(ChatSession, pk=session_id)
    form = ForkForm(request.POST, session=session)
    if not form.is_valid():
        return _invalid(form)
    try:
        return _forked(form.save(), form.cleaned_data["text"])
    except branching.ForkError as exc:  # the message went between the check and the fork
        return _refuse(str(exc))


@require_POST
def regenerate(request: HttpRequest, session_id: str) -> JsonResponse:
    """A new branch before the last question, which the page asks again; the old answer stays."""
    session = get_object_or_404(ChatSession, pk=session_id)
    if chat_service.is_busy(session.pk):
        return _refuse(chat_service.BUSY_MESSAGE, status=409)
    try:
        question = branching.last_user_message(session)
        return _forked(branching.fork_before(session, question.pk), question.content)
    except branching.ForkError as exc:
        return _refuse(str(exc))


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
