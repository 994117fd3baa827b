"""The settings page: saves config.yaml with start-up validation; errors name the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from foundation import config as hermes_config
from knowledge.views.forms import SettingsForm
from tests.hermes_home import HERMES_CONFIG

pytestmark = pytest.mark.django_db


def form(**overrides: Any) -> dict[str, Any]:
    """The form as the page shows it for the current config, with some fields changed."""
    values: dict[str, Any] = {}
    for name, field in SettingsForm(config=hermes_config.get()).fields.items():
        if isinstance(field.initial, bool):
            if field.initial:
                values[name] = "on"
        else:
            values[name] = str(field.initial)
    for key, value in overrides.items():
        name = key.replace("__", ".")
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value
    return values


def test_page_shows_current_values(auth_client, home: Path) -> None:
    body = auth_client.get("/settings/").content.decode()
    assert 'name="memory.nudge_interval"' in body and 'value="10"' in body
    assert 'name="compression.enabled" id="id-compression.enabled" checked' in body


def test_save_writes_config_and_next_session_uses_it(auth_client, home: Path) -> None:
    hermes_config.get()
    resp = auth_client.post(
        "/settings/",
        form(
            memory__nudge_interval="4",
            memory__user_char_limit="2000",
            skills__write_approval="on",
            compression__enabled=None,
            compression__threshold="0.7",
            model__timeout="30",
            review__model="small-model",
        ),
    )
    assert resp.status_code == 200 and 'id="settings-saved"' in resp.content.decode()
    on_disk = yaml.safe_load((home / "config.yaml").read_text())
    assert on_disk["memory"]["nudge_interval"] == 4 and on_disk["memory"]["user_char_limit"] == 2000
    assert on_disk["skills"]["write_approval"] is True and on_disk["compression"]["enabled"] is False
    assert on_disk["compression"]["threshold"] == 0.7 and on_disk["review"]["model"] == "small-model"
    assert on_disk["chat"] == {"auto_title": False}  # keys not on the form are kept
    cfg = hermes_config.get()  # reset: the next reader sees the new file
    assert cfg.memory.nudge_interval == 4 and cfg.model.timeout == 30


def test_save_keeps_skills_disabled_list(auth_client, home: Path) -> None:
    (home / "config.yaml").write_text("skills:\n  disabled: [old-skill]\n")
    hermes_config.reset()
    auth_client.post("/settings/", form(memory__nudge_interval="3"))
    assert yaml.safe_load((home / "config.yaml").read_text())["skills"]["disabled"] == ["old-skill"]


@pytest.mark.parametrize(
    "field,value,key",
    [
        ("memory__nudge_interval", "-1", "memory.nudge_interval"),
        ("memory__nudge_interval", "ten", "memory.nudge_interval"),
        ("memory__memory_char_limit", "0", "memory.memory_char_limit"),
        ("memory__user_char_limit", "", "memory.user_char_limit"),
        ("compression__threshold", "1.5", "compression.threshold"),
        ("model__timeout", "[1, 2", "model.timeout"),
        ("review__max_iterations", "500", "review.max_iterations"),
        ("model__context_window", "true", "model.context_window"),
    ],
)
def test_bad_value_names_the_key_and_saves_nothing(auth_client, home: Path, field: str, value: str, key: str) -> None:
    hermes_config.get()
    before = (home / "config.yaml").read_bytes()
    resp = auth_client.post("/settings/", form(memory__flush_min_turns="2", **{field: value}))
    assert resp.status_code == 400
    body = resp.content.decode()
    assert f"config.yaml: {key}" in body
    assert f'id="err-{key}"' in body  # next to the field
    assert 'id="settings-error"' in body  # and at the top
    assert f'name="{key}" id="id-{key}" value="{value}"' in body or value == "[1, 2"  # what was typed stays
    assert (home / "config.yaml").read_bytes() == before


def test_hostile_text_values_are_inert(auth_client, home: Path) -> None:
    hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    auth_client.post("/settings/", form(review__model=hostile, model__timeout=hostile))
    body = auth_client.get("/settings/").content.decode()
    assert "<script>alert" not in body and "<img" not in body


def test_save_from_a_hermes_config_changes_only_the_edited_key(auth_client, home: Path) -> None:
    (home / "config.yaml").write_text(HERMES_CONFIG)
    hermes_config.reset()
    resp = auth_client.post("/settings/", form(memory__nudge_interval="4"))
    assert resp.status_code == 200 and 'id="settings-saved"' in resp.content.decode()
    after = (home / "config.yaml").read_text()
    assert after == HERMES_CONFIG.replace("  nudge_interval: 10\n", "  nudge_interval: 4\n")


def test_page_shows_what_the_model_server_can_do(auth_client, llm) -> None:
    from django.core.management import call_command

    from tests.fakellm import Reply
    from tests.wire.ollama import CASES
    from tests.wire.replay import uses

    body = auth_client.get("/settings/").content.decode()
    assert "not checked yet" in body and 'data-feature="tools" data-state="unknown"' in body
    no_tools = next(c for c in CASES if c.refuses == "tools")
    llm.when(uses("tools"), Reply(raw=no_tools.raw))
    call_command("check_model")  # the probe, as a person runs it
    body = auth_client.get("/settings/").content.decode()
    assert 'data-feature="tools" data-state="no"' in body and 'data-feature="system_role" data-state="yes"' in body
    assert "cannot save memories or skills itself" in body and "checked 20" in body
