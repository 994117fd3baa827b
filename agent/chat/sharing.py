"""Read-only links to a chat: the owner's panel that makes, lists and revokes them, and the public
page a link opens (no login: hermes_site/access.py lets exactly `/s/<token>/` and its images through).

The public page shows the chosen version's questions and answers, rendered by the same sanitising
Markdown as the chat, and nothing else of the dashboard: no navigation, no memory or skills, no
composer, no tool arguments or results. Its images are served through the same token, and only
those of the shared chat. An unknown, revoked or expired token gets one and the same 404 page.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agent.chat import presenter
from knowledge import share_links
from knowledge.attachments import MessageAttachment
from knowledge.models import ChatSession

# Headers of every answer under /s/: never indexed or kept by a search engine or a shared cache,
# and no Referer carrying the token to a site a shared answer links to.
PUBLIC_HEADERS = {
    "X-Robots-Tag": "noindex, nofollow, noarchive",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


class ShareForm(forms.Form):
    """How long a new link works: until revoked, or 1, 7 or 30 days."""

    expires = forms.ChoiceField(
        label="Link works",
        choices=[("never", "Until revoked"), ("1", "For 1 day"), ("7", "For 7 days"), ("30", "For 30 days")],
        initial="never",
    )

    @property
    def days(self) -> int | None:
        return share_links.LIFETIMES[self.cleaned_data["expires"]]


def _panel(request: HttpRequest, session: ChatSession, form: ShareForm, **flags: Any) -> HttpResponse:
    links = [
        (link, request.build_absolute_uri(reverse("public_share", args=[link.token])))
        for link in share_links.live(session.pk)
    ]
    context = {"session": session, "share_form": form, "links": links, **flags}
    template = "chat/_share_panel.html" if request.htmx else "chat/share_manage.html"
    return render(request, template, context, status=400 if form.errors and not request.htmx else 200)


@require_http_methods(["GET", "POST"])
def manage(request: HttpRequest, session_id: str) -> HttpResponse:
    """The chat's share panel: a form for a new link, and the live links with Copy and Revoke."""
    session = get_object_or_404(ChatSession, pk=session_id)
    if request.method == "GET":
        return _panel(request, session, ShareForm())
    form = ShareForm(request.POST)
    if not form.is_valid():
        return _panel(request, session, form)
    share_links.create(session.pk, form.days)
    if not request.htmx:  # a plain form post: back to the page, where the new link is listed first
        return redirect("chat_share", session_id=session.pk)
    return _panel(request, session, ShareForm(), created=True)


@require_POST
def revoke(request: HttpRequest, session_id: str, pk: int) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    revoked = share_links.revoke(session.pk, pk)
    if not request.htmx:
        return redirect("chat_share", session_id=session.pk)
    return _panel(request, session, ShareForm(), revoked=revoked)


def _public(response: HttpResponse) -> HttpResponse:
    for name, value in PUBLIC_HEADERS.items():
        response[name] = value
    return response


def _gone(request: HttpRequest) -> HttpResponse:
    """One answer for an unknown, revoked or expired link, so none can be told from another."""
    return _public(render(request, "chat/share_gone.html", status=404))


def _shared_items(token: str, session: ChatSession) -> list[presenter.Item]:
    """The conversation as the chat shows it, its images addressed through the link's token."""
    items = presenter.conversation(session)
    for item in items:
        if item.images:
            ids = MessageAttachment.objects.filter(message_id=item.message_id).order_by("id")
            item.images = [
                presenter.Image(reverse("public_share_image", args=[token, att.pk]), att.name) for att in ids
            ]
    return items


@require_GET
def public(request: HttpRequest, token: str) -> HttpResponse:
    """The shared chat, read-only, for anyone holding the link."""
    link = share_links.find(token)
    if link is None:
        return _gone(request)
    context = {"session": link.session, "items": _shared_items(token, link.session), "link": link}
    return _public(render(request, "chat/share.html", context))


@require_GET
def public_image(request: HttpRequest, token: str, pk: int) -> HttpResponse:
    """An image of the shared chat's messages, through the same link (another chat's: 404)."""
    link = share_links.find(token)
    att = MessageAttachment.objects.filter(pk=pk, message__session_id=link.session_id).first() if link else None
    if att is None:
        return _gone(request)
    try:
        handle = att.path.open("rb")
    except FileNotFoundError:
        return _gone(request)
    response = FileResponse(handle, content_type=att.mime)
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return _public(response)
