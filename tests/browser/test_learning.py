"""Knowledge verification in a real browser: evidence on the memory page, 👍/👎 on answers, the
learned line with Undo, the "needs review" flag and the per-session prompt page."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.test_chat import fresh_chat, send, wait_idle
from tests.browser.test_curation import server_python, write_memory

pytestmark = pytest.mark.browser

# A session with one exchange; prints "<session id> <user message id> <answer id>".
EXCHANGE = """
s = ChatSession.objects.create(title={title!r}, system_prompt=build_system_prompt(hermes_config.get()))
from knowledge.models import Message
u = Message.objects.create(session=s, role="user", content={said!r})
a = Message.objects.create(session=s, role="assistant", content="Noted, compose it is.")
{more}
# Counted like the runner does, so "New chat" does not take this chat for an empty one.
ChatSession.objects.filter(pk=s.pk).update(message_count=Message.objects.filter(session=s).count())
print(s.pk, u.pk, a.pk)
"""
IMPORTS = "from knowledge.prompt import build_system_prompt\nfrom foundation import config as hermes_config\n"


def exchange(server: LiveServer, title: str, said: str, more: str = "") -> tuple[str, int, int]:
    out = server_python(server, IMPORTS + EXCHANGE.format(title=title, said=said, more=more))
    session_id, user_id, answer_id = out.split()
    return session_id, int(user_id), int(answer_id)


def test_memory_entry_shows_its_quote_and_the_link_opens_the_message_highlighted(page: Page, daphne_server):
    write_memory(daphne_server, "USER.md", [])
    filler = "\n".join(f"Message.objects.create(session=s, role='assistant', content='filler {i}')" for i in range(40))
    said = "For the record: I always deploy with docker compose."
    session_id, user_id, _ = exchange(daphne_server, "evidence chat", said, filler)
    server_python(
        daphne_server,
        f"prov = Provenance(actor='review', session_id={session_id!r}, evidence=(('deploy with docker compose', {user_id}),))\n"
        "print(MemoryStore().add('user', 'Deploys with docker compose', prov)['success'])",
    )
    page.goto("/memory/")
    quote = page.locator("#memory-user blockquote.evidence")
    expect(quote).to_contain_text("deploy with docker compose")
    quote.locator("a.evidence-link").click()
    page.wait_for_url(f"**/c/{session_id}/#m{user_id}")
    target = page.locator(f"#m{user_id}")
    expect(target).to_have_class("msg msg-user highlight")
    expect(target).to_be_in_viewport()


def test_thumbs_down_on_a_streamed_answer_is_saved_and_shown_after_reload(page: Page, llm, daphne_server):
    fresh_chat(page)
    send(page, "deploy the app please")
    wait_idle(page, 1)
    answer = page.locator(".msg-assistant").last
    answer.locator("button.feedback-bad").click()
    expect(answer.locator("button.feedback-bad")).to_have_attribute("aria-pressed", "true")
    message_id = answer.get_attribute("data-message-id")
    assert message_id
    rows = daphne_server.query("SELECT verdict FROM knowledge_answerfeedback WHERE message_id = ?", int(message_id))
    assert rows == [("bad",)]
    page.reload()
    stored = page.locator(f"#m{message_id}")
    expect(stored.locator("button.feedback-bad")).to_have_attribute("aria-pressed", "true")
    stored.locator("button.feedback-good").click()
    expect(stored.locator("button.feedback-good")).to_have_attribute("aria-pressed", "true")
    rows = daphne_server.query("SELECT verdict FROM knowledge_answerfeedback WHERE message_id = ?", int(message_id))
    assert rows == [("good",)]


def test_learned_line_under_the_answer_undoes_a_change(page: Page, daphne_server):
    write_memory(daphne_server, "MEMORY.md", [])
    more = (
        "r = ReviewRun.objects.create(session=s, prompt_kind='memory', status='done', upto_message_id=a.pk, "
        "summary='Memory updated')\n"
        "prov = Provenance(actor='review', session_id=s.pk, review_id=r.pk)\n"
        "MemoryStore().add('memory', 'Staging host is stage-7', prov)\n"
        "PendingWrite.objects.create(kind='memory', tool_name='memory', arguments={}, session=s, review=r, "
        "unsupported=True, reason='No evidence was given')\n"
    )
    session_id, _, answer_id = exchange(daphne_server, "learned chat", "The staging host is stage-7.", more)
    page.goto(f"/c/{session_id}/")
    line = page.locator(f"#m{answer_id} + .learned-line")
    expect(line).to_contain_text("💾")
    expect(line.locator(".learned-waiting")).to_have_text("1 waiting for approval")
    assert "stage-7" in (daphne_server.home / "memories" / "MEMORY.md").read_text()
    line.locator("button.learned-undo").click()
    page.wait_for_url(f"**/c/{session_id}/#m{answer_id}")
    expect(page.locator(".learned-change.undone")).to_have_count(1)
    assert "stage-7" not in (daphne_server.home / "memories" / "MEMORY.md").read_text()


def test_skill_with_three_bad_outcomes_is_flagged_needs_review(page: Page, daphne_server):
    daphne_server.write_skill("flaky-deploy", "Deploy the flaky way", "# Steps\n1. Hope.")
    daphne_server.write_skill("steady-deploy", "Deploy the steady way", "# Steps\n1. Check.")
    server_python(
        daphne_server,
        "from knowledge.models import SkillOutcome\n"
        "for i in range(3):\n"
        "    SkillOutcome.objects.create(name='flaky-deploy', via='slash', outcome='bad', detail=f'wrong host {i}')\n"
        "SkillOutcome.objects.create(name='steady-deploy', via='view', outcome='ok')\n"
        "print('ok')",
    )
    page.goto("/skills/")
    flaky = page.locator('tr[data-skill="flaky-deploy"]')
    expect(flaky.locator(".needs-review")).to_have_text("needs review")
    expect(flaky.locator(".outcomes")).to_contain_text("3 uses · 0% ok")
    steady = page.locator('tr[data-skill="steady-deploy"]')
    expect(steady.locator(".outcomes")).to_contain_text("1 use · 100% ok")
    expect(steady.locator(".needs-review")).to_have_count(0)


def test_prompt_page_shows_each_block_against_its_budget(page: Page, daphne_server):
    write_memory(daphne_server, "MEMORY.md", ["Staging host is stage-7"])
    write_memory(daphne_server, "USER.md", ["Prefers short answers"])
    session_id, _, _ = exchange(daphne_server, "prompt chat", "hello")
    page.goto(f"/c/{session_id}/")
    page.click("a.prompt-link")
    page.wait_for_url(f"**/c/{session_id}/prompt/")
    memory = page.locator('section.prompt-block[data-block="Memory"]')
    expect(memory.locator(".prompt-text")).to_have_text("Staging host is stage-7")
    expect(memory.locator(".usage")).to_contain_text(f"{len('Staging host is stage-7')}/2200 chars")
    expect(page.locator('section.prompt-block[data-block="User profile"] .usage')).to_contain_text("/1375 chars")
    expect(page.locator('section.prompt-block[data-block="Identity and instructions"]')).to_contain_text("Hermes")
