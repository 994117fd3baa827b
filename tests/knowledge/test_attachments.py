"""Attached images in the home: recognised by their bytes, kept once per content, linked once,
to a message of their own chat only; uploads never sent, and files no message names, removed by
the periodic round after a day (the clock given, nothing slept)."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from django.utils import timezone

from agent import reclaim
from knowledge import attachments
from knowledge.models import ChatSession, Message
from tests.attachment_files import png

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("data", "ext"),
    [
        (png(), "png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "jpg"),
        (b"GIF89a\x01\x00\x01\x00", "gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "webp"),
        (b'<svg xmlns="http://www.w3.org/2000/svg"/>', None),
        (b"%PDF-1.4", None),
    ],
)
def test_images_are_recognised_by_their_first_bytes(data, ext):
    assert attachments.sniff(data) == ext


def test_the_same_image_twice_is_one_file_and_two_uploads(home):
    chat = ChatSession.objects.create(system_prompt="s").pk
    first = attachments.store_image("a.png", png(), "png", chat)
    second = attachments.store_image("b.png", png(), "png", chat)
    assert first.path == second.path and first.pk != second.pk
    assert [p.name for p in (home / "attachments").iterdir() if first.sha256 in p.name] == [first.path.name]


def test_an_upload_is_linked_to_one_message_only(home):
    session = ChatSession.objects.create(system_prompt="s")
    one = Message.objects.create(session=session, role="user", content="one")
    two = Message.objects.create(session=session, role="user", content="two")
    att = attachments.store_image("a.png", png(), "png", session.pk)
    assert [a.pk for a in attachments.link([att.pk], one.pk, session.pk)] == [att.pk]
    assert attachments.link([att.pk], two.pk, session.pk) == []  # another message cannot take it over
    assert attachments.of_messages([one.pk, two.pk]) == {one.pk: [att]}
    assert session.api_messages()[1]["images"] == [{"id": att.pk, "name": "a.png"}]


def test_an_upload_of_one_chat_is_never_linked_to_another_chats_message(home):
    mine, theirs = (ChatSession.objects.create(system_prompt="s") for _ in range(2))
    message = Message.objects.create(session=theirs, role="user", content="look")
    att = attachments.store_image("mine.png", png(), "png", mine.pk)
    assert attachments.refusal([att.pk], theirs.pk) == (
        "mine.png was attached in another chat. Attach it again in this one. Nothing was sent."
    )
    assert attachments.link([att.pk], message.pk, theirs.pk) == []
    assert attachments.MessageAttachment.objects.get(pk=att.pk).message is None
    assert attachments.refusal([att.pk], mine.pk) is None


def _age(att: attachments.MessageAttachment, by: timedelta) -> None:
    """The upload and its file as if made `by` ago (what a day of waiting leaves)."""
    then = timezone.now() - by
    attachments.MessageAttachment.objects.filter(pk=att.pk).update(created_at=then)
    os.utime(att.path, (then.timestamp(), then.timestamp()))


def test_an_upload_never_sent_is_removed_after_a_day_with_its_file(home):
    chat = ChatSession.objects.create(system_prompt="s")
    stale = attachments.store_image("old.png", png(2, 2), "png", chat.pk)
    fresh = attachments.store_image("new.png", png(3, 3), "png", chat.pk)
    _age(stale, timedelta(hours=23))
    assert attachments.sweep() == 0 and stale.path.exists()  # within the day: still sendable
    assert attachments.sweep(now=timezone.now() + timedelta(hours=2)) == 1
    assert list(attachments.MessageAttachment.objects.values_list("name", flat=True)) == ["new.png"]
    assert not stale.path.exists() and fresh.path.exists()
    assert attachments.refusal([stale.pk], chat.pk) == attachments.GONE


def test_a_file_another_message_still_shows_is_kept(home):
    chat = ChatSession.objects.create(system_prompt="s")
    message = Message.objects.create(session=chat, role="user", content="here")
    sent = attachments.store_image("sent.png", png(), "png", chat.pk)
    attachments.link([sent.pk], message.pk, chat.pk)
    unsent = attachments.store_image("same-bytes.png", png(), "png", chat.pk)  # the same file
    _age(sent, timedelta(days=3))
    _age(unsent, timedelta(days=2))
    assert attachments.sweep() == 1
    assert [a.name for a in attachments.MessageAttachment.objects.all()] == ["sent.png"]
    assert sent.path.read_bytes() == png()


def test_the_periodic_round_removes_the_files_of_a_deleted_chat(home):
    chat = ChatSession.objects.create(system_prompt="s")
    message = Message.objects.create(session=chat, role="user", content="here")
    att = attachments.store_image("gone.png", png(4, 1), "png", chat.pk)
    attachments.link([att.pk], message.pk, chat.pk)
    _age(att, timedelta(days=2))
    chat.delete()
    assert att.path.exists()  # the rows went with the chat; the file waits for the round
    reclaim.one_round("server", lambda: [])
    assert not att.path.exists()


def test_a_home_without_images_gets_no_attachments_folder_from_the_round(home):
    reclaim.one_round("server", lambda: [])
    assert not (home / "attachments").exists()
