"""An answer's Sources: the memory entries and skills of its prompt, the past chats recalled for its
turn and the tools it called, each linked; "Not relevant" / "Wrong" sends one to the inbox."""

from __future__ import annotations

import re

import pytest

from agent.chat.runner import AgentSession
from agent.learning.providers import ProviderManager, SessionRecallProvider
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite
from knowledge.provenance import Provenance
from knowledge.skills import outcomes
from knowledge.skills.store import SkillStore
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)

ENTRY = "Prefers answers about the zephyrine cluster in short bullet lists"
SKILL = """---
name: zephyr-deploy
description: Deploy the zephyrine cluster step by step
---
# Deploy
1. Look at the logs.
"""


def _past_chat(title: str, text: str) -> tuple[ChatSession, Message]:
    s = ChatSession.objects.create(title=title, source="web")
    question = Message.objects.create(session=s, role="user", content=text)
    Message.objects.create(session=s, role="assistant", content="Roll it back with the runbook.")
    return s, question


def _turn(question: str, *replies: Reply) -> tuple[AgentSession, Message]:
    """One turn of a new chat (memory entry and skill in its prompt, session recall on)."""
    agent = AgentSession.open(source="web")
    recall = SessionRecallProvider(agent.session.pk)
    agent.providers = ProviderManager([recall], agent.session.pk)
    try:
        list(agent.run_turn(question))
    finally:
        agent.providers.shutdown_all()
    answer = Message.objects.filter(session=agent.session, role="assistant").exclude(content="").get()
    return agent, answer


@pytest.fixture
def learned(home, llm):
    MemoryStore().add("user", ENTRY, Provenance(actor="user"))
    SkillStore().create("zephyr-deploy", SKILL, prov=Provenance(actor="user"))
    return llm


def test_an_answer_lists_its_memory_entry_skill_recalled_chat_and_tool_with_links(learned, auth_client):
    past, past_question = _past_chat("Zephyrine outage", "The zephyrine cluster went down after the upgrade")
    learned.push(Reply(tool_calls=[{"name": "skills_list", "arguments": {}, "id": "call_s"}]))
    learned.push(Reply(text="Roll back the zephyrine upgrade."))
    agent, answer = _turn("What broke the zephyrine cluster?")
    tool_row = Message.objects.get(session=agent.session, role="tool")

    assert answer.sources and answer.sources[0]["session_id"] == past.pk  # kept with the answer
    resp = auth_client.get(f"/c/{agent.session.pk}/m/{answer.pk}/sources/", HTTP_HX_REQUEST="true")
    assert resp.status_code == 200
    body = resp.content.decode()
    index = MemoryStore().entries("user").index(ENTRY)
    assert f'href="/memory/#entry-user-{index}">{ENTRY}</a>' in body
    assert 'href="/skills/zephyr-deploy/">zephyr-deploy</a>' in body
    assert f'href="/c/{past.pk}/#m{past_question.pk}">Zephyrine outage</a>' in body
    assert f'href="/c/{agent.session.pk}/#tool-{tool_row.tool_call_id}">skills_list</a>' in body
    # Without htmx the same list is a page of its own.
    page = auth_client.get(f"/c/{agent.session.pk}/m/{answer.pk}/sources/").content.decode()
    assert "<h1>Where this answer came from</h1>" in page and "Zephyrine outage" in page
    # The chat page gives the tool card the anchor the list links to.
    assert f'id="tool-{tool_row.tool_call_id}"' in auth_client.get(f"/c/{agent.session.pk}/").content.decode()


def test_not_relevant_on_a_memory_entry_goes_to_the_inbox_and_approving_removes_it(learned, auth_client):
    learned.push(Reply(text="Here it is."))
    agent, answer = _turn("Tell me about the zephyrine cluster")
    url = f"/c/{agent.session.pk}/m/{answer.pk}/sources/"
    key = re.search(r'name="key" value="(memory:user:\d+)"', auth_client.get(url).content.decode())
    assert key is not None

    resp = auth_client.post(f"{url}feedback/", {"key": key[1], "verdict": "not_relevant"}, HTTP_HX_REQUEST="true")
    item = PendingWrite.objects.get()
    assert resp.status_code == 200 and f"as #{item.pk}" in resp.content.decode()
    inbox = auth_client.get("/pending/").content.decode()
    assert f'id="pending-{item.pk}"' in inbox and ENTRY in inbox and "Not relevant" in inbox
    assert ENTRY in MemoryStore().entries("user")  # nothing removed before the person approves

    auth_client.post(f"/pending/{item.pk}/approve/")
    item.refresh_from_db()
    assert item.status == "approved"
    assert ENTRY not in MemoryStore().entries("user")
    change = KnowledgeChange.objects.filter(kind="memory", target="user").latest("id")
    assert ENTRY in change.before and ENTRY not in change.after  # logged, so it can be undone


def test_wrong_on_a_skill_flags_it_needs_review_and_a_recalled_chat_stops_being_recalled(learned, auth_client):
    past, _ = _past_chat("Zephyrine outage", "The zephyrine cluster went down after the upgrade")
    learned.push(Reply(text="Roll back."))
    agent, answer = _turn("What broke the zephyrine cluster?")
    url = f"/c/{agent.session.pk}/m/{answer.pk}/sources/feedback/"
    auth_client.post(url, {"key": "skill:zephyr-deploy", "verdict": "wrong"})
    auth_client.post(url, {"key": "recall:0", "verdict": "not_relevant"})
    inbox = auth_client.get("/pending/").content.decode()
    assert "Approving flags the skill" in inbox and "Approving stops recalling the chat" in inbox
    assert "Zephyrine outage</a> into other chats" in inbox and "marked this skill &#x27;Wrong&#x27;" in inbox
    for item in PendingWrite.objects.all():
        auth_client.post(f"/pending/{item.pk}/approve/")
    assert set(PendingWrite.objects.values_list("status", flat=True)) == {"approved"}
    assert "zephyr-deploy" in outcomes.flagged_names()

    learned.push(Reply(text="Again."))
    _, again = _turn("The zephyrine cluster broke again?")
    recalled = {item["session_id"] for item in again.sources or []}
    assert past.pk not in recalled and agent.session.pk in recalled  # the chat turned down is not recalled


def test_a_source_not_of_this_answer_is_refused_with_a_reason(learned, auth_client):
    learned.push(Reply(text="Hi."))
    agent, answer = _turn("hello there")
    resp = auth_client.post(
        f"/c/{agent.session.pk}/m/{answer.pk}/sources/feedback/", {"key": "skill:nope", "verdict": "wrong"}
    )
    assert resp.status_code == 400 and "not among this answer" in resp.content.decode()
    assert not PendingWrite.objects.exists()


def test_recalled_text_is_shown_as_text(learned, auth_client):
    _past_chat('<img src=x onerror="alert(1)">Zephyrine', 'zephyrine <script>alert("x")</script> outage notes')
    learned.push(Reply(text="Noted."))
    agent, answer = _turn("zephyrine outage?")
    assert answer.sources
    body = auth_client.get(f"/c/{agent.session.pk}/m/{answer.pk}/sources/", HTTP_HX_REQUEST="true").content.decode()
    assert "<img src=x" not in body and "<script>alert" not in body
    assert "&lt;img src=x" in body
