"""config.yaml inside Django: a wrong value is a system check error naming the key; each request
starts with the settings as last saved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import checks
from django.http import HttpRequest, HttpResponse
from django.test import override_settings

from foundation import config as hermes_config
from hermes_site.config_django import CONFIG_ERROR, QUEUE_ERROR, ConfigRefreshMiddleware, check_config


@pytest.fixture
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    hermes_config.reset()
    yield tmp_path
    hermes_config.reset()


def test_a_wrong_value_is_a_system_check_error_naming_the_key(own_home: Path) -> None:
    (own_home / "config.yaml").write_text("memory:\n  nudge_interval: -2\n")
    errors = [e for e in checks.run_checks() if e.id == CONFIG_ERROR]  # registered by the agent app
    assert len(errors) == 1
    assert errors[0].obj == "memory.nudge_interval"
    assert errors[0].msg == "config.yaml: memory.nudge_interval must be a whole number >= 0, got -2"
    assert errors[0].is_serious()
    assert "memory.nudge_interval" in (errors[0].hint or "")


def test_a_good_file_passes_the_check(own_home: Path) -> None:
    (own_home / "config.yaml").write_text("memory:\n  nudge_interval: 2\n")
    assert check_config() == []


def test_a_file_that_is_not_yaml_is_a_check_error(own_home: Path) -> None:
    (own_home / "config.yaml").write_text("memory: [unclosed\n")
    (error,) = check_config()
    assert error.id == CONFIG_ERROR and "config.yaml is not valid YAML" in error.msg


def test_an_unknown_queue_is_a_system_check_error() -> None:
    with override_settings(HERMES_QUEUE="celery"):
        errors = [e for e in checks.run_checks() if e.id == QUEUE_ERROR]
    assert [e.msg for e in errors] == ["HERMES_QUEUE must be 'threads' or 'tasks', got 'celery'"]


def test_each_request_starts_with_the_file_as_last_saved(own_home: Path) -> None:
    (own_home / "config.yaml").write_text("memory:\n  nudge_interval: 3\n")
    hermes_config.get()
    view = ConfigRefreshMiddleware(lambda request: HttpResponse(str(hermes_config.get().memory.nudge_interval)))
    new = own_home / "saved.yaml"
    new.write_text("memory:\n  nudge_interval: 8\n")
    new.replace(own_home / "config.yaml")  # another worker's save
    assert view(HttpRequest()).content == b"8"
