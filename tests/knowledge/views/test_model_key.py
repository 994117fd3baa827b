"""The model connection, one form on the first-run panel and on the settings page: Check asks the
server with what is typed and saves nothing; Save writes config.yaml and the key file (0600) and
only then says so; bad values come back on their field with what was typed, and nothing is written."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from foundation import config as hermes_config
from tests.conftest import write_config
from tests.fakellm import ScriptedLLM

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}
SAVE, CHECK = "/settings/connection/", "/settings/connection/check/"


@pytest.fixture(autouse=True)
def _no_model_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HERMES_MODEL"):
        monkeypatch.delenv(name, raising=False)
    hermes_config.reset()


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    """A model server the form is pointed at (not configured anywhere yet)."""
    llm = ScriptedLLM()
    llm.models = ["connect-model", "other-model"]
    llm.start()
    yield llm
    llm.stop()


def post(client, url: str, place: str = "settings", htmx: bool = True, **fields: str):
    data = {"base_url": "", "key": "", "model": "", "place": place, **fields}
    return client.post(url, data, **(HX if htmx else {}))


def test_both_places_show_the_same_form(auth_client, home: Path) -> None:
    first_run = auth_client.get("/").content.decode()
    settings = auth_client.get("/settings/").content.decode()
    for page, place in ((first_run, "setup"), (settings, "settings")):
        assert 'id="model-connection"' in page and f'name="place" value="{place}"' in page
        for name in ("base_url", "key", "model"):
            assert f'id="conn-{name}"' in page
        assert 'id="connection-check"' in page and 'id="connection-save"' in page
        assert 'id="connection-saved"' not in page  # the banner comes after a save only
    assert 'id="setup-panel"' in first_run
    assert 'name="model.base_url"' not in settings  # one place to set it: the connection form


def test_save_writes_the_config_and_the_key_and_then_says_so(auth_client, home: Path) -> None:
    resp = post(auth_client, SAVE, base_url="http://127.0.0.1:11434/v1", key="sk-proj-verysecret-7777", model="m1")
    body = resp.content.decode()
    assert resp.status_code == 200 and 'id="connection-saved"' in body and "verysecret" not in body
    assert "API key ending <code>…7777</code>" in body and 'id="conn-key" value=""' in body
    on_disk = yaml.safe_load((home / "config.yaml").read_text())["model"]
    assert (on_disk["base_url"], on_disk["name"]) == ("http://127.0.0.1:11434/v1", "m1")
    assert "api_key" not in on_disk and (home / "api_key").read_text().strip() == "sk-proj-verysecret-7777"
    assert stat.S_IMODE((home / "api_key").stat().st_mode) == 0o600
    page = auth_client.get("/settings/").content.decode()
    assert "the key <strong>saved here</strong>, ending <code>…7777</code>" in page and "verysecret" not in page
    assert 'id="setup-panel"' not in auth_client.get("/").content.decode()  # a model is configured now
    # An empty key field keeps the saved key.
    post(auth_client, SAVE, base_url="http://127.0.0.1:11434/v1", model="m2")
    assert (home / "api_key").read_text().strip() == "sk-proj-verysecret-7777"
    assert hermes_config.get().model_name == "m2"


def test_the_first_run_panel_says_what_to_do_next_after_saving(auth_client, home: Path) -> None:
    body = post(auth_client, SAVE, place="setup", base_url="http://127.0.0.1:8080/v1", model="local").content.decode()
    assert "Send your first message below." in body


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"base_url": "not a url", "model": "m"}, "base_url", "must be an http:// or https:// address"),
        ({"base_url": "http://h:99999", "model": "m"}, "base_url", "must be an http:// or https:// address"),
        ({"key": "sk with space", "model": "m"}, "key", "without spaces"),
        ({"key": "k" * 501, "model": "m"}, "key", "at most 500"),
        ({"base_url": "http://127.0.0.1:8080/v1"}, "model", "Name the model"),
    ],
)
def test_bad_values_come_back_on_their_field_and_nothing_is_written(auth_client, home: Path, fields, field, words):
    write_config(home, "model:\n  name: ''\n")
    before = (home / "config.yaml").read_bytes()
    resp = post(auth_client, SAVE, **fields)
    body = resp.content.decode()
    assert resp.status_code == 200  # htmx swaps 2xx only: the form comes back in place
    assert f'id="conn-err-{field}"' in body and words in body and 'aria-invalid="true"' in body
    assert 'id="connection-saved"' not in body
    for value in fields.values():
        if len(value) < 100:
            assert f'value="{value}"' in body  # what was typed stays
    assert (home / "config.yaml").read_bytes() == before and not (home / "api_key").exists()


def test_check_asks_the_server_with_what_is_typed_and_saves_nothing(auth_client, home, server) -> None:
    before = (home / "config.yaml").read_bytes()
    body = post(
        auth_client, CHECK, base_url=server.base_url, key="sk-typed-1234", model="connect-model"
    ).content.decode()
    assert "Connected — the server lists 2 models: connect-model, other-model." in body
    assert '<li data-step="chat">Plain chat: yes' in body  # the capability probe ran on the typed model
    assert "Checked only: nothing was saved." in body and 'id="connection-saved"' not in body
    assert f'value="{server.base_url}"' in body and 'value="sk-typed-1234"' in body  # ready to Save as is
    assert (home / "config.yaml").read_bytes() == before and not (home / "api_key").exists()
    assert hermes_config.get().model_name == ""


def test_check_needs_no_model_name_and_says_when_the_model_is_not_listed(auth_client, home, server) -> None:
    body = post(auth_client, CHECK, base_url=server.base_url).content.decode()
    assert "Connected — the server lists 2 models" in body and 'id="conn-err-model"' not in body
    body = post(auth_client, CHECK, base_url=server.base_url, model="connect-modle").content.decode()
    assert "The model “connect-modle” is not in that list; check its spelling." in body


def test_check_says_why_the_server_cannot_be_reached(auth_client, home: Path) -> None:
    write_config(home, "model:\n  max_retries: 0\n  timeout: 2\n")
    body = post(auth_client, CHECK, base_url="http://127.0.0.1:9/v1", model="m").content.decode()
    assert "Could not connect" in body and 'id="connection-saved"' not in body


def test_check_refuses_a_bad_base_url_without_asking(auth_client, home: Path) -> None:
    body = post(auth_client, CHECK, base_url="ftp://x.example/v1").content.decode()
    assert 'id="conn-err-base_url"' in body and "Connected" not in body and "Could not connect" not in body


def test_the_environments_values_are_shown_in_use_and_never_written(auth_client, home, monkeypatch) -> None:
    write_config(home, "model:\n  base_url: http://file.example/v1\n  name: file-model\n")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.example:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-8888")
    body = auth_client.get("/settings/").content.decode()
    assert 'id="conn-base_url" value="http://env.example:8000/v1"' in body
    assert 'id="conn-env-base_url">in use from $OPENAI_BASE_URL' in body
    assert "the key <strong>from $OPENAI_API_KEY</strong>, ending <code>…8888</code>" in body
    assert "sk-env-key" not in body
    post(auth_client, SAVE, base_url="http://typed.example/v1", model="typed-model")
    on_disk = yaml.safe_load((home / "config.yaml").read_text())["model"]
    assert (on_disk["base_url"], on_disk["name"]) == ("http://file.example/v1", "typed-model")


def test_the_saved_key_is_removed(auth_client, home: Path) -> None:
    post(auth_client, SAVE, key="sk-remove-9999", model="m")
    page = auth_client.get("/settings/").content.decode()
    assert 'id="connection-remove-key"' in page
    body = post(auth_client, SAVE, model="m", remove_key="on").content.decode()
    assert not (home / "api_key").exists() and "No key yet." in body


def test_without_javascript_save_returns_to_the_page_and_check_shows_the_settings_page(auth_client, home, server):
    resp = post(auth_client, SAVE, place="setup", htmx=False, base_url=server.base_url, model="connect-model")
    assert resp.status_code == 302 and resp["Location"] == "/"
    resp = post(auth_client, CHECK, htmx=False, base_url=server.base_url, model="connect-model")
    body = resp.content.decode()
    assert resp.status_code == 200 and "<h1>Settings</h1>" in body and "Connected" in body
    resp = post(auth_client, SAVE, htmx=False, base_url="nope", model="m")
    assert resp.status_code == 400 and 'id="conn-err-base_url"' in resp.content.decode()
