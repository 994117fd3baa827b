from __future__ import annotations

import pytest

from hermes_site import config as hermes_config
from hermes_site.config import ConfigError, validate
from tests.cli import CLIHome


def test_first_run_creates_config_with_defaults(tmp_path):
    cfg = hermes_config.load(tmp_path)
    assert (tmp_path / "config.yaml").exists()
    assert cfg.get("memory", "memory_char_limit") == 2200
    assert cfg.get("memory", "user_char_limit") == 1375
    assert cfg.get("memory", "nudge_interval") == 10
    assert cfg.get("skills", "creation_nudge_interval") == 10
    assert cfg.get("compression", "threshold") == 0.5
    assert cfg.get("review", "max_iterations") == 8
    assert cfg.context_window == 128_000


def test_partial_file_is_merged_over_defaults(tmp_path):
    (tmp_path / "config.yaml").write_text("memory:\n  nudge_interval: 3\n")
    cfg = hermes_config.load(tmp_path)
    assert cfg.get("memory", "nudge_interval") == 3
    assert cfg.get("memory", "flush_min_turns") == 6


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"memory": {"nudge_interval": "ten"}}, "memory.nudge_interval"),
        ({"memory": {"nudge_interval": -1}}, "memory.nudge_interval"),
        ({"memory": {"memory_enabled": "yes"}}, "memory.memory_enabled"),
        ({"compression": {"threshold": 2}}, "compression.threshold"),
        ({"skills": {"disabled": "foo"}}, "skills.disabled"),
        ({"memory": {"user_char_limit": 0}}, "memory.user_char_limit"),
        ({"review": {"max_iterations": True}}, "review.max_iterations"),
    ],
)
def test_wrong_value_names_the_key(raw, key):
    with pytest.raises(ConfigError) as err:
        validate(raw)
    assert key in str(err.value)


def test_unknown_key_is_a_warning_not_an_error():
    data, warnings = validate({"memory": {"nudge_intervall": 3}, "extra": {}})
    assert data["memory"]["nudge_interval"] == 10
    assert any("memory.nudge_intervall" in w for w in warnings)


def test_env_overrides(tmp_path, monkeypatch):
    (tmp_path / "config.yaml").write_text("model:\n  name: from-file\n  base_url: http://file/v1\n")
    monkeypatch.setenv("HERMES_MODEL", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    cfg = hermes_config.load(tmp_path)
    assert (cfg.model_name, cfg.base_url, cfg.api_key) == ("from-env", "http://env/v1", "sk-env")


def test_bad_config_stops_startup_with_one_clear_line(tmp_path):
    home = CLIHome(tmp_path / "h")
    home.path.mkdir()
    (home.path / "config.yaml").write_text("memory:\n  nudge_interval: lots\n")
    r = home.manage("check")
    assert r.returncode != 0
    assert "memory.nudge_interval" in r.stderr
    assert "Traceback" not in r.stderr


def test_database_is_sqlite_in_home_with_wal(tmp_path):
    home = CLIHome(tmp_path / "h")
    home.path.mkdir()
    home.migrate()
    assert (home.path / "dashboard.sqlite3").exists()
    r = home.manage(
        "shell",
        "-c",
        "from django.db import connection; c=connection.cursor(); "
        "c.execute('PRAGMA journal_mode'); print(c.fetchone()[0]); c.execute('PRAGMA busy_timeout'); print(c.fetchone()[0])",
    )
    assert r.stdout.split()[-2:] == ["wal", "20000"], r.stderr
