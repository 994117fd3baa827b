"""The settings page's model key form: saved privately, refused with a reason, never shown back."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_a_saved_key_is_shown_by_its_last_four_characters_only(auth_client, home: Path) -> None:
    resp = auth_client.post("/settings/api-key/", {"key": "sk-proj-verysecret-7777"}, HTTP_HX_REQUEST="true")
    body = resp.content.decode()
    assert resp.status_code == 200 and "Key saved (ends …7777)." in body and "verysecret" not in body
    assert stat.S_IMODE((home / "api_key").stat().st_mode) == 0o600
    page = auth_client.get("/settings/").content.decode()
    assert "saved here</strong>, ending <code>…7777</code>" in page and "verysecret" not in page
    assert 'id="model-check-button"' in page


def test_the_environment_key_is_shown_as_the_one_in_use(auth_client, home: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-8888")
    page = auth_client.get("/settings/").content.decode()
    assert "from $OPENAI_API_KEY</strong>, ending <code>…8888</code>" in page and "sk-env-key" not in page


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"key": "sk with space"}, "without spaces"),
        ({"key": ""}, "Paste the API key"),
        ({"key": "k" * 501}, "at most 500"),
    ],
)
def test_a_bad_key_is_refused_and_nothing_is_written(auth_client, home: Path, data, error) -> None:
    resp = auth_client.post("/settings/api-key/", data)  # a plain post, without JavaScript
    assert resp.status_code == 400 and error in resp.content.decode()
    assert not (home / "api_key").exists()


def test_the_saved_key_is_removed(auth_client, home: Path) -> None:
    auth_client.post("/settings/api-key/", {"key": "sk-remove-9999"})
    resp = auth_client.post("/settings/api-key/", {"remove": "on"}, HTTP_HX_REQUEST="true")
    assert "The saved key was removed." in resp.content.decode() and not (home / "api_key").exists()
