"""Path safety of the skill store: hostile names and paths are refused and nothing
is written outside the skill's folder.

Each test runs on a HERMES_HOME inside its own tmp_path, so the whole parent directory can be
snapshotted before and after; escapes that would land above it are checked by their target path.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.skill_tools import make_tools
from foundation import config as hermes_config
from knowledge.models import KnowledgeChange
from knowledge.skills.format import SkillError
from knowledge.skills.store import SkillStore


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: A skill\n---\n\nSteps.\n"


HOSTILE_NAMES = [
    "..",
    ".",
    "../evil",
    "../../etc",
    "/etc/passwd",
    "/tmp/evil",
    "a/b",
    "a\\b",
    "..\\..\\evil",
    "evil\x00",
    "ev\x00il",
    "%2e%2e",
    "%2e%2e%2fevil",
    "a" * 65,
    "x" * 1000,
    "",
    " ",
    "-rf",
    ".hidden",
    "~root",
    "UPPER",
    "with space",
    "new\nline",
    "\u202eevil",
    "C:\\evil",
    "ok/../../evil",
    "é",
]

HOSTILE_PATHS = [
    "..",
    "../x.md",
    "../../etc/passwd",
    "../../../../../../etc/passwd",
    "../other/SKILL.md",
    "references/../../x.md",
    "references/../SKILL.md",
    "references/../../../../escape.md",
    "/etc/passwd",
    "/tmp/evil.md",
    "~/evil.md",
    "C:/evil.md",
    "references//x.md",
    "references/./x.md",
    "./references/x.md",
    "references/",
    "references/..",
    "%2e%2e/x.md",
    "references/%2e%2e/%2e%2e/x.md",
    "references/..%2fx.md",
    "%2Fetc%2Fpasswd",
    "references%2f..%2f..%2fx.md",
    "references\\..\\..\\x.md",
    "references/x\x00.md",
    "references/x.md\x00../../evil",
    "references/x\n.md",
    "references/" + "a" * 300,
    "references/" + "a/" * 300 + "x",
    "assets/../../demo2/SKILL.md",
    "SKILL.md/../../x.md",
]


@dataclass
class Sandbox:
    parent: Path
    store: SkillStore
    skill: Path
    outside: Path


def snapshot(root: Path) -> dict[str, tuple[str, bytes | str]]:
    out: dict[str, tuple[str, bytes | str]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for n in [*dirnames, *filenames]:
            p = Path(dirpath, n)
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", p.read_bytes())
            else:
                out[rel] = ("dir", "")
    return out


@pytest.fixture
def sandbox(tmp_path: Path, home: Path) -> Sandbox:
    store = SkillStore(hermes_config.load(tmp_path / "home"))
    store.create("demo", skill_md("demo"))
    store.write_file("demo", "references/ok.md", "fine")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    return Sandbox(tmp_path, store, store.root / "demo", outside)


def escaped_state(base: Path, rel: str) -> dict[Path, tuple[bool, bytes | None]]:
    """The state of where a naive join would have written, when that is outside `base`."""
    clean = rel.replace("\x00", "").replace("\\", "/")
    target = Path(os.path.normpath(os.path.join(base, clean))) if clean else base
    if target.is_relative_to(base):
        return {}
    is_file = target.is_file() and not target.is_symlink()
    return {target: (os.path.lexists(target), target.read_bytes() if is_file else None)}


@pytest.mark.django_db
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_skill_names_are_refused(sandbox: Sandbox, name: str) -> None:
    before = snapshot(sandbox.parent)
    outside = escaped_state(sandbox.store.root, name)
    changes = KnowledgeChange.objects.count()
    with pytest.raises(SkillError):
        sandbox.store.create(name, skill_md(name))
    # "" as a category means uncategorised and "a/b" is a nested category (as Hermes nests them): both fine.
    if name and name != "a/b":
        with pytest.raises(SkillError):
            sandbox.store.create("fine", skill_md("fine"), category=name)
    for op in (
        lambda: sandbox.store.write_file(name, "references/x.md", "x"),
        lambda: sandbox.store.edit(name, skill_md(name)),
        lambda: sandbox.store.delete(name),
        lambda: sandbox.store.disable(name),
    ):
        with pytest.raises(SkillError):
            op()
    assert snapshot(sandbox.parent) == before
    assert KnowledgeChange.objects.count() == changes
    assert escaped_state(sandbox.store.root, name) == outside


@pytest.mark.django_db
@pytest.mark.parametrize("rel", HOSTILE_PATHS)
def test_hostile_file_paths_are_refused(sandbox: Sandbox, rel: str) -> None:
    before = snapshot(sandbox.parent)
    outside = escaped_state(sandbox.skill, rel)
    store = sandbox.store
    for op in (
        lambda: store.write_file("demo", rel, "pwned"),
        lambda: store.remove_file("demo", rel),
        lambda: store.patch("demo", "Steps", "pwned", file_path=rel),
        lambda: store.read("demo", rel),
    ):
        with pytest.raises(SkillError):
            op()
    assert snapshot(sandbox.parent) == before
    assert escaped_state(sandbox.skill, rel) == outside


@pytest.mark.django_db
def test_hostile_path_through_the_tool_is_an_error_result(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent.tools.skill_tools._store", lambda: sandbox.store)
    before = snapshot(sandbox.parent)
    registry = ToolRegistry(make_tools())
    args = {"action": "write_file", "name": "demo", "file_path": "../../x.md", "file_content": "x"}
    result = json.loads(registry.dispatch("skill_manage", args, ToolContext()).content())
    assert result["success"] is False and "'..'" in result["error"]
    assert snapshot(sandbox.parent) == before


# ----- symlinks --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_symlinked_support_folder_pointing_outside_is_refused(sandbox: Sandbox) -> None:
    (sandbox.skill / "templates").symlink_to(sandbox.outside, target_is_directory=True)
    before = snapshot(sandbox.parent)
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.write_file("demo", "templates/x.md", "pwned")
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.remove_file("demo", "templates/secret.txt")
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.read("demo", "templates/secret.txt")
    assert snapshot(sandbox.parent) == before


@pytest.mark.django_db
def test_symlinked_file_inside_the_skill_is_refused(sandbox: Sandbox) -> None:
    (sandbox.skill / "references" / "link.md").symlink_to(sandbox.outside / "secret.txt")
    before = snapshot(sandbox.parent)
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.write_file("demo", "references/link.md", "pwned")
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.patch("demo", "secret", "pwned", file_path="references/link.md")
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.remove_file("demo", "references/link.md")
    assert snapshot(sandbox.parent) == before


@pytest.mark.django_db
def test_symlinked_skill_folder_is_listed_broken_and_never_written(sandbox: Sandbox) -> None:
    target = sandbox.outside / "evil"
    target.mkdir()
    (target / "SKILL.md").write_text(skill_md("evil"))
    (sandbox.store.root / "evil").symlink_to(target, target_is_directory=True)
    before = snapshot(sandbox.parent)
    info = sandbox.store.get("evil")
    assert "symbolic link" in info.error
    assert "evil" not in [s.name for s in sandbox.store.available()]
    for op in (
        lambda: sandbox.store.edit("evil", skill_md("evil")),
        lambda: sandbox.store.patch("evil", "Steps", "pwned"),
        lambda: sandbox.store.write_file("evil", "references/x.md", "pwned"),
        lambda: sandbox.store.delete("evil"),
    ):
        with pytest.raises(SkillError, match="symbolic link"):
            op()
    assert snapshot(sandbox.parent) == before


@pytest.mark.django_db
def test_symlinked_category_folder_is_not_written_into(sandbox: Sandbox) -> None:
    (sandbox.store.root / "cat").symlink_to(sandbox.outside, target_is_directory=True)
    before = snapshot(sandbox.parent)
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.create("newone", skill_md("newone"), category="cat")
    assert snapshot(sandbox.parent) == before


@pytest.mark.django_db
def test_symlinked_skill_md_is_broken_and_not_edited(sandbox: Sandbox) -> None:
    folder = sandbox.store.root / "linked"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(sandbox.outside / "secret.txt")
    before = snapshot(sandbox.parent)
    assert "symbolic link" in sandbox.store.get("linked").error
    with pytest.raises(SkillError, match="symbolic link"):
        sandbox.store.edit("linked", skill_md("linked"))
    assert snapshot(sandbox.parent) == before


@pytest.mark.django_db
def test_delete_removes_links_but_never_their_targets(sandbox: Sandbox) -> None:
    (sandbox.skill / "assets").symlink_to(sandbox.outside, target_is_directory=True)
    (sandbox.skill / "references" / "secret.md").symlink_to(sandbox.outside / "secret.txt")
    outside_before = snapshot(sandbox.outside)
    sandbox.store.delete("demo")
    assert not os.path.lexists(sandbox.skill)
    assert sandbox.store.root.is_dir()
    assert snapshot(sandbox.outside) == outside_before


@pytest.mark.django_db
def test_symlinked_lock_file_is_refused(sandbox: Sandbox) -> None:
    lock = sandbox.store.root / ".lock"
    lock.unlink()
    lock.symlink_to(sandbox.outside / "created-by-lock")
    with pytest.raises(SkillError, match="lock file"):
        sandbox.store.write_file("demo", "references/x.md", "x")
    assert not (sandbox.outside / "created-by-lock").exists()


@pytest.mark.django_db
def test_undo_refuses_a_change_whose_path_escapes(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    from knowledge import undo as knowledge_undo

    monkeypatch.setattr("knowledge.skills.store.hermes_config.get", lambda: sandbox.store.config)
    forged = KnowledgeChange.objects.create(
        kind="skill", target="demo", action="edit", actor="user", path="../../outside/secret.txt", before="pwned"
    )
    with pytest.raises(knowledge_undo.UndoError):
        knowledge_undo.undo(forged)
    assert (sandbox.outside / "secret.txt").read_text() == "secret"
