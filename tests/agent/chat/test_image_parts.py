"""Images attached to a message reach the model as content parts, through the real socket, runner
and client against the scripted model server; a server refusing images ends the turn with a
sentence, is remembered, and the message's text is kept."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agent.chat import image_parts
from agent.chat import service as chat_service
from agent.llm.capabilities import Capabilities
from agent.llm.wire import wire_messages
from knowledge import attachments
from knowledge.capabilities import known
from knowledge.models import ChatSession, Message
from tests.agent.ws import frames_until, open_socket
from tests.attachment_files import png
from tests.conftest import write_config
from tests.fakellm import Reply
from tests.wire.llamacpp import IMAGE_REFUSAL

pytestmark = pytest.mark.django_db(transaction=True)


def _last_user(body: dict[str, Any]) -> Any:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def _user_contents(body: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


async def _send(session_id: str, owner: Any, frame: dict[str, Any]) -> list[dict[str, Any]]:
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to(frame)
    frames = await frames_until(comm, "ready")
    await comm.disconnect()
    return frames


async def test_an_attached_image_is_sent_as_an_image_part_and_again_on_the_next_turn(llm, owner, session_id):
    data = png(3, 2)
    att = await sync_to_async(attachments.store_image)("chart.png", data, "png", session_id)
    await _send(session_id, owner, {"type": "message", "text": "what is in this chart?", "images": [att.pk]})
    sent = _last_user(llm.chat_requests()[-1])
    expected_url = "data:image/png;base64," + base64.b64encode(data).decode()
    assert sent == [
        {"type": "text", "text": "what is in this chart?"},
        {"type": "image_url", "image_url": {"url": expected_url}},
    ]
    stored = await sync_to_async(lambda: Message.objects.get(session_id=session_id, role="user"))()
    assert stored.content == "what is in this chart?"  # the text is what search and the review read
    linked = await sync_to_async(lambda: list(stored.attachments.values_list("name", flat=True)))()
    assert linked == ["chart.png"]
    await _send(session_id, owner, {"type": "message", "text": "and the colour?"})
    first, second = _user_contents(llm.chat_requests()[-1])
    assert first[1]["image_url"]["url"] == expected_url  # a later turn still shows the model the image
    assert second == "and the colour?"


async def test_a_message_of_images_alone_may_be_sent(llm, owner, session_id):
    att = await sync_to_async(attachments.store_image)("only.png", png(), "png", session_id)
    frames = await _send(session_id, owner, {"type": "message", "text": "", "images": [att.pk]})
    assert not [f for f in frames if f["type"] == "error"], frames
    assert _last_user(llm.chat_requests()[-1])[0]["type"] == "image_url"


async def test_a_server_refusing_images_ends_the_turn_with_a_sentence_and_keeps_the_text(llm, home, owner, session_id):
    write_config(home, "model:\n  max_retries: 0\n")
    att = await sync_to_async(attachments.store_image)("photo.png", png(), "png", session_id)
    llm.push(Reply(raw=IMAGE_REFUSAL))
    frames = await _send(session_id, owner, {"type": "message", "text": "describe my photo", "images": [att.pk]})
    error = next(f for f in frames if f["type"] == "error")
    assert "This model does not accept images" in error["error"] and "Your message is kept" in error["error"]
    assert len(llm.chat_requests()) == 1  # not repeated without the image behind the person's back
    stored = await sync_to_async(lambda: list(Message.objects.filter(session_id=session_id, role="user")))()
    assert [m.content for m in stored] == ["describe my photo"]
    caps = await sync_to_async(known)(llm.base_url, "scripted-model")
    assert caps is not None and caps["images"] is False  # remembered for every session and process
    await _send(session_id, owner, {"type": "message", "text": "then just say hi"})
    assert _user_contents(llm.chat_requests()[-1]) == ["describe my photo\n\n[image: photo.png]", "then just say hi"]


async def test_an_image_uploaded_for_another_chat_is_refused_and_nothing_is_stored(llm, owner, session_id):
    other = await sync_to_async(lambda: chat_service.create_session().pk)()
    att = await sync_to_async(attachments.store_image)("theirs.png", png(), "png", other)
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "look at this", "images": [att.pk]})
    frame = await comm.receive_json_from(timeout=5)
    await comm.disconnect()
    assert frame["type"] == "error"
    assert frame["error"] == "theirs.png was attached in another chat. Attach it again in this one. Nothing was sent."
    assert not llm.requests
    assert not await sync_to_async(lambda: Message.objects.filter(session_id=session_id).exists())()
    still = await sync_to_async(lambda: attachments.MessageAttachment.objects.get(pk=att.pk))()
    assert still.message_id is None and still.session_id == other  # still the other chat's to send


async def test_an_upload_removed_or_already_sent_is_refused_with_the_reason(llm, owner, session_id):
    att = await sync_to_async(attachments.store_image)("once.png", png(), "png", session_id)
    await _send(session_id, owner, {"type": "message", "text": "first", "images": [att.pk]})
    for ids, expected in (
        ([att.pk], "once.png was sent with an earlier message already"),
        ([att.pk + 99], "no longer"),
    ):
        comm = await open_socket(f"/ws/chat/{session_id}/", owner)
        await comm.send_json_to({"type": "message", "text": "again", "images": ids})
        frame = await comm.receive_json_from(timeout=5)
        await comm.disconnect()
        assert frame["type"] == "error" and expected in frame["error"], frame
    stored = await sync_to_async(lambda: list(Message.objects.filter(session_id=session_id, role="user")))()
    assert [m.content for m in stored] == ["first"]


async def test_an_edited_message_keeps_the_images_of_the_original(llm, owner, session_id):
    data = png(5, 5)
    att = await sync_to_async(attachments.store_image)("plot.png", data, "png", session_id)
    await _send(session_id, owner, {"type": "message", "text": "what is this?", "images": [att.pk]})
    original = await sync_to_async(lambda: Message.objects.get(session_id=session_id, role="user"))()
    frames = await _send(session_id, owner, {"type": "message", "text": "what is this plot?", "edit": original.pk})
    assert not [f for f in frames if f["type"] == "error"], frames
    sent = _last_user(llm.chat_requests()[-1])
    assert sent[0] == {"type": "text", "text": "what is this plot?"}
    assert sent[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(data).decode()
    edited = await sync_to_async(lambda: Message.objects.get(session_id=session_id, content="what is this plot?"))()
    names = await sync_to_async(
        lambda: [list(m.attachments.values_list("name", flat=True)) for m in (original, edited)]
    )()
    assert names == [["plot.png"], ["plot.png"]]  # the earlier version keeps its image too


@pytest.mark.parametrize(
    ("images", "expected"),
    [
        ("1", '"images" must be a list'),
        ([1, 2, 3, 4, 5], "can carry 4 images; this one has 5"),
        ([True], '"images" must be a list'),
    ],
)
async def test_bad_image_lists_are_refused_before_anything_is_stored(llm, owner, session_id, images, expected):
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "look", "images": images})
    frame = await comm.receive_json_from(timeout=5)
    assert frame["type"] == "error" and expected in frame["error"], frame
    await comm.disconnect()
    assert not llm.requests
    assert not await sync_to_async(lambda: Message.objects.filter(session_id=session_id).exists())()


def test_past_the_resent_limit_older_images_become_placeholders(home, db):
    chat = ChatSession.objects.create(system_prompt="s").pk
    refs = [
        attachments.store_image(f"p{i}.png", png(i + 1, 1), "png", chat).ref() for i in range(image_parts.RESENT + 1)
    ]
    messages = [{"role": "user", "content": f"look {i}", "images": [ref]} for i, ref in enumerate(refs)]
    out = image_parts.with_images(messages, accepts=True)
    assert out[0]["content"] == "look 0\n\n[image: p0.png]"
    assert [p["type"] for p in out[-1]["content"]] == ["text", "image_url"]
    assert all("images" not in m for m in out)
    assert messages[0]["images"] == [refs[0]]  # the runner's own list is not changed


def test_a_request_built_without_the_image_view_names_the_images_in_the_text():
    # A summary or a review sends the runner's list as it is: the model reads which images were shown.
    out = wire_messages([{"role": "user", "content": "see", "images": [{"id": 1, "name": "a.png"}]}], Capabilities())
    assert out == [{"role": "user", "content": "see\n\n[image: a.png]"}]
