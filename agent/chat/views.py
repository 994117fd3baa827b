"""Chat pages: the conversation, the sessions sidebar, slash-command skills, first-run setup."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from agent.chat import connection_views, list_views, presenter, session_end
from agent.chat import service as chat_service
from agent.chat.forms import DeleteChatForm, NewChatForm, RenameForm
from agent.learning import review
from foundation import config as hermes_config
from knowledge import capabilities, private_chats, versions
from knowledge.history import learned, turns
from knowledge.models import ChatSession
from knowledge.skills.store import SkillStore

# An attached text file is stored inside the message, so it must leave room for what is typed.
ATTACH_BYTES = 50_000


def _sessions(request: HttpRequest, current: ChatSession | None) -> dict[str, Any]:
    return list_views.list_context(request, current)


def _chat_page(
    request: HttpRequest,
    session: ChatSession,
    template: str = "chat/page.html",
    rename_form: RenameForm | None = None,
    status: int = 200,
    version_error: str = "",
) -> HttpResponse:
    config = hermes_config.get()
    max_chars = config.agent.max_message_chars
    attach_bytes = min(ATTACH_BYTES, max_chars // 2)
    # A turn running on any server process (the page may be served by another worker).
    busy = turns.holds(session)
    context = {
        "nav": "chat",
        "session": session,
        "items": presenter.conversation(session, writing=busy),
        "learned": learned.for_session(session.pk),
        "counters": presenter.counters(session),
        "review_running": review.is_running(session.pk),
        "busy": busy,
        "max_chars": max_chars,
        "attach_bytes": attach_bytes,
        "attach_kb": attach_bytes // 1000,
        "chat_model": session.model or config.model_name,
        "needs_setup": not config.model_name,
        "model_limits": capabilities.limits(config.base_url, config.model_name) if config.model_name else "",
        "rename_form": rename_form,
        "version_error": version_error,
        **_sessions(request, session),
    }
    if context["needs_setup"]:
        context.update(connection_views.setup_context())
    return render(request, template, context, status=status)


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    # A new chat, as in other chat apps (the sidebar lists the earlier ones); an unused one is
    # reused so that visiting "/" again does not pile up empty chats. Unused: no message at all,
    # whatever its counter says (a chat made by an import or a script may hold rows it never counted).
    unused = ChatSession.objects.filter(
        source="web", message_count=0, messages__isnull=True, ended_at=None, archived_at=None, private=False
    )
    session = unused.first() or chat_service.create_session()
    return _chat_page(request, session, "home.html")


@require_GET
def chat(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    wanted = request.GET.get("m", "")
    if wanted.isdigit():
        # A search hit (?m=<message>#m<message>) in another version than the one shown opens the
        # chat on that version, as choosing it with ‹ › would.
        try:
            if versions.show(session, int(wanted)):
                return redirect(reverse("chat", args=[session.pk]) + f"#m{wanted}")
        except versions.VersionError as exc:
            return _chat_page(request, session, version_error=str(exc))
    return _chat_page(request, session)


@require_POST
def new_chat(request: HttpRequest) -> HttpResponse:
    form = NewChatForm(request.POST)
    previous = form.previous() if form.is_valid() else None
    if previous is not None and previous.message_count == 0 and not previous.messages.exists():
        private_chats.set_private(previous.pk, False)  # a fresh private one is reused as an ordinary chat
        return redirect("chat", session_id=previous.pk)  # already a fresh chat: reuse it
    if previous is not None and previous.ended_at is None:
        session_end.end_in_background(previous.pk, "new session")
    return redirect("chat", session_id=chat_service.create_session().pk)


@require_GET
def sessions(request: HttpRequest) -> HttpResponse:
    current = ChatSession.objects.filter(pk=request.GET.get("current", "")).first()
    return render(request, "chat/_session_list.html", _sessions(request, current))


def rename(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    if request.method == "POST":
        form = RenameForm(request.POST)
        in_list = form.in_list  # the chat list's row form, not the header's
        if not form.is_valid():
            if request.htmx:  # the form again, with what was typed and why it was refused
                template = "chat/_list_rename.html" if in_list else "chat/_rename_form.html"
                return render(request, template, {"session": session, "s": session, "form": form})
            return _chat_page(request, session, rename_form=form, status=400)
        form.save(session)
        if in_list and request.htmx:
            response = HttpResponse(status=204)
            response["HX-Trigger"] = "sessions-changed, chat-renamed"  # the list, and the header if it is this chat
            return response
        if not request.htmx:  # a plain form post (before htmx wired the form, or without JavaScript)
            return redirect("chat", session_id=session.pk)
        response = render(request, "chat/_title.html", {"session": session})
        response["HX-Trigger"] = "sessions-changed"  # the sidebar shows the new title too
        return response
    if request.method == "GET":
        template = "chat/_title.html" if request.GET.get("show") == "title" else "chat/_rename_form.html"
        return render(request, template, {"session": session})
    raise Http404


@require_POST
def delete(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    if chat_service.is_busy(session.pk):
        chat_service.stop_turn(session.pk)
    deleted = session.pk
    chat_service.forget(deleted)
    session.delete()
    form = DeleteChatForm(request.POST)
    if request.htmx and form.is_valid() and not form.leaves_page(deleted):
        response = HttpResponse(status=204)  # another chat, deleted from the list: the page stays
        response["HX-Trigger"] = "sessions-changed"
        return response
    if request.htmx:
        return HttpResponseClientRedirect("/")
    return redirect("home")


@require_GET
def slash_skills(request: HttpRequest) -> JsonResponse:
    skills = [
        {"name": s.name, "description": s.description, "category": s.category}
        for s in sorted(SkillStore().available(), key=lambda s: s.name)
    ]
    return JsonResponse({"skills": skills})
