"""Review runs and the approval inbox: list, detail, undo of a whole review, approve/edit/reject/bulk."""

from __future__ import annotations

import json

import pytest

from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, PendingWrite, ReviewRun
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from tests.knowledge.views.test_memory import HOSTILE, assert_inert

pytestmark = pytest.mark.django_db
USER = Provenance(actor="user")


def skill_md(name, description="d", body="body\n"):
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


def mem(home, name):
    return home / "memories" / name


@pytest.fixture
def review(home):
    """A review that wrote to both memory files and two skills, after some user content existed."""
    session = ChatSession.objects.create(title="Deploy chat")
    MemoryStore().add("memory", "Project uses make", USER)
    MemoryStore().add("user", "Name is Ada", USER)
    SkillStore().create("deploy", skill_md("deploy"), prov=USER)
    run = ReviewRun.objects.create(
        session=session,
        prompt_kind="combined",
        status="done",
        summary="💾 Memory updated · User profile updated · Skill 'docker-debug' created",
        prompt_tokens=900,
        completion_tokens=80,
        duration_ms=1234,
    )
    prov = Provenance(actor="review", review_id=run.pk, session_id=session.pk)
    MemoryStore().add("memory", "Deploys go through CI", prov)
    MemoryStore().replace("user", "Name is Ada", "Name is Ada; prefers short answers", prov)
    SkillStore().create("docker-debug", skill_md("docker-debug"), prov=prov)
    SkillStore().patch("deploy", "body", "better body", prov=prov)
    return run


def test_list_shows_when_session_prompt_changes_tokens_duration(auth_client, review):
    html = auth_client.get("/reviews/").content.decode()
    assert "Deploy chat" in html and "combined" in html
    assert "User profile updated" in html and "900 + 80" in html and "1234 ms" in html
    assert "docker-debug" in html


def test_detail_lists_its_changes(auth_client, review):
    html = auth_client.get(f"/reviews/{review.pk}/").content.decode()
    assert "Undo everything this review did" in html
    assert html.count('class="change-row actor-review"') == 4


def test_undo_review_restores_both_files_and_the_skills_exactly(auth_client, home, review):
    first = {c.target: c for c in KnowledgeChange.objects.filter(review=review).order_by("id")}
    expected = {"MEMORY.md": first["memory"].before, "USER.md": first["user"].before}
    deploy_before = first["deploy"].before
    resp = auth_client.post(f"/reviews/{review.pk}/undo/", follow=True)
    assert "Undid review" in resp.content.decode()
    for name, text in expected.items():
        assert mem(home, name).read_bytes() == text.encode()
    assert mem(home, "MEMORY.md").read_text(encoding="utf-8") == "Project uses make"
    assert mem(home, "USER.md").read_text(encoding="utf-8") == "Name is Ada"
    assert not (home / "skills" / "docker-debug").exists()
    assert (home / "skills" / "deploy" / "SKILL.md").read_text(encoding="utf-8") == deploy_before
    assert KnowledgeChange.objects.filter(action="undo", actor="user").count() == 4


def test_unauthenticated_is_redirected(client, db):
    for url in ("/reviews/", "/pending/", "/reviews/1/"):
        assert client.get(url).status_code == 302


def stage(kind, args, review=None):
    tool = "memory" if kind == "memory" else "skill_manage"
    return PendingWrite.objects.create(
        kind=kind, tool_name=tool, arguments=args, review=review, session=review.session if review else None
    )


@pytest.fixture
def run(home):
    return ReviewRun.objects.create(session=ChatSession.objects.create(title="s"), prompt_kind="memory")


def test_inbox_previews_memory_and_skill_writes_with_count(auth_client, home, run):
    SkillStore().create("deploy", skill_md("deploy", body="step one\n"), prov=USER)
    stage("memory", {"target": "user", "action": "replace", "old_text": "Ada", "content": "Ada Lovelace"}, run)
    stage("skill", {"action": "edit", "name": "deploy", "content": skill_md("deploy", body="step two\n")}, run)
    html = auth_client.get("/pending/").content.decode()
    assert 'id="pending-count">2<' in html
    assert "old_text:" in html and "Ada Lovelace" in html
    assert '<td class="diff-left">step one</td>' in html and '<td class="diff-right">step two</td>' in html


def test_held_writes_show_why_they_wait(auth_client, home, run):
    args = {"target": "user", "action": "add", "content": "Prefers 2-space indents"}
    reason = "Conflict: it is about the same thing as the user entry 'Prefers 4-space indents' and says something else."
    PendingWrite.objects.create(
        kind="memory",
        tool_name="memory",
        arguments=args,
        review=run,
        unsupported=True,
        reason=reason,
        hold_kind="conflict",
    )
    skill = {"action": "create", "name": "deploy", "content": skill_md("deploy")}
    PendingWrite.objects.create(
        kind="skill",
        tool_name="skill_manage",
        arguments=skill,
        review=run,
        unsupported=True,
        reason="Untested: nothing in the conversation shows these steps ran and worked.",
        hold_kind="untested",
    )
    html = auth_client.get("/pending/").content.decode()
    # The badge is the kind's label; the reason follows in its own sentences.
    assert '<span class="badge bad">Conflict</span>' in html and "Prefers 4-space indents" in html
    assert '<span class="badge bad">Not shown to work</span>' in html
    assert "Nothing in the conversation shows these steps ran and worked." in html


def test_approve_applies_with_the_reviews_provenance(auth_client, home, run):
    item = stage("memory", {"target": "memory", "action": "add", "content": "Uses podman"}, run)
    resp = auth_client.post(f"/pending/{item.pk}/approve/", follow=True)
    assert "Approved #" in resp.content.decode()
    assert mem(home, "MEMORY.md").read_text(encoding="utf-8") == "Uses podman"
    item.refresh_from_db()
    assert item.status == "approved" and item.decided_at is not None and json.loads(item.result)["success"]
    change = KnowledgeChange.objects.get()
    assert (change.actor, change.review_id, change.session_id) == ("user", run.pk, run.session_id)
    # a second approval (another tab) does nothing
    resp = auth_client.post(f"/pending/{item.pk}/approve/", follow=True)
    assert "already decided" in resp.content.decode()
    assert KnowledgeChange.objects.count() == 1


def test_edit_then_approve(auth_client, home, run):
    item = stage("memory", {"target": "user", "action": "add", "content": "Likes tea"}, run)
    auth_client.post(f"/pending/{item.pk}/approve/", {"field": "content", "value": "Likes green tea\r\nand jasmine"})
    assert mem(home, "USER.md").read_text(encoding="utf-8") == "Likes green tea\nand jasmine"
    item.refresh_from_db()
    assert item.arguments["content"] == "Likes green tea\nand jasmine"
    skill = stage("skill", {"action": "create", "name": "brew", "content": skill_md("brew")}, run)
    args = {"action": "create", "name": "brew", "content": skill_md("brew", body="edited\n"), "category": "kitchen"}
    auth_client.post(f"/pending/{skill.pk}/approve/", {"arguments": json.dumps(args)})
    assert (home / "skills" / "kitchen" / "brew" / "SKILL.md").read_text(encoding="utf-8").endswith("edited\n")
    bad = stage("memory", {"target": "user", "action": "add", "content": "x"}, run)
    resp = auth_client.post(f"/pending/{bad.pk}/approve/", {"arguments": "{not json"}, follow=True)
    assert "not valid JSON" in resp.content.decode()
    bad.refresh_from_db()
    assert bad.status == "pending"


def test_failed_approval_is_recorded_with_the_error(auth_client, home, run):
    item = stage("memory", {"target": "memory", "action": "remove", "old_text": "nothing like this"}, run)
    resp = auth_client.post(f"/pending/{item.pk}/approve/", follow=True)
    assert "could not be applied" in resp.content.decode()
    item.refresh_from_db()
    assert item.status == "failed" and "No memory entry contains" in item.result


def test_reject_writes_nothing(auth_client, home, run):
    item = stage("memory", {"target": "memory", "action": "add", "content": "Nope"}, run)
    auth_client.post(f"/pending/{item.pk}/reject/")
    item.refresh_from_db()
    assert item.status == "rejected" and item.decided_at is not None
    assert not mem(home, "MEMORY.md").exists()


def test_bulk_approve_and_reject(auth_client, home, run):
    a = stage("memory", {"target": "memory", "action": "add", "content": "One"}, run)
    b = stage("memory", {"target": "memory", "action": "add", "content": "Two"}, run)
    c = stage("memory", {"target": "memory", "action": "add", "content": "Three"}, run)
    auth_client.post("/pending/decide/", {"action": "approve", "ids": [a.pk, b.pk]})
    auth_client.post("/pending/decide/", {"action": "reject", "ids": [c.pk]})
    assert mem(home, "MEMORY.md").read_text(encoding="utf-8") == "One\n§\nTwo"
    assert [p.status for p in PendingWrite.objects.order_by("id")] == ["approved", "approved", "rejected"]
    html = auth_client.get("/pending/").content.decode()
    assert 'id="pending-count">0<' in html and "Recently decided" in html


def test_hostile_content_renders_inertly(auth_client, home, run):
    text = "\n".join(HOSTILE)
    ReviewRun.objects.filter(pk=run.pk).update(summary=text, error=text)
    stage("memory", {"target": "memory", "action": "add", "content": text}, run)
    stage("skill", {"action": "create", "name": "evil", "content": skill_md("evil", body=text + "\n")}, run)
    for url in ("/reviews/", f"/reviews/{run.pk}/", "/pending/"):
        html = auth_client.get(url).content.decode()
        assert_inert(html)
        assert "alert(1)" in html


def test_a_no_op_approval_says_nothing_needed_saving_in_plain_words(auth_client, home, run):
    MemoryStore().add("memory", "Uses podman", USER)
    item = stage("memory", {"target": "memory", "action": "add", "content": "Uses podman"}, run)
    resp = auth_client.post(f"/pending/{item.pk}/approve/", follow=True)
    html = resp.content.decode()
    assert "Approved, but there was nothing to save (Entry already exists; nothing saved)." in html
    assert '<span class="badge warn">no change</span>' in html
    assert '"success"' not in html and "{&quot;" not in html  # no raw JSON anywhere on the page
    html = auth_client.get(f"/reviews/{run.pk}/").content.decode()
    assert "no change" in html and "&quot;success&quot;" not in html


def test_nav_counts_waiting_writes_and_the_pending_page_is_the_current_one(auth_client, home, run):
    assert 'id="pending-badge"' not in auth_client.get("/memory/").content.decode()
    stage("memory", {"target": "memory", "action": "add", "content": "One"}, run)
    stage("memory", {"target": "memory", "action": "add", "content": "Two"}, run)
    assert (
        'title="2 writes waiting for your approval">Inbox <span class="nav-badge" id="pending-badge" aria-hidden="true">2<'
        in auth_client.get("/memory/").content.decode()
    )
    html = auth_client.get("/pending/").content.decode()
    assert 'href="/pending/" aria-current="page"' in html and 'href="/reviews/" aria-current' not in html
