"""SkillStore: create, edit, patch, supporting files, disable/enable, usage, index."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from foundation import config as hermes_config
from knowledge import undo as knowledge_undo
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.format import SkillError, SkillFormatError
from knowledge.skills.store import INDEX_INSTRUCTION, SkillStore
from tests.conftest import write_config
from tests.hermes_home import HERMES_CONFIG
from tests.knowledge.skills.helpers import skill_md


@pytest.fixture
def store(home: Path) -> SkillStore:
    return SkillStore(hermes_config.get())


# ----- create / edit / patch ---------------------------------------------------------------------


@pytest.mark.django_db
def test_create_writes_skill_and_records_change(store: SkillStore, home: Path) -> None:
    path = store.create("deploy", skill_md("deploy"), category="ops", prov=Provenance(actor="review"))
    assert path == home / "skills" / "ops" / "deploy" / "SKILL.md"
    assert path.read_text() == skill_md("deploy")
    assert [(s.name, s.category, s.enabled, s.error) for s in store.list()] == [("deploy", "ops", True, "")]
    change = KnowledgeChange.objects.get()
    assert (change.kind, change.target, change.action, change.actor) == ("skill", "deploy", "create", "review")
    assert change.path == "ops/deploy/SKILL.md"
    assert (change.before, change.after, change.existed_before, change.exists_after) == (
        "",
        skill_md("deploy"),
        False,
        True,
    )
    assert SkillUsage.objects.get(name="deploy").created_by == "review"
    # atomic write leaves no temp files behind
    assert sorted(p.name for p in path.parent.iterdir()) == ["SKILL.md"]


@pytest.mark.django_db
def test_create_name_is_unique_across_categories(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"), category="ops")
    with pytest.raises(SkillError, match="already exists in category 'ops'"):
        store.create("deploy", skill_md("deploy"))
    with pytest.raises(SkillError, match="already exists"):
        store.create("deploy", skill_md("deploy"), category="web")
    assert len(store.list()) == 1


@pytest.mark.django_db
def test_create_refuses_invalid_content_and_writes_nothing(store: SkillStore, home: Path) -> None:
    with pytest.raises(SkillFormatError, match="'description' is required"):
        store.create("deploy", "---\nname: deploy\n---\nbody\n")
    assert not (home / "skills" / "deploy").exists()
    assert KnowledgeChange.objects.count() == 0


@pytest.mark.django_db
def test_create_with_another_frontmatter_name_is_listed_by_it_in_the_folder_given(
    store: SkillStore, home: Path
) -> None:
    # As Hermes Agent creates it: the folder is the name given, the listing the frontmatter's.
    store.create("deploy", skill_md("ship-it"), category="web")
    assert (home / "skills" / "web" / "deploy" / "SKILL.md").read_text() == skill_md("ship-it")
    (info,) = store.list()
    assert info.name == "ship-it" and info.usable and "its folder is 'deploy'" in info.warning
    assert store.get("deploy") == info == store.get("ship-it")
    with pytest.raises(SkillError, match="'deploy' already exists"):
        store.create("deploy", skill_md("deploy"))
    with pytest.raises(SkillError, match="'ship-it' already exists"):
        store.create("other", skill_md("ship-it"))


@pytest.mark.django_db
def test_create_refuses_a_category_that_is_a_skill(store: SkillStore) -> None:
    store.create("ops", skill_md("ops"))
    with pytest.raises(SkillError, match="'ops' is a skill, not a category"):
        store.create("deploy", skill_md("deploy"), category="ops")


@pytest.mark.django_db
def test_edit_rewrites_and_logs_before_after(store: SkillStore) -> None:
    path = store.create("deploy", skill_md("deploy"))
    new = skill_md("deploy", description="Deploys safely", body="Use blue/green.\n")
    store.edit("deploy", new, prov=Provenance(actor="agent"))
    assert path.read_text() == new
    change = KnowledgeChange.objects.filter(action="edit").get()
    assert (change.before, change.after, change.actor) == (skill_md("deploy"), new, "agent")


@pytest.mark.django_db
def test_edit_with_invalid_content_leaves_file_unchanged(store: SkillStore) -> None:
    path = store.create("deploy", skill_md("deploy"))
    with pytest.raises(SkillFormatError, match="body is empty"):
        store.edit("deploy", "---\nname: deploy\ndescription: d\n---\n")
    with pytest.raises(SkillError, match="not found"):
        store.edit("ghost", skill_md("ghost"))
    assert path.read_text() == skill_md("deploy")


@pytest.mark.django_db
def test_patch_replaces_a_unique_string(store: SkillStore) -> None:
    path = store.create("deploy", skill_md("deploy", body="Run make.\nThen check.\n"))
    store.patch("deploy", "Run make.", "Run make deploy.")
    assert "Run make deploy.\nThen check." in path.read_text()
    assert KnowledgeChange.objects.filter(action="patch").count() == 1


@pytest.mark.django_db
def test_patch_requires_unique_match_unless_replace_all(store: SkillStore) -> None:
    path = store.create("deploy", skill_md("deploy", body="step\nstep\nstep\n"))
    with pytest.raises(SkillError, match="appears 3 times"):
        store.patch("deploy", "step", "STEP")
    assert path.read_text().count("step") == 3
    with pytest.raises(SkillError, match="not found"):
        store.patch("deploy", "absent", "x")
    store.patch("deploy", "step", "STEP", replace_all=True)
    assert path.read_text().count("STEP") == 3


@pytest.mark.django_db
def test_patch_that_breaks_frontmatter_is_refused(store: SkillStore) -> None:
    path = store.create("deploy", skill_md("deploy"))
    with pytest.raises(SkillError, match="would break SKILL.md.*'description' is required"):
        store.patch("deploy", "description: Does the thing\n", "")
    with pytest.raises(SkillError, match="must be equal"):
        store.patch("deploy", "name: deploy", "name: renamed")
    assert path.read_text() == skill_md("deploy")
    assert not KnowledgeChange.objects.filter(action="patch").exists()


@pytest.mark.django_db
def test_patch_a_supporting_file(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"))
    f = store.write_file("deploy", "references/api.md", "GET /v1\n")
    store.patch("deploy", "/v1", "/v2", file_path="references/api.md")
    assert f.read_text() == "GET /v2\n"


# ----- supporting files ------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("sub", ["references", "templates", "scripts", "assets"])
def test_write_and_remove_file_under_allowed_folders(store: SkillStore, sub: str) -> None:
    store.create("deploy", skill_md("deploy"))
    path = store.write_file("deploy", f"{sub}/deep/x.txt", "hello")
    assert path.read_text() == "hello"
    assert store.files("deploy") == [f"{sub}/deep/x.txt"]
    created = KnowledgeChange.objects.get(action="write_file")
    assert (created.path, created.existed_before, created.after) == (f"deploy/{sub}/deep/x.txt", False, "hello")
    store.remove_file("deploy", f"{sub}/deep/x.txt")
    assert not path.exists()
    assert not (path.parent.parent).exists()  # emptied folders are tidied away
    removed = KnowledgeChange.objects.get(action="remove_file")
    assert (removed.before, removed.exists_after) == ("hello", False)


@pytest.mark.django_db
@pytest.mark.parametrize("rel", ["LICENSE.txt", "forms.md", "reference/api.md", "examples/a/b.md", "Scripts/x.sh"])
def test_write_file_keeps_any_file_of_the_skill_folder(store: SkillStore, rel: str) -> None:
    store.create("deploy", skill_md("deploy"))
    assert store.write_file("deploy", rel, "x").read_text() == "x"
    assert store.files("deploy") == [rel]
    store.remove_file("deploy", rel)
    assert store.files("deploy") == []


@pytest.mark.django_db
def test_skill_md_is_not_written_as_a_file(store: SkillStore) -> None:
    path = store.create("deploy", skill_md("deploy"))
    with pytest.raises(SkillError, match="SKILL.md is changed with edit or patch"):
        store.write_file("deploy", "SKILL.md", "x")
    with pytest.raises(SkillError, match="SKILL.md is changed with edit or patch"):
        store.remove_file("deploy", "SKILL.md")
    assert path.read_text() == skill_md("deploy")


@pytest.mark.django_db
def test_binary_file_is_stored_byte_exactly_and_undone(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"))
    data = bytes(range(256)) * 8
    path = store.write_bytes("deploy", "fonts/x.ttf", data)
    assert path.read_bytes() == data
    change = KnowledgeChange.objects.get(action="write_file")
    assert change.after == "[binary file, 2,048 bytes]"
    knowledge_undo.undo(change)
    assert not path.exists()


@pytest.mark.django_db
def test_supporting_file_size_limit(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"))
    store.write_file("deploy", "assets/ok.txt", "x" * (1024 * 1024))
    with pytest.raises(SkillError, match="limited to 1,048,576"):
        store.write_file("deploy", "assets/big.txt", "x" * (1024 * 1024 + 1))
    assert store.files("deploy") == ["assets/ok.txt"]


@pytest.mark.django_db
def test_remove_missing_file_is_an_error(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"))
    with pytest.raises(SkillError, match="has no file 'references/nope.md'"):
        store.remove_file("deploy", "references/nope.md")


# ----- disable / enable --------------------------------------------------------------------------


@pytest.mark.django_db
def test_disable_leaves_the_index_and_persists_in_config(store: SkillStore, home: Path) -> None:
    store.create("deploy", skill_md("deploy"))
    store.create("lint", skill_md("lint"))
    store.disable("deploy")
    assert yaml.safe_load((home / "config.yaml").read_text())["skills"]["disabled"] == ["deploy"]
    fresh = SkillStore(hermes_config.get())
    assert "deploy" not in fresh.render_index()
    assert [s.name for s in fresh.available()] == ["lint"]
    assert [(s.name, s.enabled) for s in fresh.list()] == [("deploy", False), ("lint", True)]
    store.enable("deploy")
    fresh = SkillStore(hermes_config.get())
    assert "- deploy: Does the thing" in fresh.render_index()
    assert [c.action for c in KnowledgeChange.objects.order_by("id")][-2:] == ["disable", "enable"]


@pytest.mark.django_db
def test_disable_keeps_every_key_hermes_wrote(home: Path) -> None:
    (home / "config.yaml").write_text(HERMES_CONFIG)  # as Hermes wrote it, without the tests' defaults
    store = SkillStore(hermes_config.refresh())
    store.create("deploy", skill_md("deploy"))
    store.disable("deploy")
    assert (home / "config.yaml").read_text() == HERMES_CONFIG.replace(
        "  creation_nudge_interval: 10\n", "  creation_nudge_interval: 10\n  disabled: [deploy]\n"
    )
    store.enable("deploy")
    assert yaml.safe_load((home / "config.yaml").read_text()) == {
        **yaml.safe_load(HERMES_CONFIG),
        "skills": {"external_dirs": ["~/.agents/skills"], "creation_nudge_interval": 10, "disabled": []},
    }


@pytest.mark.django_db
def test_config_disabled_list_is_honoured(home: Path) -> None:
    SkillStore(hermes_config.get()).create("deploy", skill_md("deploy"))
    write_config(home, "skills:\n  disabled: [deploy]\n")
    assert SkillStore(hermes_config.get()).render_index() == ""


@pytest.mark.django_db
def test_undo_of_disable_enables_again(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"))
    store.disable("deploy")
    knowledge_undo.undo(KnowledgeChange.objects.get(action="disable"))
    assert SkillStore(hermes_config.get()).get("deploy").enabled


# ----- usage, index, broken skills -------------------------------------------------------------


@pytest.mark.django_db
def test_usage_counts(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"), prov=Provenance(actor="agent"))
    store.record_view("deploy")
    store.record_view("deploy")
    store.record_use("deploy")
    usage = SkillUsage.objects.get(name="deploy")
    assert (usage.views, usage.uses, usage.created_by) == (2, 1, "agent")
    assert usage.last_used is not None


@pytest.mark.django_db
def test_index_format_groups_by_category_uncategorised_first(store: SkillStore) -> None:
    assert store.render_index() == ""
    store.create("zeta", skill_md("zeta", description="Last alphabetically"))
    store.create("deploy", skill_md("deploy", description="Ship it"), category="ops")
    store.create("alpha", skill_md("alpha", description=">\n  Folded\n  text"))
    store.create("css", skill_md("css", description="Style pages"), category="frontend")
    assert store.render_index() == (
        f"## Skills\n{INDEX_INSTRUCTION}\n\n"
        "- alpha: Folded text\n"
        "- zeta: Last alphabetically\n"
        "### frontend\n"
        "- css: Style pages\n"
        "### ops\n"
        "- deploy: Ship it\n"
    )
    assert "skill_view" in INDEX_INSTRUCTION and "patch" in INDEX_INSTRUCTION


@pytest.mark.django_db
def test_broken_skill_on_disk_is_listed_not_crashing(store: SkillStore, home: Path) -> None:
    store.create("good", skill_md("good"))
    bad = home / "skills" / "tools" / "broken"
    bad.mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: broken\ndescription: [oops\n---\nbody\n")
    wrong = home / "skills" / "mismatch"
    wrong.mkdir()
    (wrong / "SKILL.md").write_text(skill_md("other"))
    binary = home / "skills" / "binary"
    binary.mkdir()
    (binary / "SKILL.md").write_bytes(b"\xff\xfe\x00")
    listed = {s.name: s for s in store.list()}
    assert listed["broken"].error.startswith("YAML error on line")
    assert listed["broken"].category == "tools"
    # A frontmatter name other than the folder's is the skill's name, as Hermes lists it.
    assert "mismatch" not in listed and "its folder is 'mismatch'" in listed["other"].warning
    assert "not valid UTF-8" in listed["binary"].error
    assert not listed["good"].broken
    assert [s.name for s in store.available()] == ["good", "other"]
    assert "broken" not in store.render_index() and "- good:" in store.render_index()
    # a broken skill can be repaired through the store
    store.edit("broken", skill_md("broken"))
    assert not store.get("broken").broken


@pytest.mark.django_db
def test_duplicate_names_on_disk_mark_the_second_broken(store: SkillStore, home: Path) -> None:
    store.create("deploy", skill_md("deploy"))
    dup = home / "skills" / "ops" / "deploy"
    dup.mkdir(parents=True)
    (dup / "SKILL.md").write_text(skill_md("deploy"))
    infos = store.list()
    assert [(s.category, bool(s.error)) for s in infos] == [("", False), ("ops", True)]
    assert "duplicate skill name" in infos[1].error
