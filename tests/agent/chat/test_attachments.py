"""The attachment upload and the image address: a PDF's text back to the page, an image kept in
the home and served as an image only, every refusal a sentence, only for a logged-in person; the
exports name them (a share link's images: tests/agent/chat/test_sharing.py)."""

from __future__ import annotations

import json
import stat

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from agent.chat import attachments as chat_attachments
from agent.chat import service as chat_service
from hermes_site.access import login_token
from knowledge import attachments
from knowledge.attachments import MessageAttachment
from knowledge.capabilities import DbCapabilityStore
from knowledge.models import ChatSession, Message
from tests.attachment_files import blank_pdf, png, text_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def session_id(llm) -> str:
    return chat_service.create_session().pk


def _upload(client: Client, session_id: str, name: str, data: bytes, content_type: str = "application/pdf"):
    file = SimpleUploadedFile(name, data, content_type=content_type)
    return client.post("/chat/attach/", {"session": session_id, "file": file})


def test_a_pdf_comes_back_as_its_text_with_its_page_count(auth_client, session_id):
    resp = _upload(auth_client, session_id, "notes.pdf", text_pdf(["The quokka census is on Tuesday"]))
    assert resp.status_code == 200, resp.content
    got = resp.json()
    assert got["kind"] == "text" and got["name"] == "notes.pdf" and got["note"] == "1 page"
    assert "The quokka census is on Tuesday" in got["text"]


def test_a_scanned_pdf_is_refused_with_the_reason(auth_client, session_id):
    resp = _upload(auth_client, session_id, "scan.pdf", blank_pdf())
    assert resp.status_code == 400
    assert resp.json()["error"] == "scan.pdf has no text to extract — it may be scanned images. It was not attached."


def test_an_image_is_kept_owner_only_and_served_as_an_image(auth_client, session_id, home):
    data = png(4, 4)
    resp = _upload(auth_client, session_id, "shot.png", data, "image/png")
    got = resp.json()
    assert got["kind"] == "image" and got["name"] == "shot.png"
    att = MessageAttachment.objects.get(pk=got["id"])
    assert att.message is None and att.session_id == session_id  # linked when a message of this chat is sent
    assert att.path.parent == home / "attachments" and att.path.read_bytes() == data
    assert stat.S_IMODE(att.path.stat().st_mode) == 0o600
    served = auth_client.get(got["url"])
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    assert served["X-Content-Type-Options"] == "nosniff"
    assert b"".join(served.streaming_content) == data


def test_the_type_is_read_from_the_bytes_not_the_name(auth_client, session_id):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    resp = _upload(auth_client, session_id, "logo.png", svg, "image/png")
    assert resp.status_code == 400
    assert "logo.png is neither a PDF nor an image (PNG, JPEG, WebP or GIF)" in resp.json()["error"]
    assert not MessageAttachment.objects.exists()


def test_an_image_over_the_limit_is_refused(auth_client, session_id):
    big = png() + b"\0" * chat_attachments.IMAGE_BYTES
    resp = _upload(auth_client, session_id, "huge.png", big, "image/png")
    assert resp.status_code == 400
    assert resp.json()["error"] == "huge.png is 5.0 MB; images are limited to 5.0 MB each. It was not attached."


def test_a_file_over_ten_megabytes_is_refused_before_it_is_read(auth_client, session_id):
    resp = _upload(auth_client, session_id, "big.pdf", b"%PDF-1.4\n" + b"0" * (11 * 1024 * 1024))
    assert resp.status_code == 413
    assert resp.content.decode() == "The file is larger than 10 MB. It was not attached."


def test_an_image_for_a_model_known_to_refuse_images_is_refused_at_once(auth_client, session_id, llm):
    DbCapabilityStore().save(llm.base_url, "scripted-model", {"images": False})
    resp = _upload(auth_client, session_id, "shot.png", png(), "image/png")
    assert resp.status_code == 400
    assert resp.json()["error"].startswith("shot.png was not attached. This model does not accept images.")


def test_an_empty_file_and_a_missing_chat_are_refused(auth_client, session_id):
    assert _upload(auth_client, session_id, "e.pdf", b"").json()["error"] == "The file is empty. It was not attached."
    gone = _upload(auth_client, "0" * 32, "a.pdf", text_pdf(["x"]))
    assert gone.status_code == 404 and "no longer exists" in gone.json()["error"]


def test_uploads_and_images_need_the_login_and_the_csrf_token(client, session_id):
    assert _upload(client, session_id, "a.pdf", text_pdf(["x"])).status_code == 302  # to the login page
    strict = Client(enforce_csrf_checks=True)
    strict.get(f"/login?token={login_token()}")
    assert _upload(strict, session_id, "a.pdf", text_pdf(["x"])).status_code == 403
    att_url = "/chat/attachments/1/"
    assert client.get(att_url).status_code == 302


def _sent_with_image(client: Client, session_id: str) -> MessageAttachment:
    """A question with an uploaded image, stored and linked as a sent message of the chat is."""
    got = _upload(client, session_id, "graph.png", png(7, 3), "image/png").json()
    message = Message.objects.create(session_id=session_id, role="user", content="What does this graph show?")
    Message.objects.create(session_id=session_id, role="assistant", content="A rising line.", parent=message)
    (att,) = attachments.link([got["id"]], message.pk, session_id)
    ChatSession.objects.filter(pk=session_id).update(user_turn_count=1)
    return att


def test_the_exports_name_each_image_with_its_address(auth_client, session_id):
    att = _sent_with_image(auth_client, session_id)
    markdown = auth_client.get(f"/c/{session_id}/export.md").content.decode()
    assert f"## You\n\n[image: graph.png](/chat/attachments/{att.pk}/)\n\nWhat does this graph show?" in markdown
    data = json.loads(auth_client.get(f"/c/{session_id}/export.json").content)
    question, answer = data["messages"]
    assert question["images"] == [
        {"name": "graph.png", "type": "image/png", "size": len(png(7, 3)), "url": f"/chat/attachments/{att.pk}/"}
    ]
    assert "images" not in answer
