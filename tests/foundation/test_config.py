from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from foundation import config as hermes_config
from foundation.config import ConfigError, validate
from tests import dbs
from tests.cli import CLIHome, new_home
from tests.hermes_home import HERMES_CONFIG, HERMES_CONFIG_MODEL_MAPPING


def test_reading_a_home_without_a_file_gives_the_defaults_and_writes_nothing(tmp_path):
    cfg = hermes_config.load(tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert cfg.memory.memory_char_limit == 2200
    assert cfg.memory.user_char_limit == 1375
    assert cfg.memory.nudge_interval == 10
    assert cfg.skills.creation_nudge_interval == 10
    assert cfg.compression.threshold == 0.5
    assert cfg.review.max_iterations == 8
    assert cfg.context_window == 128_000


def test_partial_file_is_merged_over_defaults(tmp_path):
    (tmp_path / "config.yaml").write_text("memory:\n  nudge_interval: 3\n")
    cfg = hermes_config.load(tmp_path)
    assert cfg.memory.nudge_interval == 3
    assert cfg.memory.flush_min_turns == 6


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
    cfg = hermes_config.from_raw(Path("home"), {"memory": {"nudge_intervall": 3}, "extra": {}})
    assert cfg.memory.nudge_interval == 10
    assert any("memory.nudge_intervall" in w for w in cfg.warnings)


def test_env_overrides(tmp_path, monkeypatch):
    (tmp_path / "config.yaml").write_text("model:\n  name: from-file\n  base_url: http://file/v1\n")
    monkeypatch.setenv("HERMES_MODEL", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    cfg = hermes_config.load(tmp_path)
    assert (cfg.model_name, cfg.base_url, cfg.api_key) == ("from-env", "http://env/v1", "sk-env")


@pytest.mark.slow  # manage.py check in a subprocess
def test_bad_config_stops_startup_with_one_clear_line(tmp_path):
    home = CLIHome(tmp_path / "h")
    home.path.mkdir()
    (home.path / "config.yaml").write_text("memory:\n  nudge_interval: lots\n")
    r = home.manage("check")
    assert r.returncode != 0
    assert "memory.nudge_interval: (hermes.E001) config.yaml: memory.nudge_interval must be" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_serve_writes_the_defaults_on_first_run_and_check_writes_nothing(tmp_path):
    home = CLIHome(tmp_path / "h")
    r = home.manage("check")
    assert r.returncode == 0, r.stderr
    made = [p.name for p in home.path.glob("*") if p.name != ".test_database_url"]  # (the tests' own marker)
    assert made == []  # loading settings and checking them create no file
    home.migrate()  # the first use of the database makes the home's folder (and, by default, its SQLite file)
    assert not (home.path / "config.yaml").exists() and not (home.path / "secret_key").exists()
    assert hermes_config.write_defaults(home.path)
    text = (home.path / "config.yaml").read_text()
    assert "nudge_interval: 10" in text and hermes_config.load(home.path) == hermes_config.Config(home.path)
    assert not hermes_config.write_defaults(home.path)  # an existing file is never overwritten


@pytest.mark.skipif(dbs.on_postgres(), reason="the embedded default; DATABASE_URL names another database")
@pytest.mark.slow
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


# --- a home shared with Hermes Agent ----------------------------------------------------------


def _changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    a, b = before.splitlines(), after.splitlines()
    assert len(a) == len(b), after
    return [(x, y) for x, y in zip(a, b, strict=True) if x != y]


def test_save_changes_keeps_every_other_key_byte_for_byte(tmp_path):
    (tmp_path / "config.yaml").write_text(HERMES_CONFIG)
    hermes_config.save_changes({"memory.nudge_interval": 4}, tmp_path)
    after = (tmp_path / "config.yaml").read_text()
    assert _changed_lines(HERMES_CONFIG, after) == [("  nudge_interval: 10", "  nudge_interval: 4")]
    assert hermes_config.load(tmp_path).memory.nudge_interval == 4


def test_save_changes_adds_a_missing_key_inside_its_section_and_keeps_comments(tmp_path):
    text = "# mine\nmodel:\n  base_url: http://a/v1  # local\ntoolsets: [hermes-cli]\n"
    (tmp_path / "config.yaml").write_text(text)
    hermes_config.save_changes({"model.timeout": 30, "review.model": "small"}, tmp_path)
    after = (tmp_path / "config.yaml").read_text()
    assert after == (
        "# mine\nmodel:\n  base_url: http://a/v1  # local\n  timeout: 30\ntoolsets: [hermes-cli]\n"
        "review:\n  model: small\n"
    )


def test_model_string_stays_a_string_when_the_name_changes(tmp_path):
    (tmp_path / "config.yaml").write_text(HERMES_CONFIG)
    hermes_config.save_changes({"model.name": "openai/gpt-4o"}, tmp_path)
    after = (tmp_path / "config.yaml").read_text()
    assert _changed_lines(HERMES_CONFIG, after) == [("model: anthropic/claude-opus-4", "model: openai/gpt-4o")]


def test_model_string_becomes_hermes_mapping_form_for_other_keys(tmp_path):
    (tmp_path / "config.yaml").write_text(HERMES_CONFIG)
    cfg = hermes_config.save_changes({"model.base_url": "http://127.0.0.1:8000/v1"}, tmp_path)
    raw = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert raw["model"] == {"default": "anthropic/claude-opus-4", "base_url": "http://127.0.0.1:8000/v1"}
    assert cfg.model_name == "anthropic/claude-opus-4"
    assert {k: v for k, v in raw.items() if k != "model"} == {
        k: v for k, v in yaml.safe_load(HERMES_CONFIG).items() if k != "model"
    }


def test_a_bad_value_saves_nothing(tmp_path):
    (tmp_path / "config.yaml").write_text(HERMES_CONFIG)
    with pytest.raises(ConfigError, match="memory.nudge_interval"):
        hermes_config.save_changes({"memory.nudge_interval": -3}, tmp_path)
    assert (tmp_path / "config.yaml").read_text() == HERMES_CONFIG


@pytest.mark.parametrize("text", [HERMES_CONFIG, HERMES_CONFIG_MODEL_MAPPING])
def test_hermes_shapes_are_read(tmp_path, text):
    (tmp_path / "config.yaml").write_text(text)
    cfg = hermes_config.load(tmp_path)
    assert cfg.model_name == "anthropic/claude-opus-4"
    assert cfg.memory.provider == ""  # honcho is Hermes'; the dashboard runs without it
    assert any("memory.provider" in w and "honcho" in w for w in cfg.warnings)


def test_config_written_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "dotfiles" / "hermes-config.yaml"
    real.parent.mkdir()
    real.write_text(HERMES_CONFIG)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").symlink_to(real)
    hermes_config.save_changes({"memory.nudge_interval": 5}, tmp_path / "home")
    assert (tmp_path / "home" / "config.yaml").is_symlink()
    assert "  nudge_interval: 5\n" in real.read_text()


@pytest.mark.slow  # manage.py check in a subprocess
@pytest.mark.parametrize("text", [HERMES_CONFIG, HERMES_CONFIG_MODEL_MAPPING])
def test_startup_with_hermes_config_warns_once_and_runs(tmp_path, text):
    home = CLIHome(tmp_path / "h")
    home.path.mkdir()
    (home.path / "config.yaml").write_text(text)
    r = home.manage("check")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("memory.provider") == 1, r.stderr
    assert r.stderr.count("toolsets") == 1, r.stderr
    assert (home.path / "config.yaml").read_text() == text  # starting never rewrites it


@pytest.mark.slow
def test_terminal_chat_uses_the_model_named_in_hermes_string_shape(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text(HERMES_CONFIG)
    r = home.manage("chat", "-m", "hello", env={"HERMES_MODEL": ""})
    assert r.returncode == 0, r.stderr
    assert "answer to hello" in r.stdout
    assert server.requests[0]["model"] == "anthropic/claude-opus-4"
    assert (home.path / "config.yaml").read_text() == HERMES_CONFIG


def test_key_specs_describe_every_key_for_a_form():
    specs = {spec.name: spec for spec in hermes_config.key_specs()}
    assert set(specs) == {f"{s}.{k}" for s, keys in hermes_config.defaults().items() for k in keys}
    timeout = specs["model.timeout"]
    assert (timeout.field_kind, timeout.default, timeout.allowed) == (
        "float",
        60.0,
        "a number of seconds between 0 and 3600",
    )
    assert specs["chat.auto_title"].field_kind == "bool" and specs["skills.disabled"].field_kind == "list"
    evidence = specs["learning.evidence"]
    assert evidence.choices == ("off", "required") and evidence.coerce("off") == "off"
    with pytest.raises(hermes_config.ConfigError, match="config.yaml: learning.evidence must be"):
        evidence.coerce("sometimes")
    assert specs["memory.provider"].choices == ("", "session_recall", "mem0") and specs["model.name"].choices == ()


@pytest.mark.parametrize("written", ["off", "false", "no", "Off", '"false"', "'no'"])
def test_every_on_off_choice_written_unquoted_or_quoted_reads_as_off(tmp_path, written):
    # YAML 1.1 reads a bare off / no as false: start-up must not stop on it, for every on/off-like choice.
    (tmp_path / "config.yaml").write_text(f"learning:\n  verify: {written}\n  evidence: {written}\n")
    learning = hermes_config.load(tmp_path).learning
    assert (learning.verify, learning.evidence) == ("off", "off")


def test_true_reads_as_the_one_other_choice_and_nonsense_still_names_the_key(tmp_path):
    (tmp_path / "config.yaml").write_text("learning:\n  verify: true\n  evidence: yes\n")
    learning = hermes_config.load(tmp_path).learning
    assert (learning.verify, learning.evidence) == ("model", "required")
    (tmp_path / "config.yaml").write_text("learning:\n  verify: maybe\n")
    with pytest.raises(ConfigError, match="learning.verify must be"):
        hermes_config.load(tmp_path)
