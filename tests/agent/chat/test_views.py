"""Chat pages over HTTP: the conversation, sidebar, session actions, slash skills, first-run setup."""

from __future__ import annotations

import time

import pytest

from agent.chat import service as chat_service
from agent.chat.frames import event_frame
from knowledge.models import ChatSession, Message
from tests.conftest import write_config

pytestmark = pytest.mark.django_db(transaction=True)

SKILL = """---
name: deploy-check
description: Check a deployment step by step
---
# Deploy check
1. Look at the logs.
"""


def _session_with(*messages: dict) -> ChatSession:
    session = chat_service.create_session()
    for m in messages:
        Message.objects.create(session=session, **m)
    ChatSession.objects.filter(pk=session.pk).update(message_count=len(messages))
    session.refresh_from_db()
    return session


def test_pages_need_the_login(client, home):
    resp = client.get("/")
    assert resp.status_code == 302 and resp["Location"].startswith("/login")


def test_first_visit_opens_a_fresh_chat_with_the_first_run_panel(auth_client, home):
    resp = auth_client.get("/")
    assert resp.status_code == 200
    body = resp.content.decode()
    assert ChatSession.objects.count() == 1
    assert "Connect a model" in body and "OPENAI_API_KEY" in body and "openrouter.ai" in body
    assert f'data-session="{ChatSession.objects.get().pk}"' in body
    assert "js/notify.js" in body and "js/chat/main.js" in body


def test_the_stored_conversation_renders_as_safe_markdown_with_tool_cards(auth_client, llm):
    call = {"id": "call_1", "type": "function", "function": {"name": "memory", "arguments": '{"target": "user"}'}}
    session = _session_with(
        {"role": "user", "content": "<script>alert(1)</script> and **bold**"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": '{"success": true, "message": "User profile updated"}', "tool_call_id": "call_1"},
        {"role": "assistant", "content": "Saved `it`."},
    )
    body = auth_client.get(f"/c/{session.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;" in body
    assert "<strong>bold</strong>" in body and "<code>it</code>" in body
    assert 'class="tool-name">memory<' in body and "User profile updated" in body
    assert "&quot;target&quot;: &quot;user&quot;" in body  # arguments pretty-printed, escaped
    assert "Connect a model" not in body


def test_home_opens_a_new_chat_and_reuses_an_unused_one(auth_client, llm):
    older = _session_with({"role": "user", "content": "older"})
    body = auth_client.get("/").content.decode()
    assert f'data-session="{older.pk}"' not in body
    fresh = ChatSession.objects.get(message_count=0)
    assert f'data-session="{fresh.pk}"' in body
    assert f'data-session="{fresh.pk}"' in auth_client.get("/").content.decode()
    assert ChatSession.objects.count() == 2


def test_a_chat_holding_messages_it_never_counted_is_not_handed_out_as_new(auth_client, home):
    # Rows written past the chat's counter (an import, a script): "/" and New chat do not reuse it.
    stale = chat_service.create_session()
    Message.objects.create(session=stale, role="user", content="written by a script")
    assert ChatSession.objects.get(pk=stale.pk).message_count == 0
    assert f'data-session="{stale.pk}"' not in auth_client.get("/").content.decode()
    resp = auth_client.post("/c/new/", {"from": stale.pk})
    assert resp["Location"] != f"/c/{stale.pk}/"


def test_unknown_session_is_404(auth_client, home):
    assert auth_client.get("/c/nope/").status_code == 404


def test_new_chat_ends_the_previous_session_in_the_background(auth_client, llm):
    previous = _session_with({"role": "user", "content": "hello"})
    resp = auth_client.post("/c/new/", {"from": previous.pk})
    assert resp.status_code == 302
    new_id = resp["Location"].strip("/").split("/")[-1]
    assert new_id != previous.pk and ChatSession.objects.filter(pk=new_id, source="web").exists()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not ChatSession.objects.get(pk=previous.pk).ended_at:
        time.sleep(0.05)
    previous.refresh_from_db()
    assert previous.ended_at is not None and previous.end_reason == "new session"


def test_new_chat_from_an_empty_chat_reuses_it(auth_client, home):
    empty = chat_service.create_session()
    resp = auth_client.post("/c/new/", {"from": empty.pk})
    assert resp["Location"] == f"/c/{empty.pk}/"
    assert ChatSession.objects.count() == 1


def test_rename_inline_updates_title_and_sidebar(auth_client, home):
    session = chat_service.create_session()
    form = auth_client.get(f"/c/{session.pk}/rename/", HTTP_HX_REQUEST="true").content.decode()
    assert 'name="title"' in form
    resp = auth_client.post(f"/c/{session.pk}/rename/", {"title": "  Trip   planning "}, HTTP_HX_REQUEST="true")
    assert "Trip planning" in resp.content.decode() and resp["HX-Trigger"] == "sessions-changed"
    assert ChatSession.objects.get(pk=session.pk).title == "Trip planning"


def test_rename_form_posted_without_htmx_renames_and_returns_to_the_chat(auth_client, home):
    """Enter pressed before htmx wired the form (or no JavaScript): a plain form post still renames."""
    session = chat_service.create_session()
    form = auth_client.get(f"/c/{session.pk}/rename/", HTTP_HX_REQUEST="true").content.decode()
    assert 'method="post"' in form and f'action="/c/{session.pk}/rename/"' in form and "csrfmiddlewaretoken" in form
    resp = auth_client.post(f"/c/{session.pk}/rename/", {"title": "Deploy notes"})
    assert resp.status_code == 302 and resp["Location"] == f"/c/{session.pk}/"
    stored = ChatSession.objects.get(pk=session.pk)
    assert (stored.title, stored.title_source) == ("Deploy notes", "person")


def test_delete_removes_the_session_and_its_messages(auth_client, home):
    session = _session_with({"role": "user", "content": "bye"})
    resp = auth_client.post(f"/c/{session.pk}/delete/", HTTP_HX_REQUEST="true")
    assert resp["HX-Redirect"] == "/"
    assert not ChatSession.objects.filter(pk=session.pk).exists() and not Message.objects.exists()


def test_sidebar_search_finds_sessions_by_message_text(auth_client, home):
    hit = _session_with({"role": "user", "content": "my kubernetes cluster is down"})
    ChatSession.objects.filter(pk=hit.pk).update(title="Cluster trouble")
    _session_with({"role": "user", "content": "baking bread"})
    body = auth_client.get("/c/sessions/", {"q": "kubernetes", "current": hit.pk}).content.decode()
    assert "Cluster trouble" in body and "<mark>" in body and "1 chat matching" in body
    assert "baking" not in body
    listing = auth_client.get("/c/sessions/").content.decode()
    assert "Cluster trouble" in listing and listing.count("session-link") == 2


def test_slash_endpoint_lists_enabled_skills_only(auth_client, home):
    for name in ("deploy-check", "old-way"):
        folder = home / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL.replace("deploy-check", name), encoding="utf-8")
    write_config(home, "skills:\n  disabled: [old-way]\n")
    data = auth_client.get("/api/skills/slash").json()
    assert data == {
        "skills": [{"name": "deploy-check", "description": "Check a deployment step by step", "category": ""}]
    }


def test_check_connection_reports_success(auth_client, llm):
    body = auth_client.post("/settings/connection/check/", {"place": "setup"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Connected" in body and "scripted-model" in body
    assert '<li data-step="system_role">System role: yes' in body  # the capability probe ran


def test_check_connection_shows_the_error(auth_client, home, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    write_config(home, "model:\n  max_retries: 0\n  timeout: 2\n")
    body = auth_client.post("/settings/connection/check/", HTTP_HX_REQUEST="true").content.decode()
    assert "Could not connect" in body


def test_chat_page_says_once_when_the_model_cannot_call_tools(auth_client, llm):
    from tests.fakellm import Reply
    from tests.wire.replay import uses
    from tests.wire.vllm import CASES

    session = chat_service.create_session()
    assert 'id="model-limits"' not in auth_client.get(f"/c/{session.pk}/").content.decode()
    refusal = next(c for c in CASES if c.refuses == "tools")
    llm.when(uses("tools"), Reply(raw=refusal.raw))
    agent = chat_service.AgentSession.open(session_id=session.pk, source="web")
    events = list(agent.run_turn("hello"))
    agent.close()
    frames = [f for f in map(event_frame, events) if f is not None]
    assert [f["type"] for f in frames].count("notice") == 1
    body = auth_client.get(f"/c/{session.pk}/").content.decode()
    assert 'id="model-limits"' in body and "This model cannot call tools" in body


def test_an_unknown_address_gets_a_page_with_the_navigation(auth_client, settings):
    settings.DEBUG = False
    resp = auth_client.get("/c/no-such-chat/")
    assert resp.status_code == 404
    body = resp.content.decode()
    assert 'nav aria-label="Main"' in body and "Back to the chat" in body and "/c/no-such-chat/" in body
