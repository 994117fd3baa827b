"""Skill discovery on disk: skills at any depth, as Hermes installs them, and
skills over a limit listed with a warning instead of hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundation import config as hermes_config
from knowledge.skills.files import skill_folders
from knowledge.skills.format import MAX_SKILL_DEPTH
from knowledge.skills.store import SkillStore
from tests.hermes_home import DEEP_SKILLS, write_deep_tree, write_skill

pytestmark = pytest.mark.django_db


def test_skills_are_found_at_any_depth_with_their_category_path(home: Path) -> None:
    write_deep_tree(home / "skills")
    store = SkillStore(hermes_config.get())
    listed = [(s.category, s.name, s.usable) for s in store.list()]
    assert listed == [
        ("", "plain-skill", True),
        ("devops", "docker-debug", True),
        ("mlops/inference", "vllm", True),
        ("mlops/training/axolotl", "lora-tune", True),
    ]
    index = store.render_index()
    assert "### mlops/inference\n- vllm: Use vllm when" in index
    assert store.read("lora-tune").startswith("---\nname: lora-tune")


def test_the_search_is_bounded_and_skips_hidden_and_linked_folders(home: Path, tmp_path: Path) -> None:
    root = home / "skills"
    write_skill(root, "/".join(f"d{i}" for i in range(MAX_SKILL_DEPTH - 1)) + "/deepest-listed")
    write_skill(root, "/".join(f"d{i}" for i in range(MAX_SKILL_DEPTH)) + "/too-deep")
    write_skill(root, ".git/objects/hidden-skill")
    write_skill(tmp_path / "elsewhere", "cat/linked-away")
    (root / "linked-category").symlink_to(tmp_path / "elsewhere" / "cat")
    names = [folder.name for _, folder in skill_folders(root)]
    assert names == ["deepest-listed"]


def test_a_skill_folder_is_not_searched_for_more_skills(home: Path) -> None:
    outer = write_skill(home / "skills", "tools/outer")
    write_skill(outer, "examples/inner")  # an example inside a skill is a file of it, not a skill
    assert [s.name for s in SkillStore(hermes_config.get()).list()] == ["outer"]


def test_delete_and_undo_of_a_deep_skill(home: Path) -> None:
    write_deep_tree(home / "skills")
    store = SkillStore(hermes_config.get())
    store.delete("vllm")
    assert not (home / "skills" / "mlops" / "inference").exists()  # emptied category folders go
    assert (home / "skills" / "mlops" / "training" / "axolotl" / "lora-tune").is_dir()


def test_create_in_a_nested_category(home: Path) -> None:
    store = SkillStore(hermes_config.get())
    path = store.create("sglang", "---\nname: sglang\ndescription: Serve.\n---\nSteps.\n", category="mlops/inference")
    assert path == home / "skills" / "mlops" / "inference" / "sglang" / "SKILL.md"
    assert store.get("sglang").category == "mlops/inference"


def test_over_long_description_is_listed_truncated_with_a_warning(home: Path) -> None:
    long = "Use this skill to " + "design posters and layouts carefully, " * 28  # 1,082 characters
    assert len(long) > 1024
    write_skill(home / "skills", "design/canvas-design", description=long)
    info = SkillStore(hermes_config.get()).get("canvas-design")
    assert info.usable and len(info.description) == 1024 and info.description.endswith("…")
    assert "1,0" in info.warning and "truncated" in info.warning
    assert "- canvas-design: Use this skill to design" in SkillStore(hermes_config.get()).render_index()


def test_skill_md_over_100000_characters_is_listed_usable_and_patchable(home: Path) -> None:
    body = "\n".join(f"{i}. A step of the long procedure." for i in range(4000))
    write_skill(home / "skills", "mlops/big-manual", body=body)
    store = SkillStore(hermes_config.get())
    info = store.get("big-manual")
    assert info.usable and "over the limit of 100,000" in info.warning
    store.patch("big-manual", "\n1. A step", "\n1. The first step")  # still maintainable by the agent
    assert "1. The first step" in store.read("big-manual")


def test_skills_page_lists_deep_and_warned_skills(auth_client, home: Path) -> None:
    write_deep_tree(home / "skills")
    write_skill(home / "skills", "design/poster", description="x" * 1100)
    body = auth_client.get("/skills/").content.decode()
    for rel in DEEP_SKILLS:
        assert f'data-skill="{rel.rsplit("/", 1)[-1]}"' in body
    assert "mlops/training/axolotl" in body and "skill-warning" in body
    detail = auth_client.get("/skills/poster/").content.decode()
    assert 'id="skill-warning"' in detail and "truncated" in detail
