"""Skills pages: list, search, filters, create, edit with validation, toggle, delete, bulk, inert rendering."""

from __future__ import annotations

import pytest

from foundation import config as hermes_config
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from tests.knowledge.views.test_memory import HOSTILE, HX, assert_inert

pytestmark = pytest.mark.django_db


def skill_md(name, description="Does things", body="# Steps\n\n1. Do it.\n"):
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}"


@pytest.fixture
def store(home):
    s = SkillStore()
    s.create(
        "docker-debug",
        skill_md("docker-debug", "Debug compose stacks"),
        category="devops",
        prov=Provenance(actor="review"),
    )
    s.create("tea-brewing", skill_md("tea-brewing", "Brew green tea"), prov=Provenance(actor="agent"))
    return s


def skill_file(home, rel):
    return home / "skills" / rel / "SKILL.md"


def test_list_shows_category_description_origin_and_usage(auth_client, store):
    SkillStore().record_use("tea-brewing")
    html = auth_client.get("/skills/").content.decode()
    assert "docker-debug" in html and "devops" in html and "Debug compose stacks" in html
    assert "review" in html and "agent" in html
    assert "0 / 1" in html  # views / uses of tea-brewing


def test_search_and_filters_return_rows_for_htmx(auth_client, store):
    resp = auth_client.get("/skills/?q=compose", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="skill-rows")
    html = resp.content.decode()
    assert "<table" not in html and "docker-debug" in html and "tea-brewing" not in html
    html = auth_client.get("/skills/?category=devops").content.decode()
    assert 'data-skill="docker-debug"' in html and 'data-skill="tea-brewing"' not in html
    SkillStore().disable("tea-brewing")
    html = auth_client.get("/skills/?status=disabled").content.decode()
    assert 'data-skill="tea-brewing"' in html and 'data-skill="docker-debug"' not in html


def test_broken_skill_is_flagged_with_its_error(auth_client, home, store):
    path = home / "skills" / "half-done" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: half-done\n---\nno description here\n", encoding="utf-8")
    html = auth_client.get("/skills/").content.decode()
    assert "broken" in html and "description&#x27; is required" in html
    detail = auth_client.get("/skills/half-done/").content.decode()
    assert "description&#x27; is required" in detail and "no description here" in detail


def test_a_skill_without_frontmatter_is_used_with_a_note(auth_client, home, store):
    path = home / "skills" / "release-notes" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("Write the notes from merged pull requests.\n", encoding="utf-8")
    html = auth_client.get("/skills/").content.decode()
    assert 'data-skill="release-notes"' in html and "Write the notes from merged pull requests." in html
    detail = auth_client.get("/skills/release-notes/").content.decode()
    assert "Used as it is, but: SKILL.md has no frontmatter" in detail


def test_create_by_hand(auth_client, home):
    resp = auth_client.post(
        "/skills/new/",
        {"name": "git-bisect", "category": "dev", "content": skill_md("git-bisect").replace("\n", "\r\n")},
    )
    assert resp.status_code == 302 and resp["Location"] == "/skills/git-bisect/"
    assert skill_file(home, "dev/git-bisect").read_text(encoding="utf-8") == skill_md("git-bisect")
    assert SkillUsage.objects.get(name="git-bisect").created_by == "user"
    assert KnowledgeChange.objects.filter(target="git-bisect", actor="user", action="create").exists()


def test_a_skill_pasted_with_a_description_over_the_limit_is_created_with_a_notice(auth_client, home):
    # As an import: Anthropic's claude-api skill has a 1,068-character description.
    description = "Reference for the Example API. " * 34 + "It ends here."
    assert len(description) > 1024
    text = skill_md("example-api", description)
    resp = auth_client.post("/skills/new/", {"name": "example-api", "content": text})
    assert resp.status_code == 302 and resp["Location"] == "/skills/example-api/"
    assert skill_file(home, "example-api").read_text(encoding="utf-8") == text
    detail = auth_client.get("/skills/example-api/").content.decode()
    assert f"The description is {len(description):,} characters, over the Agent Skills limit of 1,024" in detail
    assert SkillStore().get("example-api").usable


def test_create_with_bad_frontmatter_shows_the_reason(auth_client, home):
    resp = auth_client.post(
        "/skills/new/", {"name": "oops", "content": "---\nname: other\ndescription: x\n---\nbody\n"}
    )
    html = resp.content.decode()
    assert resp.status_code == 200
    assert "Not created" in html and "must be equal" in html
    assert "name: other" in html  # the draft stays
    assert not (home / "skills" / "oops").exists()


def test_detail_renders_markdown_files_and_history(auth_client, home, store):
    store.write_file("tea-brewing", "references/temps.md", "80C", prov=Provenance(actor="user"))
    html = auth_client.get("/skills/tea-brewing/").content.decode()
    assert "<h1>Steps</h1>" in html
    assert "references/temps.md" in html
    assert "write_file" in html and "create" in html  # history
    html = auth_client.get("/skills/tea-brewing/?file=references/temps.md").content.decode()
    assert "80C" in html


def test_edit_saves_through_the_store(auth_client, home, store):
    new = skill_md("tea-brewing", "Brew green tea well", "# Steps\n\n1. 80C water.\n")
    resp = auth_client.post("/skills/tea-brewing/edit/", {"content": new}, **HX)
    assert resp.status_code == 200 and resp["HX-Redirect"] == "/skills/tea-brewing/"
    assert skill_file(home, "tea-brewing").read_text(encoding="utf-8") == new
    assert KnowledgeChange.objects.filter(target="tea-brewing", action="edit", actor="user").exists()


def test_edit_with_broken_frontmatter_is_refused_with_the_reason(auth_client, home, store):
    before = skill_file(home, "tea-brewing").read_bytes()
    broken = "---\nname: tea-brewing\ndescription: [unclosed\n---\nbody\n"
    resp = auth_client.post("/skills/tea-brewing/edit/", {"content": broken}, **HX)
    html = resp.content.decode()
    assert resp.status_code == 200
    assert 'id="skill-editor"' in html and "Not saved" in html and "YAML error" in html
    assert "[unclosed" in html
    assert skill_file(home, "tea-brewing").read_bytes() == before
    resp = auth_client.post("/skills/tea-brewing/edit/", {"content": "---\ndescription: x\n---\nbody\n"})
    assert "&#x27;name&#x27; is required" in resp.content.decode()
    assert skill_file(home, "tea-brewing").read_bytes() == before


def test_disable_enable_and_delete(auth_client, home, store):
    assert auth_client.post("/skills/tea-brewing/toggle/").status_code == 302
    hermes_config.reset()
    assert "tea-brewing" in hermes_config.get().skills.disabled
    assert "tea-brewing" not in [s["name"] for s in auth_client.get("/api/skills/slash").json()["skills"]]
    auth_client.post("/skills/tea-brewing/toggle/")
    hermes_config.reset()
    assert "tea-brewing" not in hermes_config.get().skills.disabled
    resp = auth_client.post("/skills/tea-brewing/delete/")
    assert resp.status_code == 302 and resp["Location"] == "/skills/"
    assert not (home / "skills" / "tea-brewing").exists()
    assert auth_client.get("/skills/tea-brewing/").status_code == 404


def test_bulk_disable_enable_delete(auth_client, home, store):
    names = {"names": ["docker-debug", "tea-brewing"]}
    auth_client.post("/skills/bulk/", {**names, "action": "disable"})
    assert SkillStore().available() == []
    resp = auth_client.post("/skills/bulk/", {**names, "action": "enable"}, follow=True)
    assert "Enabled 2 skill(s)" in resp.content.decode()
    assert len(SkillStore().available()) == 2
    resp = auth_client.post("/skills/bulk/", {"names": ["tea-brewing", "ghost"], "action": "delete"}, follow=True)
    html = resp.content.decode()
    assert "ghost: Skill &#x27;ghost&#x27; not found" in html and "Deleted 1 skill(s): tea-brewing" in html
    assert [s.name for s in SkillStore().list()] == ["docker-debug"]


def test_bulk_without_selection_explains(auth_client, store):
    resp = auth_client.post("/skills/bulk/", {"action": "delete"}, follow=True)
    assert "Pick one or more skills" in resp.content.decode()


def test_unauthenticated_is_redirected(client, db):
    for url in ("/skills/", "/skills/new/", "/skills/x/"):
        assert client.get(url).status_code == 302


def test_hostile_skill_content_renders_inertly(auth_client, home):
    body = "\n\n".join(HOSTILE) + "\n"
    s = SkillStore()
    s.create(
        "evil", skill_md("evil", "<script>alert(1)</script> <img src=x onerror=alert(1)>", body), prov=Provenance()
    )
    s.write_file("evil", "references/x.md", body, prov=Provenance())
    path = home / "skills" / "broken-evil" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(body, encoding="utf-8")
    for url in ("/skills/", "/skills/evil/", "/skills/evil/?file=references/x.md", "/skills/broken-evil/"):
        html = auth_client.get(url).content.decode()
        assert_inert(html)
        assert "alert(1)" in html  # shown as text
    resp = auth_client.post("/skills/evil/edit/", {"content": body}, **HX)
    assert_inert(resp.content.decode())


def test_a_bulk_action_refused_comes_back_with_its_error_and_the_ticks(auth_client, home, store):
    resp = auth_client.post("/skills/bulk/", {"names": ["tea-brewing"], "action": "publish"})
    html = resp.content.decode()
    assert resp.status_code == 400
    assert '<p class="error" role="alert" id="bulk-error">Pick one or more skills and an action.</p>' in html
    assert 'value="tea-brewing" form="skills-bulk" checked' in html
    assert 'value="docker-debug" form="skills-bulk" aria-label' in html
    assert len(SkillStore().available()) == 2
