"""A status line says what an action did, so it shows only after that action: opening a page that
could save something shows no "Saved" before anything was saved."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.chat import service as chat_service
from tests.knowledge.views.test_settings import form as settings_form

pytestmark = pytest.mark.django_db


def _said(body: str) -> str:
    """The page's text without tags, so a sentence split by <code> reads whole."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body))


def test_settings_say_saved_only_after_a_save(auth_client, home: Path) -> None:
    body = auth_client.get("/settings/").content.decode()
    assert "Saved to" not in _said(body) and 'id="settings-saved"' not in body
    assert f"These settings live in {home / 'config.yaml'}" in _said(body)
    resp = auth_client.post("/settings/", settings_form(learning__evidence="off"))
    saved = resp.content.decode()
    assert 'id="settings-saved"' in saved
    assert f"Saved to {home / 'config.yaml'}. New sessions use these settings." in _said(saved)
    assert "Saved to" not in _said(auth_client.get("/settings/").content.decode())  # a later visit: nothing new


def test_a_chats_panels_say_nothing_was_done_until_something_was(auth_client, home: Path, llm) -> None:
    chat = chat_service.create_session()
    page = auth_client.get(f"/c/{chat.pk}/").content.decode()
    assert 'id="chat-settings-saved"' not in page and 'id="share-created"' not in page
    panel = auth_client.get(f"/c/{chat.pk}/share/", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="share-created"' not in panel and 'id="share-revoked"' not in panel
