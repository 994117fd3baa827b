"""The SKILL.md format: frontmatter rules and validation messages."""

from __future__ import annotations

import pytest
import yaml

from knowledge.skills.format import SkillFormatError, parse_skill_md, render_skill_md, validate_skill_md
from tests.knowledge.skills.helpers import skill_md

# ----- format validation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("# no frontmatter\n", "must start with YAML frontmatter"),
        ("---\nname: a\ndescription: b\n\nbody without closing\n", "no closing '---'"),
        ("---\ndescription: d\n---\nbody\n", "frontmatter: 'name' is required"),
        ("---\n---\nbody\n", "frontmatter: 'name' is required"),
        ("---\nname: 12\ndescription: d\n---\nbody\n", "'name' must be a string"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\nbody\n", "'name' is 65 characters; the limit is 64"),
        ("---\nname: Bad_Name\ndescription: d\n---\nbody\n", "must match ^[a-z0-9][a-z0-9._-]*$"),
        ("---\nname: -lead\ndescription: d\n---\nbody\n", "must match"),
        ("---\nname: a b\ndescription: d\n---\nbody\n", "must match"),
        ("---\nname: ok\n---\nbody\n", "frontmatter: 'description' is required"),
        ("---\nname: ok\ndescription: [1, 2]\n---\nbody\n", "'description' must be a string"),
        ("---\nname: ok\ndescription: '   '\n---\nbody\n", "'description' must not be empty"),
        ("---\nname: ok\ndescription: " + "d" * 1025 + "\n---\nbody\n", "'description' is 1025 characters"),
        ("---\nname: ok\ndescription: d\n---\n\n   \n", "body is empty"),
        ("---\nname: ok\ndescription: d\ntags: web\n---\nbody\n", "'tags' must be a list of strings"),
        ("---\nname: ok\ndescription: d\nrelated_skills: [1]\n---\nbody\n", "'related_skills' must be a list"),
        ("---\nname: ok\ndescription: d\nmetadata: [x]\n---\nbody\n", "'metadata' must be a mapping"),
        ("---\nname: ok\ndescription: d\nlicense: [x]\n---\nbody\n", "'license' must be a string"),
        ("---\nname: ok\ndescription: d\nversion: [1]\n---\nbody\n", "'version' must be a string or a number"),
        ("---\n- just\n- a list\n---\nbody\n", "must be a YAML mapping"),
    ],
)
def test_invalid_skill_md_is_refused_with_a_clear_message(text: str, error: str) -> None:
    with pytest.raises(SkillFormatError) as exc:
        parse_skill_md(text)
    assert error in str(exc.value)


def test_yaml_error_names_the_file_line() -> None:
    text = "---\nname: ok\ndescription: [unclosed\ntags: x\n---\nbody\n"
    with pytest.raises(SkillFormatError) as exc:
        parse_skill_md(text)
    assert str(exc.value).startswith("YAML error on line ")
    # the bad flow sequence starts on line 3 of the file; PyYAML reports where it gave up
    line = int(str(exc.value).split("line ")[1].split(":")[0])
    assert 3 <= line <= 5


def test_skill_md_over_100k_chars_is_refused() -> None:
    text = skill_md("big", body="x" * 100_001)
    with pytest.raises(SkillFormatError, match="limit is 100,000"):
        parse_skill_md(text)


def test_valid_skill_md_parses_all_optional_fields() -> None:
    text = skill_md(
        "docker-debug",
        extra="version: 1.2\nlicense: MIT\ntags: [docker, ops]\nrelated_skills: [k8s]\nmetadata: {team: a}\n",
    )
    parsed = parse_skill_md(text)
    assert parsed.name == "docker-debug"
    assert parsed.tags == ["docker", "ops"]
    assert parsed.frontmatter["metadata"] == {"team": "a"}
    assert parsed.body.strip() == "# Steps\n1. Do it."


def test_frontmatter_name_must_equal_skill_name() -> None:
    with pytest.raises(SkillFormatError, match="must be equal"):
        validate_skill_md(skill_md("other"), "mine")


def test_render_round_trips() -> None:
    text = render_skill_md({"tags": ["a"], "description": "Multi: colon", "name": "r"}, "Body here")
    assert text.startswith("---\nname: r\ndescription:")
    assert yaml.safe_load(text.split("---")[1]) == {"name": "r", "description": "Multi: colon", "tags": ["a"]}
    assert parse_skill_md(text).body.strip() == "Body here"
