"""The chat list's actions (pin, archive, tags, rename and delete from the list), one chat's own
settings (its share links are agent/chat/sharing.py).

The list's forms post with htmx and get the list back by the `sessions-changed` event (the
sidebar re-reads itself); a plain post without JavaScript is redirected back to the chat.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agent.chat import chat_list
from agent.chat.list_forms import ChatSettingsForm, FlagForm, TagForm
from knowledge.models import ChatSession
from knowledge.search import search_sessions

CHANGED = "sessions-changed"


def list_context(request: HttpRequest, current: ChatSession | None) -> dict[str, Any]:
    """What the sidebar's list shows for this request: search hits, or the chats of the chosen view."""
    query = request.GET.get("q", "").strip()
    tag = request.GET.get("tag", "").strip()
    archived = request.GET.get("archived") == "1"
    context: dict[str, Any] = {
        "query": query,
        "current": current,
        "tag": tag,
        "archived": archived,
        "tags": chat_list.tag_names(),
        "archived_count": chat_list.archived_count(),
    }
    if query:
        context["hits"] = search_sessions(query, limit=20)
    else:
        context["groups"] = chat_list.grouped(chat_list.listed(tag=tag, archived=archived))
    return context


def _changed(request: HttpRequest, session: ChatSession, status: int = 204) -> HttpResponse:
    if not request.htmx:  # a plain form post (without JavaScript): back to the chat
        return redirect("chat", session_id=session.pk)
    response = HttpResponse(status=status)
    response["HX-Trigger"] = CHANGED
    return response


@require_POST
def pin(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    form = FlagForm(request.POST)
    form.is_valid()  # one optional text field: always valid
    form.pin(session)
    return _changed(request, session)


@require_POST
def archive(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    form = FlagForm(request.POST)
    form.is_valid()
    form.archive(session)
    return _changed(request, session)


@require_http_methods(["GET", "POST"])
def tags(request: HttpRequest, session_id: str) -> HttpResponse:
    """The row's tag editor: the chat's tags, each with a remove button, and a field to add one."""
    session = get_object_or_404(ChatSession, pk=session_id)
    form = TagForm(request.POST or None, session=session)
    if request.method == "POST" and form.is_valid():
        form.save()
        if not request.htmx:
            return redirect("chat", session_id=session.pk)
        form = TagForm(session=session)
    context = {"s": session, "form": form, "all_tags": chat_list.tag_names()}
    status = 400 if form.errors and not request.htmx else 200  # htmx swaps only 2xx answers
    return render(request, "chat/_tag_editor.html", context, status=status)


@require_GET
def list_rename(request: HttpRequest, session_id: str) -> HttpResponse:
    """The row's rename form (it posts to the chat's rename, which answers the list's way)."""
    session = get_object_or_404(ChatSession, pk=session_id)
    return render(request, "chat/_list_rename.html", {"s": session})


@require_http_methods(["GET", "POST"])
def chat_settings(request: HttpRequest, session_id: str) -> HttpResponse:
    """The chat's own instructions and temperature: the panel, saved, or with what was wrong."""
    session = get_object_or_404(ChatSession, pk=session_id)
    saved = False
    if request.method == "POST":
        form = ChatSettingsForm(request.POST)
        if form.is_valid():
            form.save(session)
            saved = True
    else:
        form = ChatSettingsForm(initial={"instructions": session.instructions, "temperature": session.temperature})
    status = 400 if form.errors and not request.htmx else 200
    if saved and not request.htmx:
        return redirect("chat", session_id=session.pk)
    context = {"session": session, "settings_form": form, "settings_saved": saved, "settings_open": True}
    return render(request, "chat/_chat_settings.html", context, status=status)
