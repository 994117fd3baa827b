"""Attached images in the home: recognised by their bytes, kept once per content, linked once."""

from __future__ import annotations

import pytest

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
    first = attachments.store_image("a.png", png(), "png")
    second = attachments.store_image("b.png", png(), "png")
    assert first.path == second.path and first.pk != second.pk
    assert [p.name for p in (home / "attachments").iterdir() if first.sha256 in p.name] == [first.path.name]


def test_an_upload_is_linked_to_one_message_only(home):
    session = ChatSession.objects.create(system_prompt="s")
    one = Message.objects.create(session=session, role="user", content="one")
    two = Message.objects.create(session=session, role="user", content="two")
    att = attachments.store_image("a.png", png(), "png")
    assert [a.pk for a in attachments.link([att.pk], one.pk)] == [att.pk]
    assert attachments.link([att.pk], two.pk) == []  # another message cannot take it over
    assert attachments.of_messages([one.pk, two.pk]) == {one.pk: [att]}
    assert session.api_messages()[1]["images"] == [{"id": att.pk, "name": "a.png"}]
