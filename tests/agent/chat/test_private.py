"""Private chats on the chat page: started with "New private chat", switched from the chat menu (and
back), stored so a reload keeps it, marked "Private" in the header and the chat list, with the
switch saying what it means before it is used."""

from __future__ import annotations

import pytest
from django.utils import timezone

from agent.chat import service as chat_service
from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db(transaction=True)

MARK = '<span class="badge private-mark"'


def _said(*texts: str) -> ChatSession:
    session = chat_service.create_session()
    for text in texts:
        Message.objects.create(session=session, role="user", content=text)
    ChatSession.objects.filter(pk=session.pk).update(message_count=len(texts))
    session.refresh_from_db()
    return session


def _page(auth_client, session: ChatSession) -> str:
    resp = auth_client.get(f"/c/{session.pk}/")
    assert resp.status_code == 200
    return str(resp.content.decode())


def test_a_new_private_chat_is_stored_private_and_marked_after_a_reload(auth_client, home) -> None:
    shown = _said("an ordinary question")
    # Ended already (as by another tab's New chat): no background end runs from this test.
    ChatSession.objects.filter(pk=shown.pk).update(ended_at=timezone.now())
    resp = auth_client.post("/c/new/private/", {"from": shown.pk})
    assert resp.status_code == 302
    chat = ChatSession.objects.exclude(pk=shown.pk).get()
    assert resp["Location"] == f"/c/{chat.pk}/" and chat.private
    for _ in range(2):  # a reload asks the stored row again
        body = _page(auth_client, chat)
        header = body.split('id="chat-title"', 1)[1].split("</div>", 1)[0]
        assert MARK in header and ">Private</span>" in header
        assert 'id="private-switch"' in body and "Stop keeping private" in body
    row = body.split(f'id="row-{chat.pk}"', 1)[1].split("</a>", 1)[0]
    assert MARK in row
    assert MARK not in body.split(f'id="row-{shown.pk}"', 1)[1].split("</a>", 1)[0]


def test_new_private_chat_from_an_unused_chat_makes_that_one_private(auth_client, home) -> None:
    unused = chat_service.create_session()
    resp = auth_client.post("/c/new/private/", {"from": unused.pk})
    assert resp["Location"] == f"/c/{unused.pk}/"
    assert ChatSession.objects.get().private


def test_new_chat_from_an_unused_private_chat_is_an_ordinary_one(auth_client, home) -> None:
    unused = chat_service.create_session()
    auth_client.post("/c/new/private/", {"from": unused.pk})
    resp = auth_client.post("/c/new/", {"from": unused.pk})
    assert resp["Location"] == f"/c/{unused.pk}/" and not ChatSession.objects.get().private


def test_the_home_page_does_not_land_in_an_unused_private_chat(auth_client, home) -> None:
    auth_client.post("/c/new/private/", {})
    private = ChatSession.objects.get()
    auth_client.get("/")
    opened = ChatSession.objects.exclude(pk=private.pk).get()
    assert not opened.private


def test_the_menu_switch_says_what_it_means_and_stores_the_choice(auth_client, home) -> None:
    chat = _said("planning a surprise party")
    body = _page(auth_client, chat)
    assert MARK not in body.split('id="chat-title"', 1)[1].split("</div>", 1)[0]
    switch = body.split('id="private-form"', 1)[1].split("</form>", 1)[0]
    assert 'name="private" value="1"' in switch and "Make private" in switch
    assert "From now on nothing in it is learned" in switch and "What was already learned from it stays" in switch

    resp = auth_client.post(f"/c/{chat.pk}/private/", {"private": "1"})
    assert resp.status_code == 302 and resp["Location"] == f"/c/{chat.pk}/"
    assert ChatSession.objects.get(pk=chat.pk).private
    body = _page(auth_client, chat)
    switch = body.split('id="private-form"', 1)[1].split("</form>", 1)[0]
    assert 'name="private" value="0"' in switch and "Stop keeping private" in switch
    assert "including what was said while it was private" in switch
    # A private chat counts nothing toward a review: the learning counters show nothing.
    assert 'data-memory=""' in body and 'data-skill=""' in body

    auth_client.post(f"/c/{chat.pk}/private/", {"private": "0"})
    assert not ChatSession.objects.get(pk=chat.pk).private
    assert MARK not in _page(auth_client, chat)


def test_the_switch_refuses_what_it_cannot_read(auth_client, home) -> None:
    chat = _said("hello")
    for data in ({}, {"private": "maybe"}):
        resp = auth_client.post(f"/c/{chat.pk}/private/", data)
        assert resp.status_code == 400 and "private=1 or private=0" in resp.content.decode()
    assert auth_client.get(f"/c/{chat.pk}/private/").status_code == 405
    assert auth_client.post("/c/nope/private/", {"private": "1"}).status_code == 404
    assert not ChatSession.objects.get(pk=chat.pk).private
