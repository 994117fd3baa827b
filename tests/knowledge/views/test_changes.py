"""Change log pages: list and filters, side-by-side diff, undo of one change (itself recorded)."""

from __future__ import annotations

import pytest

from knowledge import changelog
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, ReviewRun
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from knowledge.views.changes import entry_changes
from tests.knowledge.views.test_memory import HOSTILE, assert_inert

pytestmark = pytest.mark.django_db
AGENT = Provenance(actor="agent")


def mem(home, name="MEMORY.md"):
    return home / "memories" / name


def test_list_shows_who_when_target_session_and_review(auth_client, home):
    session = ChatSession.objects.create(title="Ops chat")
    run = ReviewRun.objects.create(session=session, prompt_kind="combined")
    MemoryStore().add(
        "memory", "Uses podman", Provenance(actor="review", session_id=session.pk, review_id=run.pk, message_id=7)
    )
    MemoryStore().add("user", "Name is Ada", Provenance(actor="user"))
    html = auth_client.get("/changes/").content.decode()
    assert "2 changes" in html
    assert f'href="/c/{session.pk}/#m7"' in html and f'href="/reviews/{run.pk}/"' in html
    assert "Ops chat" in html and "review" in html and "user" in html


def test_filters_by_kind_actor_and_review(auth_client, home):
    run = ReviewRun.objects.create(prompt_kind="memory")
    MemoryStore().add("memory", "A", Provenance(actor="review", review_id=run.pk))
    MemoryStore().add("memory", "B", AGENT)
    SkillStore().create("s1", "---\nname: s1\ndescription: d\n---\nbody\n", prov=AGENT)
    assert "1 change<" in auth_client.get(f"/changes/?review={run.pk}").content.decode()
    assert "1 change<" in auth_client.get("/changes/?kind=skill").content.decode()
    assert "2 changes" in auth_client.get("/changes/?actor=agent").content.decode()
    assert "0 changes" in auth_client.get("/changes/?review=abc").content.decode()


def test_memory_detail_lists_entries_added_removed_and_changed_without_separators(auth_client, home):
    MemoryStore().add("memory", "alpha", AGENT)
    MemoryStore().add("memory", "gone soon", AGENT)
    store = MemoryStore()
    store.apply(
        "memory",
        [
            {"action": "replace", "old_text": "alpha", "content": "alpha beta"},
            {"action": "remove", "old_text": "gone soon"},
            {"action": "add", "content": "brand new"},
        ],
        AGENT,
    )
    change = KnowledgeChange.objects.order_by("-id").first()
    html = auth_client.get(f"/changes/{change.pk}/").content.decode()
    assert "§" not in html
    assert 'class="entry-change entry-changed"' in html and "alpha beta" in html
    assert '<del class="entry-text">gone soon</del>' in html
    assert '<span class="badge good">added</span> <span class="entry-text">brand new</span>' in html


def test_entry_changes_pairs_replacements_and_keeps_the_rest_apart():
    before = "kept\n§\nuses docker daily\n§\nlikes tea"
    after = "kept\n§\nuses podman daily\n§\nwrites Rust\n§\nlives in Lyon"
    assert [(e.kind, e.before, e.after) for e in entry_changes(before, after)] == [
        ("changed", "uses docker daily", "uses podman daily"),
        ("removed", "likes tea", ""),
        ("added", "", "writes Rust"),
        ("added", "", "lives in Lyon"),
    ]


def test_skill_detail_shows_a_side_by_side_diff(auth_client, home):
    SkillStore().create("s1", "---\nname: s1\ndescription: d\n---\nold body\n", prov=AGENT)
    SkillStore().edit("s1", "---\nname: s1\ndescription: d\n---\nnew body\n", prov=AGENT)
    change = KnowledgeChange.objects.order_by("-id").first()
    html = auth_client.get(f"/changes/{change.pk}/").content.decode()
    assert '<td class="diff-left">old body</td>' in html and '<td class="diff-right">new body</td>' in html


def test_disabling_a_skill_says_so_instead_of_an_empty_diff(auth_client, home):
    SkillStore().create("s1", "---\nname: s1\ndescription: d\n---\nbody\n", prov=AGENT)
    SkillStore().disable("s1", prov=Provenance(actor="user"))
    change = KnowledgeChange.objects.order_by("-id").first()
    html = auth_client.get(f"/changes/{change.pk}/").content.decode()
    assert "Turned off: the skill is left out of the prompt" in html
    assert "No difference in text" not in html and "<dd>unchanged</dd>" in html


def test_undo_one_change_restores_the_file_byte_exactly_and_is_recorded(auth_client, home):
    mem(home).parent.mkdir(parents=True, exist_ok=True)
    mem(home).write_bytes("odd  shape\r\n§\nkept\n\n".encode())
    original = mem(home).read_bytes()
    MemoryStore().add("memory", "new fact", AGENT)
    change = KnowledgeChange.objects.filter(action="add").get()
    resp = auth_client.post(f"/changes/{change.pk}/undo/")
    assert resp.status_code == 302
    assert mem(home).read_bytes() == original
    undo = KnowledgeChange.objects.get(undoes=change)
    assert undo.actor == "user" and resp["Location"] == f"/changes/{undo.pk}/"
    html = auth_client.get(resp["Location"]).content.decode()
    assert f"Undid change #{change.pk}" in html
    assert f'href="/changes/{change.pk}/"' in html


def test_undo_a_skill_creation_removes_it(auth_client, home):
    SkillStore().create("tmp-skill", "---\nname: tmp-skill\ndescription: d\n---\nbody\n", prov=AGENT)
    change = KnowledgeChange.objects.get(action="create")
    auth_client.post(f"/changes/{change.pk}/undo/")
    assert not (home / "skills" / "tmp-skill").exists()
    resp = auth_client.post(f"/changes/{change.pk}/undo/", follow=True)
    assert "Nothing to undo" in resp.content.decode()


def test_undo_error_is_shown(auth_client, home):
    change = changelog.record(
        kind="skill", target="x", action="edit", prov=AGENT, before="a", after="b", path="../escape/SKILL.md"
    )
    resp = auth_client.post(f"/changes/{change.pk}/undo/", follow=True)
    assert "Undo failed" in resp.content.decode()


def test_unauthenticated_is_redirected(client, db):
    assert client.get("/changes/").status_code == 302
    assert client.post("/changes/1/undo/").status_code == 302


def test_hostile_change_rows_render_inertly(auth_client, home):
    text = "\n".join(HOSTILE)
    change = changelog.record(
        kind="memory", target="memory", action="add", prov=AGENT, before="", after=text, summary=text
    )
    for url in ("/changes/", f"/changes/{change.pk}/"):
        html = auth_client.get(url).content.decode()
        assert_inert(html)
        assert "alert(1)" in html
