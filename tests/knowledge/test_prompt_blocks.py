"""A frozen system prompt cut back into its blocks, each measured against its budget."""

from __future__ import annotations

import pytest

from foundation import config as hermes_config
from knowledge.memory.store import MemoryStore
from knowledge.prompt import build_system_prompt
from knowledge.prompt_blocks import split
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore

pytestmark = pytest.mark.django_db


def test_blocks_of_a_real_prompt_with_their_budgets(home):
    user = Provenance(actor="user")
    MemoryStore().add("memory", "Staging host is stage-7", user)
    MemoryStore().add("user", "Prefers short answers", user)
    SkillStore().create(
        "git-bisect", "---\nname: git-bisect\ndescription: Find a bad commit\n---\n# Steps\n1. bisect\n", prov=user
    )
    config = hermes_config.get()
    blocks = {b.name: b for b in split(build_system_prompt(config), config)}
    assert list(blocks) == ["Identity and instructions", "Memory", "User profile", "Skills index"]
    assert (blocks["Memory"].text, blocks["Memory"].budget) == ("Staging host is stage-7", 2200)
    assert blocks["User profile"].percent == round(100 * len("Prefers short answers") / 1375)
    assert "git-bisect: Find a bad commit" in blocks["Skills index"].text and blocks["Skills index"].budget is None


def test_a_prompt_without_memory_or_skills_is_one_block(home):
    config = hermes_config.get()
    [block] = split("You are Hermes.", config)
    assert (block.name, block.chars, block.percent) == ("Identity and instructions", 15, None)
