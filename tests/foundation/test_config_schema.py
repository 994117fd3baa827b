"""The keys of config.yaml, declared once: typed values, checked when built, listed for forms."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from foundation import config as hermes_config
from foundation.config import Config, ConfigError
from foundation.config_schema import SETTINGS, MemorySettings, all_settings, defaults, lookup, value_kind


def test_values_from_the_file_are_typed(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "model:\n  timeout: 30\nmemory:\n  nudge_interval: 3\nskills:\n  disabled: [a, b]\nlearning:\n  evidence: off\n"
    )
    cfg = hermes_config.load(tmp_path)
    assert cfg.memory.nudge_interval == 3 and type(cfg.memory.nudge_interval) is int
    assert cfg.model.timeout == 30.0 and type(cfg.model.timeout) is float  # `30` in YAML is an int
    assert cfg.skills.disabled == ("a", "b")
    assert cfg.learning.evidence == "off"  # YAML 1.1 reads a bare `off` as false
    assert cfg.memory.flush_min_turns == 6  # left out: its default
    assert cfg.data["skills"]["disabled"] == ["a", "b"]  # as the file holds it


def test_a_config_is_frozen(tmp_path: Path) -> None:
    cfg = Config(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.memory.nudge_interval = 2  # type: ignore[misc]


def test_a_section_built_in_code_is_checked_like_the_file() -> None:
    with pytest.raises(ConfigError) as err:
        MemorySettings(nudge_interval=-1)
    assert err.value.key == "memory.nudge_interval"
    assert str(err.value) == "config.yaml: memory.nudge_interval must be a whole number >= 0, got -1"
    with pytest.raises(ConfigError, match="memory.write_approval must be true or false"):
        MemorySettings(write_approval="yes")  # type: ignore[arg-type]


def test_tests_build_a_config_object_with_changed_keys(tmp_path: Path) -> None:
    base = Config(tmp_path)
    cfg = base.with_values({"memory.nudge_interval": 1, "review.model": "small"})
    assert (cfg.memory.nudge_interval, cfg.review_model) == (1, "small")
    assert base.memory.nudge_interval == 10  # the original is unchanged
    with pytest.raises(ConfigError, match="compression.threshold"):
        base.with_values({"compression.threshold": 2.0})
    with pytest.raises(ConfigError, match="memory.nudge is not a setting"):
        base.with_values({"memory.nudge": 1})


def test_every_key_is_listed_once_with_type_default_help_and_choices(tmp_path: Path) -> None:
    listed = list(all_settings())
    assert len({s.name for s in listed}) == len(listed) == len(SETTINGS)
    assert Config(tmp_path).data == defaults()  # the defaults come from the one declaration
    nudge = lookup("memory.nudge_interval")
    assert (nudge.type, nudge.default, nudge.label, nudge.help) == (
        int,
        10,
        "Memory review every N user turns",
        "0: off",
    )
    evidence = lookup("learning.evidence")
    assert evidence.choices == ("off", "required") and evidence.kind == "choice"
    assert lookup("model.base_url").env == "OPENAI_BASE_URL"
    assert all(s.label and s.allowed for s in listed)


def test_value_kind_for_the_settings_form() -> None:
    assert value_kind("memory", "write_approval") == "bool"
    assert value_kind("model", "timeout") == "number"
    assert value_kind("review", "model") == "text"
    assert value_kind("learning", "evidence") == "text"
