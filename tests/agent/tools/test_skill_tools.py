"""The skill tools as the model sees them: skills_list, skill_view, skill_manage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.skill_tools import apply_pending, make_tools
from foundation import config as hermes_config
from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite, ReviewRun, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore


def skill_md(name: str, description: str = "Does the thing", body: str = "Step one.\nStep two.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}"


@pytest.fixture
def tools(home: Path) -> ToolRegistry:
    return ToolRegistry(make_tools())


def call(tools: ToolRegistry, tool: str, ctx: ToolContext | None = None, /, **args: Any) -> dict[str, Any]:
    return json.loads(tools.dispatch(tool, args, ctx or ToolContext()).content())


def manage(tools: ToolRegistry, ctx: ToolContext | None = None, /, **args: Any) -> dict[str, Any]:
    return call(tools, "skill_manage", ctx, **args)


def test_make_tools_names_and_schemas() -> None:
    by_name = {t.name: t for t in make_tools()}
    assert set(by_name) == {"skills_list", "skill_view", "skill_manage"}
    params = by_name["skill_manage"].parameters
    assert params["required"] == ["action", "name"]
    assert set(params["properties"]) == {
        "action",
        "name",
        "content",
        "old_string",
        "new_string",
        "replace_all",
        "category",
        "file_path",
        "file_content",
        "evidence",
    }
    assert set(params["properties"]["action"]["enum"]) == {
        "create",
        "edit",
        "patch",
        "delete",
        "write_file",
        "remove_file",
        "disable",
        "enable",
    }
    assert by_name["skill_view"].parameters["required"] == ["name"]


@pytest.mark.django_db
def test_every_action_returns_the_exact_result(tools: ToolRegistry, home: Path) -> None:
    folder = home / "skills" / "ops" / "deploy"
    steps: list[tuple[dict[str, Any], str, Path]] = [
        ({"action": "create", "content": skill_md("deploy"), "category": "ops"}, "created", folder / "SKILL.md"),
        ({"action": "edit", "content": skill_md("deploy", body="Edited.\n")}, "updated", folder / "SKILL.md"),
        ({"action": "patch", "old_string": "Edited.", "new_string": "Patched."}, "updated", folder / "SKILL.md"),
        (
            {"action": "write_file", "file_path": "references/a.md", "file_content": "A"},
            "updated",
            folder / "references" / "a.md",
        ),
        ({"action": "remove_file", "file_path": "references/a.md"}, "updated", folder / "references" / "a.md"),
        ({"action": "disable"}, "disabled", folder),
        ({"action": "enable"}, "enabled", folder),
        ({"action": "delete"}, "deleted", folder),
    ]
    for args, verb, path in steps:
        result = manage(tools, name="deploy", **args)
        assert result == {"success": True, "changed": True, "message": f"Skill 'deploy' {verb}", "path": str(path)}
    assert not folder.exists()
    assert [c.action for c in KnowledgeChange.objects.order_by("id")] == [
        "create",
        "edit",
        "patch",
        "write_file",
        "remove_file",
        "disable",
        "enable",
        "delete",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"action": "explode", "name": "deploy"}, "Unknown action 'explode'"),
        ({"name": "deploy"}, "Unknown action None"),
        ({"action": "create"}, "skill name is required"),
        ({"action": "create", "name": "deploy"}, "'content' is required for create"),
        ({"action": "create", "name": "new", "content": "no frontmatter"}, "must start with YAML frontmatter"),
        ({"action": "create", "name": "deploy", "content": skill_md("deploy")}, "already exists"),
        ({"action": "edit", "name": "ghost", "content": skill_md("ghost")}, "Skill 'ghost' not found"),
        ({"action": "patch", "name": "deploy", "old_string": "nope", "new_string": "x"}, "not found in SKILL.md"),
        ({"action": "patch", "name": "deploy", "old_string": "Step", "new_string": "x"}, "appears 2 times"),
        ({"action": "patch", "name": "deploy", "new_string": "x"}, "'old_string' is required"),
        ({"action": "write_file", "name": "deploy", "file_path": "SKILL.md", "file_content": "x"}, "edit or patch"),
        ({"action": "write_file", "name": "deploy", "file_path": "assets/x"}, "'file_content' is required"),
        ({"action": "remove_file", "name": "deploy", "file_path": "assets/none"}, "has no file"),
    ],
)
def test_errors_are_data(tools: ToolRegistry, args: dict[str, Any], error: str) -> None:
    assert manage(tools, name="deploy", action="create", content=skill_md("deploy"))["success"]
    result = json.loads(tools.dispatch("skill_manage", args, ToolContext()).content())
    assert result["success"] is False
    assert error in result["error"]


@pytest.mark.django_db
def test_patch_replace_all_through_the_tool(tools: ToolRegistry, home: Path) -> None:
    manage(tools, action="create", name="deploy", content=skill_md("deploy"))
    result = manage(tools, action="patch", name="deploy", old_string="Step", new_string="Phase", replace_all=True)
    assert result["success"] is True
    assert (home / "skills" / "deploy" / "SKILL.md").read_text().count("Phase") == 2


@pytest.mark.django_db
def test_skills_list_shape_and_category_filter(tools: ToolRegistry) -> None:
    manage(tools, action="create", name="deploy", content=skill_md("deploy", "Ship it"), category="ops")
    manage(tools, action="create", name="css", content=skill_md("css", "Style"), category="web")
    manage(tools, action="create", name="misc", content=skill_md("misc", "Other"))
    assert call(tools, "skills_list") == {
        "skills": [
            {"name": "misc", "description": "Other", "category": ""},
            {"name": "deploy", "description": "Ship it", "category": "ops"},
            {"name": "css", "description": "Style", "category": "web"},
        ],
        "categories": ["ops", "web"],
        "count": 3,
    }
    ops = call(tools, "skills_list", category="ops")
    assert (ops["skills"], ops["count"]) == ([{"name": "deploy", "description": "Ship it", "category": "ops"}], 1)


@pytest.mark.django_db
def test_skill_view_returns_content_and_linked_files_and_counts(tools: ToolRegistry, home: Path) -> None:
    manage(tools, action="create", name="deploy", content=skill_md("deploy"))
    manage(tools, action="write_file", name="deploy", file_path="references/api.md", file_content="API")
    manage(tools, action="write_file", name="deploy", file_path="scripts/go.sh", file_content="echo")
    view = call(tools, "skill_view", name="deploy")
    assert view == {
        "success": True,
        "name": "deploy",
        "category": "",
        "path": str(home / "skills" / "deploy"),
        "content": skill_md("deploy"),
        "linked_files": ["references/api.md", "scripts/go.sh"],
    }
    one = call(tools, "skill_view", name="deploy", file_path="references/api.md")
    assert one == {"success": True, "name": "deploy", "file_path": "references/api.md", "content": "API"}
    assert SkillUsage.objects.get(name="deploy").views == 2
    missing = call(tools, "skill_view", name="ghost")
    assert missing["success"] is False and "not found" in missing["error"]
    assert SkillUsage.objects.get(name="deploy").views == 2


@pytest.mark.django_db
def test_disabled_skill_leaves_the_tools(tools: ToolRegistry) -> None:
    manage(tools, action="create", name="deploy", content=skill_md("deploy"))
    assert manage(tools, action="disable", name="deploy")["success"]
    assert call(tools, "skills_list")["count"] == 0
    assert call(tools, "skill_view", name="deploy") == {"success": False, "error": "Skill 'deploy' is disabled."}
    patched = manage(tools, action="patch", name="deploy", old_string="Step one", new_string="x")
    assert patched["success"] is False and "disabled" in patched["error"]
    assert manage(tools, action="disable", name="deploy")["success"] is False
    assert manage(tools, action="enable", name="deploy")["message"] == "Skill 'deploy' enabled"
    assert call(tools, "skills_list")["count"] == 1
    assert call(tools, "skill_view", name="deploy")["success"] is True


@pytest.mark.django_db
def test_broken_skill_is_not_offered_but_can_be_fixed(tools: ToolRegistry, home: Path) -> None:
    folder = home / "skills" / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: broken\n---\nbody\n")
    assert call(tools, "skills_list")["count"] == 0
    view = call(tools, "skill_view", name="broken")
    assert view["success"] is False and "'description' is required" in view["error"]
    assert manage(tools, action="edit", name="broken", content=skill_md("broken"))["success"] is True
    assert call(tools, "skills_list")["count"] == 1


@pytest.mark.django_db
def test_provenance_comes_from_the_context(tools: ToolRegistry) -> None:
    session = ChatSession.objects.create()
    ctx = ToolContext(actor="agent", session_id=session.id, message_id=7)
    manage(tools, ctx, action="create", name="deploy", content=skill_md("deploy"))
    change = KnowledgeChange.objects.get()
    assert (change.actor, change.session_id, change.message_id) == ("agent", session.id, 7)
    assert SkillUsage.objects.get(name="deploy").created_by == "agent"


@pytest.mark.django_db
def test_staged_writes_wait_for_approval(tools: ToolRegistry, home: Path) -> None:
    session = ChatSession.objects.create()
    run = ReviewRun.objects.create(session=session, prompt_kind="skill")
    said = [
        {"role": "user", "content": "Deploy by running make deploy"},
        {"role": "tool", "content": "$ make deploy\ndeploy: released build 41 to staging"},
    ]
    for message in said:
        Message.objects.create(session=session, **message)
    ctx = ToolContext(actor="review", session_id=session.id, review_id=run.pk, stage_writes={"skills": True}, seen=said)
    args = {
        "action": "create",
        "name": "deploy",
        "content": skill_md("deploy"),
        "category": "ops",
        "evidence": ["Deploy by running make deploy", "deploy: released build 41 to staging"],
    }
    result = manage(tools, ctx, **args)
    assert result == {
        "success": True,
        "changed": True,
        "pending": True,
        "message": "Skill 'deploy' created awaiting approval",
    }
    assert not (home / "skills" / "ops").exists()
    assert KnowledgeChange.objects.count() == 0
    pending = PendingWrite.objects.get()
    assert (pending.kind, pending.tool_name, pending.arguments) == ("skill", "skill_manage", args)
    assert (pending.session_id, pending.review_id) == (session.id, run.pk)

    applied = json.loads(apply_pending(pending, Provenance(actor="review", review_id=run.pk)).content())
    assert applied["success"] is True and applied["message"] == "Skill 'deploy' created"
    assert (home / "skills" / "ops" / "deploy" / "SKILL.md").read_text() == skill_md("deploy")
    assert KnowledgeChange.objects.get().review_id == run.pk


@pytest.mark.django_db
def test_staging_refuses_invalid_calls_up_front(tools: ToolRegistry) -> None:
    ctx = ToolContext(actor="review", stage_writes={"skills": True})
    bad = manage(tools, ctx, action="create", name="deploy", content="no frontmatter")
    assert bad["success"] is False
    assert manage(tools, ctx, action="delete", name="ghost")["success"] is False
    assert PendingWrite.objects.count() == 0


@pytest.mark.django_db
def test_apply_pending_reports_a_failure_as_data(home: Path) -> None:
    pending = PendingWrite.objects.create(
        kind="skill", tool_name="skill_manage", arguments={"action": "delete", "name": "ghost"}
    )
    result = json.loads(apply_pending(pending, Provenance(actor="user")).content())
    assert result["success"] is False and "not found" in result["error"]


@pytest.mark.django_db
def test_tools_see_config_changes_without_restart(tools: ToolRegistry) -> None:
    manage(tools, action="create", name="deploy", content=skill_md("deploy"))
    SkillStore(hermes_config.get()).disable("deploy")
    assert call(tools, "skills_list")["count"] == 0


# As Hermes Agent's own skill_manage tests: a skill created as "my-skill" whose frontmatter names it
# "test-skill" (and every later call by the folder's name) succeeds.
HERMES_SKILL = (
    "---\nname: test-skill\ndescription: A test skill for unit testing.\n---\n\n# Test Skill\n\nStep 1: Do the thing.\n"
)
HERMES_SKILL_2 = HERMES_SKILL.replace("A test skill for unit testing.", "Updated description.")


@pytest.mark.django_db
def test_create_accepts_a_frontmatter_name_other_than_the_skills(tools: ToolRegistry, home: Path) -> None:
    created = manage(tools, action="create", name="my-skill", content=HERMES_SKILL)
    assert created["success"] is True
    assert (home / "skills" / "my-skill" / "SKILL.md").read_text() == HERMES_SKILL
    # Listed and invoked by its frontmatter name, as Hermes lists it; the result says so.
    assert "listed and invoked as 'test-skill'" in created["note"] and "folder is 'my-skill'" in created["note"]
    assert [s["name"] for s in call(tools, "skills_list")["skills"]] == ["test-skill"]
    assert "- test-skill: A test skill for unit testing." in SkillStore().render_index()
    assert SkillUsage.objects.filter(name="test-skill").exists()
    # Either name finds it, as Hermes' skill_view takes either and its skill_manage the folder's.
    assert call(tools, "skill_view", name="my-skill")["content"] == HERMES_SKILL
    assert call(tools, "skill_view", name="test-skill")["content"] == HERMES_SKILL
    assert manage(tools, action="edit", name="my-skill", content=HERMES_SKILL_2)["success"] is True
    assert "Updated description" in (home / "skills" / "my-skill" / "SKILL.md").read_text()
    patched = manage(tools, action="patch", name="my-skill", old_string="Do the thing.", new_string="Do it again.")
    assert patched["success"] is True
    assert manage(tools, action="delete", name="my-skill")["success"] is True
    assert not (home / "skills" / "my-skill").exists()


@pytest.mark.django_db
def test_create_refuses_a_frontmatter_name_another_skill_has(tools: ToolRegistry, home: Path) -> None:
    assert manage(tools, action="create", name="test-skill", content=HERMES_SKILL)["success"]
    clash = manage(tools, action="create", name="my-skill", content=HERMES_SKILL_2)
    assert clash["success"] is False and "'test-skill' already exists" in clash["error"]
    assert not (home / "skills" / "my-skill").exists()


@pytest.mark.django_db
def test_edit_without_frontmatter_is_refused_and_the_skill_kept(tools: ToolRegistry, home: Path) -> None:
    assert manage(tools, action="create", name="my-skill", content=HERMES_SKILL)["success"]
    refused = manage(tools, action="edit", name="my-skill", content="no frontmatter")
    assert refused["success"] is False
    assert "must start with YAML frontmatter" in refused["error"]
    assert (home / "skills" / "my-skill" / "SKILL.md").read_text() == HERMES_SKILL


@pytest.mark.django_db
def test_edit_of_a_skill_placed_without_frontmatter_needs_frontmatter(tools: ToolRegistry, home: Path) -> None:
    # Hermes lists a bare SKILL.md by its folder, but its skill_manage edit still wants the whole file.
    bare = home / "skills" / "release-notes" / "SKILL.md"
    bare.parent.mkdir(parents=True)
    bare.write_text("Write the notes from merged pull requests.\n", encoding="utf-8")
    refused = manage(tools, action="edit", name="release-notes", content="Write them from the changelog.\n")
    assert refused["success"] is False and "must start with YAML frontmatter" in refused["error"]
    assert bare.read_text(encoding="utf-8") == "Write the notes from merged pull requests.\n"
    fixed = skill_md("release-notes", "Write the release notes")
    assert manage(tools, action="edit", name="release-notes", content=fixed)["success"] is True


@pytest.mark.django_db
def test_create_refuses_a_description_over_the_limit_as_hermes_does(tools: ToolRegistry, home: Path) -> None:
    long = manage(tools, action="create", name="poster", content=skill_md("poster", "Make posters. " * 80))
    assert long["success"] is False and "the limit is 1024" in long["error"]
