"""Shared fixtures: a temporary HERMES_HOME, the scripted model server, fresh config.

The test settings (tests/settings.py, loaded by pytest-django before this module) chose one
temporary HERMES_HOME for this pytest process; each test that touches files gets a clean copy of
the memories/skills folders through the `home` fixture.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from hypothesis import settings as hypothesis_settings

# Property tests explore the same examples on every run, so the suite's verdict on a commit never
# depends on luck; `--hypothesis-profile=explore` draws fresh ones to hunt for new failures, and
# what it finds becomes a plain test case.
hypothesis_settings.register_profile("deterministic", derandomize=True, database=None)
hypothesis_settings.register_profile("explore", derandomize=False, max_examples=5000)
hypothesis_settings.load_profile("deterministic")

_SESSION_HOME = Path(settings.HERMES_HOME)
# Subprocesses (daphne, manage.py, scripts/serve.sh) run the product's own settings with the
# home each test passes them, never the test settings that would re-home them.
os.environ["DJANGO_SETTINGS_MODULE"] = "hermes_site.settings"
for _var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HERMES_MODEL"):
    os.environ.pop(_var, None)

from foundation import config as hermes_config  # noqa: E402
from tests.daphne import with_test_defaults  # noqa: E402
from tests.fakellm import ScriptedLLM  # noqa: E402


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A clean HERMES_HOME (same path for the whole process, emptied per test)."""
    for child in ("memories", "skills", "attachments", "config.yaml", "api_key"):
        p = _SESSION_HOME / child
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    write_config(_SESSION_HOME, "")
    yield _SESSION_HOME
    hermes_config.reset()


def write_config(home: Path, text: str) -> None:
    """config.yaml of this process's home: `text`, with the tests' defaults for what it leaves out.

    Tests script the model's replies one by one and read "the last request": a title request after
    a chat's first answer would take a reply meant for something else, so the automatic title is
    off unless a test's config turns it on (`chat.auto_title`)."""
    (home / "config.yaml").write_text(with_test_defaults(text), encoding="utf-8")
    hermes_config.reset()


@pytest.fixture
def llm(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLM]:
    """A scripted OpenAI-compatible server on loopback, configured as the model."""
    server = ScriptedLLM()
    server.start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("HERMES_MODEL", "scripted-model")
    hermes_config.reset()
    yield server
    server.stop()


@pytest.fixture
def auth_client(client, db):
    """A Django test client logged in with the printed token, as a person would be."""
    from hermes_site.access import login_token

    resp = client.get(f"/login?token={login_token()}")
    assert resp.status_code == 302
    return client


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    """A scripted model server answering "answer to <last user text>", for subprocess tests
    (which get its URL through tests.cli.new_home rather than this process's environment)."""
    from tests.fakellm import Reply, last_user_text

    s = ScriptedLLM()
    s.start()
    s.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    yield s
    s.stop()
