"""The model key saved in the home: private from the moment it exists, used only when the
environment has none, and shown by its last four characters."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from foundation import config as hermes_config
from hermes_site.access import exposed_home_warning
from knowledge import api_key


@pytest.fixture
def config(home: Path, monkeypatch: pytest.MonkeyPatch) -> hermes_config.Config:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ROUTER_KEY", raising=False)
    return hermes_config.get()


def test_the_saved_key_file_is_readable_by_its_owner_only_and_replaced_whole(config, home: Path) -> None:
    api_key.save(config, "  sk-first-0000  ")
    path = home / "api_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert config.api_key == "sk-first-0000"
    api_key.save(config, "sk-second-1111")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and config.api_key == "sk-second-1111"
    assert [p.name for p in home.iterdir() if p.name.startswith(".api_key")] == []  # no temp file left
    assert "api_key" not in exposed_home_warning(home)
    path.chmod(0o644)  # widened by hand: the start-up warning names it
    assert str(path) in exposed_home_warning(home)


def test_the_environment_wins_and_is_said_to(config, monkeypatch: pytest.MonkeyPatch) -> None:
    api_key.save(config, "sk-saved-here-2222")
    assert api_key.status(config) == api_key.KeyStatus("file", "OPENAI_API_KEY", "…2222", "…2222")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-3333")
    assert config.api_key == "sk-from-env-3333"
    assert api_key.status(config) == api_key.KeyStatus("env", "OPENAI_API_KEY", "…3333", "…2222")


def test_the_named_variable_is_read_first(home: Path, monkeypatch: pytest.MonkeyPatch, config) -> None:
    (home / "config.yaml").write_text("model:\n  api_key_env: ROUTER_KEY\n", encoding="utf-8")
    hermes_config.reset()
    named = hermes_config.get()
    monkeypatch.setenv("ROUTER_KEY", "or-key-4444")
    assert named.api_key == "or-key-4444"
    assert api_key.status(named).env_name == "ROUTER_KEY"


def test_removing_the_key_and_masking(config, home: Path) -> None:
    assert api_key.remove(config) is False
    api_key.save(config, "sk-gone-5555")
    assert api_key.remove(config) is True and not (home / "api_key").exists() and config.api_key == ""
    assert api_key.status(config) == api_key.KeyStatus("", "OPENAI_API_KEY", "", "")
    assert api_key.masked("sk-abcdefgh1234") == "…1234"
    assert api_key.masked("short") == "…"  # a key this short would be half shown
