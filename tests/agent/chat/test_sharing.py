"""A chat's read-only share links over HTTP: none until the person makes one; a link made from the
chat's panel opens the chat without the login, shows only that chat's questions and answers, is not
indexed, and stops working (one and the same 404) once revoked or expired, as an unknown token does.
The link gives no way into anything else: other chats, the API, other pages, other images."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from agent.chat import service as chat_service
from hermes_site.security import CSP
from knowledge import attachments, share_links
from knowledge.models import ChatSession, Message
from knowledge.share_links import ShareLink
from tests.attachment_files import png

pytestmark = pytest.mark.django_db(transaction=True)
HX = {"HTTP_HX_REQUEST": "true"}


def _chat(question: str, answer: str, title: str) -> ChatSession:
    session = chat_service.create_session()
    q = Message.objects.create(session=session, role="user", content=question)
    Message.objects.create(session=session, role="assistant", content=answer, parent=q)
    ChatSession.objects.filter(pk=session.pk).update(title=title, message_count=2, user_turn_count=1)
    session.refresh_from_db()
    return session


def _links(body: str) -> list[str]:
    return re.findall(r'value="(http://testserver/s/[A-Za-z0-9_-]+/)"', body)


def _make(auth_client: Client, chat: ChatSession, expires: str = "never") -> str:
    resp = auth_client.post(f"/c/{chat.pk}/share/", {"expires": expires}, **HX)
    assert resp.status_code == 200
    body = resp.content.decode()
    assert 'id="share-created"' in body
    return _links(body)[0].removeprefix("http://testserver")


def test_a_chat_is_not_shared_until_a_link_is_made(auth_client, home):
    chat = _chat("How do I roll back the wombat deploy?", "Run `make rollback`.", "Wombat deploy")
    body = auth_client.get(f"/c/{chat.pk}/share/", **HX).content.decode()
    assert 'id="share-none"' in body and not _links(body)
    assert ShareLink.objects.count() == 0


def test_a_link_opens_the_chat_read_only_without_the_login(client, auth_client, home):
    chat = _chat("How do I roll back the wombat deploy?", "Run `make rollback`.", "Wombat deploy")
    other = _chat("What is my bank PIN hint?", "The secret hint is kangaroo.", "Private other")
    path = _make(auth_client, chat)
    assert re.fullmatch(r"/s/[A-Za-z0-9_-]{43}/", path)
    link = ShareLink.objects.get()
    assert link.session_id == chat.pk and link.expires_at is None

    anonymous = Client()
    resp = anonymous.get(path)
    assert resp.status_code == 200
    body = resp.content.decode()
    assert "How do I roll back the wombat deploy?" in body and "<code>make rollback</code>" in body
    assert "kangaroo" not in body and "Private other" not in body  # no other chat, not even in a list
    for dashboard in ("<textarea", "<form", "<nav", 'href="/memory/', 'href="/c/', "csrf", "/ws/"):
        assert dashboard not in body, dashboard
    assert '<meta name="robots" content="noindex, nofollow, noarchive">' in body
    assert resp["X-Robots-Tag"] == "noindex, nofollow, noarchive"
    assert resp["Content-Security-Policy"] == CSP
    assert resp["Referrer-Policy"] == "no-referrer" and resp["Cache-Control"] == "no-store"
    assert "sessionid" not in resp.cookies  # reading a share logs nobody in

    # The token opens that page and nothing else: the chat, its share panel, other pages, the API.
    for elsewhere in (
        f"/c/{chat.pk}/",
        f"/c/{other.pk}/",
        f"/c/{chat.pk}/share/",
        f"/c/{chat.pk}/export.json",
        f"/c/{chat.pk}/messages/",
        "/memory/",
        "/api/models",
        "/api/skills/slash",
        "/settings/",
        "/admin/",
        f"{path}messages/",
        f"/s/{link.token}",
        f"/s/{link.token}/../../memory/",
    ):
        got = anonymous.get(elsewhere)
        assert got.status_code in (301, 302, 404), elsewhere
        assert "kangaroo" not in got.content.decode() and "make rollback" not in got.content.decode()
        if got.status_code == 302:
            assert got["Location"].startswith("/login"), elsewhere
    assert anonymous.post(path, {"text": "hi"}).status_code == 405  # nothing to change through it


def test_revoked_expired_and_unknown_links_show_the_same_404(client, auth_client, home):
    chat = _chat("Where are the quoll survey notes?", "In the shared drive.", "Quoll survey")
    revoked, expired = _make(auth_client, chat), _make(auth_client, chat, expires="1")
    ShareLink.objects.filter(token=expired.split("/")[2]).update(expires_at=timezone.now() - timedelta(seconds=1))
    pk = ShareLink.objects.get(token=revoked.split("/")[2]).pk
    resp = auth_client.post(f"/c/{chat.pk}/share/{pk}/revoke/", **HX)
    assert 'id="share-revoked"' in resp.content.decode() and not _links(resp.content.decode())

    anonymous = Client()
    unknown = "/s/" + "A" * 43 + "/"
    pages = [anonymous.get(p) for p in (revoked, expired, unknown)]
    assert [p.status_code for p in pages] == [404, 404, 404]
    assert len({p.content for p in pages}) == 1  # nothing tells one from another
    assert "quoll" not in pages[0].content.decode().lower()
    assert pages[0]["X-Robots-Tag"].startswith("noindex")
    # Not a token's shape: the login is asked for, as for any other address.
    assert anonymous.get("/s/short/").status_code == 302


def test_the_panel_makes_expiring_links_and_refuses_an_unknown_lifetime(auth_client, home):
    chat = _chat("When does the numbat grant close?", "On Friday.", "Numbat grant")
    before = timezone.now()
    _make(auth_client, chat, expires="7")
    link = ShareLink.objects.get()
    assert link.expires_at is not None
    assert timedelta(days=7) - timedelta(minutes=1) < link.expires_at - before < timedelta(days=7, minutes=1)
    bad = auth_client.post(f"/c/{chat.pk}/share/", {"expires": "forever"})
    assert bad.status_code == 400 and "Select a valid choice" in bad.content.decode()
    assert ShareLink.objects.count() == 1
    # Without JavaScript: the page itself, and a post goes back to it.
    page = auth_client.get(f"/c/{chat.pk}/share/").content.decode()
    assert "Share “Numbat grant”" in page and len(_links(page)) == 1
    resp = auth_client.post(f"/c/{chat.pk}/share/", {"expires": "30"})
    assert resp.status_code == 302 and resp["Location"] == f"/c/{chat.pk}/share/"
    assert len(share_links.live(chat.pk)) == 2


def test_a_link_of_one_chat_cannot_be_revoked_through_another(auth_client, home):
    chat = _chat("q", "a", "One")
    other = _chat("q", "a", "Two")
    path = _make(auth_client, chat)
    pk = ShareLink.objects.get().pk
    auth_client.post(f"/c/{other.pk}/share/{pk}/revoke/", **HX)
    assert Client().get(path).status_code == 200


def test_the_share_panel_needs_the_login(client, home):
    chat = _chat("q", "a", "Behind the login")
    for resp in (client.get(f"/c/{chat.pk}/share/"), client.post(f"/c/{chat.pk}/share/", {"expires": "never"})):
        assert resp.status_code == 302 and resp["Location"].startswith("/login")
    assert ShareLink.objects.count() == 0


def test_a_shared_chats_images_come_through_its_token_only(auth_client, home, llm):
    chat = _chat("q", "a", "Images")
    other = _chat("q", "a", "Other images")
    atts = []
    for session in (chat, other):
        stored = attachments.store_image("graph.png", png(7, 3), "png", session.pk)
        question = Message.objects.filter(session=session, role="user").get()
        atts += attachments.link([stored.pk], question.pk, session.pk)
    path = _make(auth_client, chat)
    anonymous = Client()
    body = anonymous.get(path).content.decode()
    mine = f"{path}images/{atts[0].pk}/"
    assert f'<img src="{mine}" alt="graph.png"' in body
    assert f"/chat/attachments/{atts[0].pk}/" not in body
    served = anonymous.get(mine)
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    assert b"".join(served.streaming_content) == png(7, 3)
    assert served["X-Robots-Tag"].startswith("noindex")
    assert anonymous.get(f"{path}images/{atts[1].pk}/").status_code == 404  # another chat's image
    assert anonymous.get(f"/chat/attachments/{atts[0].pk}/").status_code == 302
