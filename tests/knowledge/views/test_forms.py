"""The curation pages' forms, through the real views: each bad input comes back on its field, in
words for a person, with what was typed kept and nothing written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from foundation import config as hermes_config
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from knowledge.views.forms import ELSEWHERE, PAGE, SettingsForm
from tests.conftest import write_config
from tests.knowledge.views.test_memory import HX
from tests.knowledge.views.test_settings import form as settings_form
from tests.knowledge.views.test_skills import skill_file, skill_md

pytestmark = pytest.mark.django_db


def post_settings(client, **changes: Any):
    return client.post("/settings/", settings_form(**changes))


# --- settings ---------------------------------------------------------------------------------


def test_the_settings_form_has_one_field_per_key_of_the_schema(auth_client, home: Path) -> None:
    on_page = [key for _, rows in PAGE for key, _, _ in rows]
    assert sorted(on_page + list(ELSEWHERE)) == sorted(spec.name for spec in hermes_config.key_specs())
    assert len(on_page) == len(set(on_page))
    body = auth_client.get("/settings/").content.decode()
    for key in on_page:
        assert f'name="{key}"' in body
    # Types from the schema: a checkbox, a choice of the schema's words, a number with its range and default.
    assert 'type="checkbox" name="chat.auto_title"' in body
    assert '<option value="off">off</option><option value="required" selected>required</option>' in body
    assert "a whole number from 1 to 50 · default: 8" in body


def test_a_choice_is_saved_as_the_word_and_a_wrong_word_is_refused(auth_client, home: Path) -> None:
    resp = post_settings(auth_client, learning__evidence="off", memory__provider="session_recall")
    assert resp.status_code == 200 and 'id="settings-saved"' in resp.content.decode()
    on_disk = yaml.safe_load((home / "config.yaml").read_text())
    assert on_disk["learning"]["evidence"] == "off" and on_disk["memory"]["provider"] == "session_recall"
    before = (home / "config.yaml").read_bytes()
    body = post_settings(auth_client, learning__evidence="sometimes").content.decode()
    assert 'id="err-learning.evidence"' in body and "learning.evidence must be &quot;off&quot; or" in body
    assert (home / "config.yaml").read_bytes() == before


def test_every_bad_field_gets_its_own_error(auth_client, home: Path) -> None:
    body = post_settings(
        auth_client, memory__nudge_interval="ten", compression__threshold="2", model__api_key_env="my key"
    ).content.decode()
    for key in ("memory.nudge_interval", "compression.threshold", "model.api_key_env"):
        assert f'id="err-{key}"' in body and f'aria-describedby="err-{key}"' in body
    assert 'href="#id-compression.threshold"' in body  # the summary at the top links to the field
    assert body.count('class="error field-error"') == 3


def test_only_changed_keys_are_written(auth_client, home: Path) -> None:
    write_config(home, "memory:\n  nudge_interval: 7\n")
    assert post_settings(auth_client, review__max_iterations="5").status_code == 200
    saved = yaml.safe_load((home / "config.yaml").read_text())
    # The test home's own defaults (no model titles, no verifier), written by write_config.
    saved.pop("chat", None)
    saved.pop("learning", None)
    assert saved == {"memory": {"nudge_interval": 7}, "review": {"max_iterations": 5}}


def test_the_form_reads_the_file_it_was_given(home: Path) -> None:
    write_config(home, "memory:\n  nudge_interval: 7\n")
    form = SettingsForm(config=hermes_config.load(home))
    assert form.fields["memory.nudge_interval"].initial == 7
    assert [title for title, _ in form.groups()] == [title for title, _ in PAGE]


# --- skills -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "category", "field", "words"),
    [
        ("Bad Name", "", "name", "is not allowed: use lowercase letters"),
        ("", "", "name", "The skill name is required"),
        ("good-name", "../up", "category", "category name"),
    ],
)
def test_new_skill_refuses_a_bad_name_or_category_on_its_field(auth_client, home, name, category, field, words):
    content = skill_md(name or "x")
    resp = auth_client.post("/skills/new/", {"name": name, "category": category, "content": content})
    html = resp.content.decode()
    assert resp.status_code == 200 and f'id="err-{field}"' in html and words in html
    assert 'aria-invalid="true"' in html and "Does things" in html  # the draft stays
    assert not (home / "skills").exists() or not any((home / "skills").rglob("SKILL.md"))


def test_new_skill_refuses_a_name_already_taken(auth_client, home):
    SkillStore().create("tea", skill_md("tea"), category="drinks", prov=Provenance())
    html = auth_client.post("/skills/new/", {"name": "tea", "content": skill_md("tea", "Other")}).content.decode()
    assert 'id="err-name"' in html and "A skill named &#x27;tea&#x27; already exists in category" in html
    assert "Other" in html


def test_the_skill_editor_keeps_the_draft_with_the_error(auth_client, home):
    SkillStore().create("tea", skill_md("tea"), prov=Provenance())
    before = skill_file(home, "tea").read_bytes()
    draft = skill_md("coffee", "Renamed by mistake")
    html = auth_client.post("/skills/tea/edit/", {"content": draft.replace("\n", "\r\n")}, **HX).content.decode()
    assert 'id="skill-editor"' in html and 'aria-describedby="skill-edit-error"' in html
    assert "Not saved: frontmatter: &#x27;name&#x27; is &#x27;coffee&#x27; but the skill is &#x27;tea&#x27;" in html
    assert "Renamed by mistake" in html
    assert skill_file(home, "tea").read_bytes() == before


def test_the_skill_editor_accepts_what_the_store_accepts(auth_client, home):
    # A SKILL.md placed without frontmatter (as Hermes allows) may stay without it: the form asks the store.
    path = home / "skills" / "release-notes" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("Write the notes from merged pull requests.\n", encoding="utf-8")
    resp = auth_client.post("/skills/release-notes/edit/", {"content": "Write them from the changelog.\n"}, **HX)
    assert resp.status_code == 200 and resp["HX-Redirect"] == "/skills/release-notes/"
    assert path.read_text(encoding="utf-8") == "Write them from the changelog.\n"
