"""Sources under an answer, at 1280 and 390 px in light and dark: the memory entry, the recalled
chat and the tool call are listed with their links, and "Not relevant" sends the entry to the inbox."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import SCREENSHOTS, LiveServer
from tests.browser.site_pages import _server_python
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_list import mode_page  # noqa: F401 - the fixture, at each width and theme

pytestmark = pytest.mark.browser

# A chat whose prompt holds a memory entry, and whose answer was given a recalled chat and a tool
# call (as a turn stores them, agent/chat/runner.py); prints the chat's id.
SEED = """
from foundation import config
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message
from knowledge.prompt import build_system_prompt
from knowledge.provenance import Provenance
MemoryStore().add("memory", "Wallaby {tag} deploys run on Fridays", Provenance(actor="user"))
past = ChatSession.objects.create(title="Wallaby outage {tag}", title_source="person")
asked = Message.objects.create(session=past, role="user", content="the wallaby outage")
s = ChatSession.objects.create(title="Wallaby sources {tag}", title_source="person",
                               system_prompt=build_system_prompt(config.get()))
Message.objects.create(session=s, role="user", content="When do wallaby {tag} deploys run?")
call = {"id": "call_w{tag}", "type": "function", "function": {"name": "skills_list", "arguments": "{}"}}
Message.objects.create(session=s, role="assistant", content="", tool_calls=[call])
Message.objects.create(session=s, role="tool", content='{"success": true}', tool_call_id="call_w{tag}",
                       tool_name="skills_list")
recalled = {"provider": "session_recall", "session_id": past.pk, "title": past.title,
            "message_id": asked.pk, "text": "<b>the wallaby</b> outage", "when": ""}
Message.objects.create(session=s, role="assistant", content="On Fridays.", sources=[recalled])
ChatSession.objects.filter(pk=s.pk).update(message_count=4)
print(s.pk)
"""


def test_sources_list_what_shaped_an_answer_and_send_one_to_the_inbox(
    mode_page: tuple[str, int, Page],  # noqa: F811 - the imported fixture
    daphne_server: LiveServer,
) -> None:
    mode, _width, page = mode_page
    tag = mode.replace("-", "")
    chat = _server_python(daphne_server, SEED.replace("{tag}", tag))
    page.goto(f"/c/{chat}/")
    page.wait_for_selector('#chat[data-connected="1"]')

    answer = page.locator(".msg-assistant").last
    opener = answer.get_by_role("button", name="Sources")
    opener.click()
    expect(opener).to_have_attribute("aria-expanded", "true")
    panel = page.locator(".sources-panel")
    entry = f"Wallaby {tag} deploys run on Fridays"
    expect(panel.get_by_role("link", name=entry)).to_have_attribute("href", re.compile(r"^/memory/#entry-memory-\d+$"))
    expect(panel.get_by_role("link", name=f"Wallaby outage {tag}")).to_be_visible()
    expect(panel.get_by_role("link", name="skills_list")).to_have_attribute("href", f"/c/{chat}/#tool-call_w{tag}")
    expect(panel.get_by_text("<b>the wallaby</b> outage")).to_be_visible()  # recalled text, as text
    problems = blocking_violations(page, f"sources open ({mode})")

    item = panel.locator(".source-item", has=page.get_by_role("link", name=entry))
    item.get_by_role("button", name="Not relevant").click()
    sent = page.locator(".sources-panel [role=status]")
    expect(sent).to_contain_text("Sent to the inbox")
    page.screenshot(path=str(SCREENSHOTS / f"chat-sources-{mode}.png"))
    problems += blocking_violations(page, f"sources sent ({mode})")

    page.locator(".sources-panel [role=status] a").click()
    expect(page.locator(".pending-item", has_text=entry).first).to_contain_text("Not relevant")
    assert not problems, "\n".join(problems)
