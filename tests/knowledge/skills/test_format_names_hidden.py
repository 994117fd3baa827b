"""Skill names and supporting-file names cannot hide anything."""

from __future__ import annotations

import re

import pytest

from knowledge.provenance import Provenance
from knowledge.skills.format import SkillError, check_name, validate_skill_md
from knowledge.skills.store import SkillStore

pytestmark = pytest.mark.django_db
USER = Provenance(actor="user")


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: Brew green tea\n---\n# Steps\n"


@pytest.mark.parametrize("name", ["tea-brewing\n", "tea\n", "tea\r\n"])
def test_a_name_ending_in_a_newline_is_refused(name):
    with pytest.raises(SkillError):
        check_name(name)
    with pytest.raises(SkillError):
        validate_skill_md(skill_md('"' + name.replace("\n", "\\n").replace("\r", "\\r") + '"'), name)


def test_the_store_refuses_a_newline_name(home):
    with pytest.raises(SkillError):
        SkillStore().create("tea\n", skill_md("tea"), prov=USER)
    assert not (home / "skills" / "tea\n").exists()


@pytest.mark.parametrize(
    ("rel", "says"),
    [
        (".hidden", "hidden"),
        ("references/.hidden", "hidden"),
        (".git/config", "hidden"),
        ("scripts/\u202egnp.sh", "U+202E"),
        ("assets/logo\u200b.png", "U+200B"),
        ("references/not\u200ethis.md", "U+200E"),
        ("references/tag\U000e0041.md", "U+E0041"),
    ],
)
def test_hidden_or_direction_control_file_names_are_refused(home, rel, says):
    store = SkillStore()
    store.create("tea", skill_md("tea"), prov=USER)
    with pytest.raises(SkillError, match=re.escape(says)):
        store.write_file("tea", rel, "echo hi", prov=USER)
    assert store.files("tea") == []


def test_every_file_on_disk_is_listed_even_hidden_ones(home, auth_client):
    store = SkillStore()
    store.create("tea", skill_md("tea"), prov=USER)
    folder = home / "skills" / "tea"
    (folder / "references").mkdir()
    (folder / "references" / ".secret-notes.md").write_text("hidden from the page before", encoding="utf-8")
    (folder / ".hidden").write_text("x", encoding="utf-8")
    assert store.files("tea") == [".hidden", "references/.secret-notes.md"]
    html = auth_client.get("/skills/tea/").content.decode()
    assert ".secret-notes.md" in html and ".hidden" in html
