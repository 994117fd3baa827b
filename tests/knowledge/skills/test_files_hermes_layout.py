"""A home with skills laid out as Hermes ships and reads them: a frontmatter name that differs
from its folder, a SKILL.md without frontmatter, and a skill far over 20 KB. Hermes lists, views
whole and invokes all three; so must the dashboard, through the same store, tools and chat."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.chat.slash import expand_slash
from agent.tools.registry import ToolContext, ToolRegistry
from agent.tools.skill_tools import make_tools
from foundation import config as hermes_config
from knowledge.skills.store import SkillStore
from tests.cli import new_home
from tests.conftest import write_config

pytestmark = pytest.mark.django_db

RENAMED = "---\nname: serving-llms-vllm\ndescription: Serve LLMs with vLLM\n---\n\n# Steps\n1. vllm serve MODEL\n"
BARE = "# Release notes\n\nWrite the release notes from the merged pull requests.\n\n## Steps\n1. git log\n"
# Hermes' biggest bundled skills run to tens of kilobytes; a hand-placed one can reach 200,000 characters.
BIG_BODY = "".join(f"{i}. step number {i} of the long procedure, spelled out in full.\n" for i in range(2900))
BIG = f"---\nname: big-procedure\ndescription: A very long procedure\n---\n\n{BIG_BODY}END-OF-SKILL\n"


def _hermes_home(root: Path) -> None:
    for rel, text in (("mlops/inference/vllm", RENAMED), ("notes/release-notes", BARE), ("big-procedure", BIG)):
        folder = root / rel
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(text, encoding="utf-8")


def _view(name: str, **args: object) -> dict:
    registry = ToolRegistry(make_tools())
    tool = registry.get("skill_view")
    assert tool is not None
    result = registry.dispatch("skill_view", {"name": name, **args}, ToolContext())
    return json.loads(result.content(tool.max_result_chars))  # as the loop cuts it


def test_all_three_are_listed_usable_and_in_the_prompt_index(home: Path) -> None:
    _hermes_home(home / "skills")
    store = SkillStore(hermes_config.get())
    listed = {s.name: s for s in store.list()}
    assert set(listed) == {"serving-llms-vllm", "release-notes", "big-procedure"}
    assert all(s.usable for s in listed.values())
    assert "its folder is 'vllm'" in listed["serving-llms-vllm"].warning
    assert "no frontmatter" in listed["release-notes"].warning
    assert listed["release-notes"].description == "Write the release notes from the merged pull requests."
    index = store.render_index()
    assert "- serving-llms-vllm: Serve LLMs with vLLM" in index
    assert "- release-notes: Write the release notes" in index


def test_skill_view_returns_each_whole_as_valid_json(home: Path) -> None:
    _hermes_home(home / "skills")
    assert len(BIG) > 200_000 - 10_000 and len(BIG) < 200_000
    big = _view("big-procedure")
    assert big["success"] is True and big["content"] == BIG and "truncated" not in big
    assert _view("serving-llms-vllm")["content"] == RENAMED
    assert _view("release-notes")["content"] == BARE


def test_a_small_context_gets_pages_that_say_where_the_rest_is(home: Path) -> None:
    write_config(home, "model: {context_window: 16000}\n")
    _hermes_home(home / "skills")
    first = _view("big-procedure")
    assert first["success"] is True and first["truncated"] is True
    assert len(first["content"]) == 32_000 and first["total_chars"] == len(BIG)
    assert f"offset={first['next_offset']}" in first["note"]
    pages = [first["content"]]
    offset = first["next_offset"]
    while offset is not None:
        page = _view("big-procedure", offset=offset)
        pages.append(page["content"])
        offset = page.get("next_offset")
    assert "".join(pages) == BIG
    assert "offset must be" in _view("big-procedure", offset=-1)["error"]


def test_the_renamed_and_bare_skills_are_invoked_by_their_names(home: Path) -> None:
    _hermes_home(home / "skills")
    store = SkillStore(hermes_config.get())
    inv = expand_slash("/serving-llms-vllm on port 9000", store)
    assert inv is not None and f'path="{home / "skills" / "mlops" / "inference" / "vllm"}"' in inv.model_text
    bare = expand_slash("/release-notes for 2.1", store)
    assert bare is not None and "git log" in bare.model_text


def test_an_edit_keeps_a_bare_skill_usable_and_a_renamed_one_its_name(home: Path) -> None:
    _hermes_home(home / "skills")
    store = SkillStore(hermes_config.get())
    store.patch("release-notes", "git log", "git log --merges")
    store.patch("serving-llms-vllm", "vllm serve MODEL", "vllm serve MODEL --port 9000")
    listed = {s.name: s for s in store.list()}
    assert listed["release-notes"].usable and "--merges" in store.read("release-notes")
    assert listed["serving-llms-vllm"].usable and (home / "skills/mlops/inference/vllm/SKILL.md").read_text().count(
        "--port 9000"
    )


@pytest.mark.slow
def test_the_terminal_chat_invokes_a_renamed_skill_whole(tmp_path: Path, server) -> None:
    home = new_home(tmp_path, server.base_url)
    _hermes_home(home.path / "skills")
    r = home.manage("chat", "-m", "/serving-llms-vllm on port 9000")
    assert r.returncode == 0, r.stderr
    sent = server.requests[0]["messages"]
    assert "- serving-llms-vllm: Serve LLMs with vLLM" in sent[0]["content"]
    assert '<skill name="serving-llms-vllm"' in sent[-1]["content"] and "vllm serve MODEL" in sent[-1]["content"]
