"""The chat pages' forms, through the real views: the first-run panel, rename, fork and the chat's
model refuse bad input on the field, in plain words, keep what was typed and change nothing."""

from __future__ import annotations

import pytest
import yaml

from agent.chat import service as chat_service
from hermes_site import config as hermes_config
from knowledge.models import ChatSession, Message
from tests.conftest import write_config

pytestmark = pytest.mark.django_db(transaction=True)
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def chat(home) -> ChatSession:
    session = chat_service.create_session()
    for role, content in [("user", "question"), ("assistant", "answer")]:
        Message.objects.create(session=session, role=role, content=content)
    return session


# --- first-run setup --------------------------------------------------------------------------


def setup_post(client, **fields: str):
    return client.post("/setup/model/", {"base_url": "", "model": "m", "api_key_env": "", **fields}, **HX)


@pytest.mark.parametrize("url", ["not a url", "ftp://x.example/v1", "localhost:11434", "http:// spaced.example/v1"])
def test_setup_refuses_a_base_url_that_is_not_http(auth_client, home, url):
    write_config(home, "model:\n  name: ''\n")
    before = (home / "config.yaml").read_bytes()
    resp = setup_post(auth_client, base_url=url, model="llama3.1")
    html = resp.content.decode()
    assert resp.status_code == 200  # htmx swaps 2xx only: the panel comes back with the error
    assert 'id="setup-panel"' in html and 'id="setup-err-base_url"' in html
    assert "The base URL must be an http:// or https:// address" in html
    assert 'aria-invalid="true" aria-describedby="setup-err-base_url"' in html
    assert f'value="{url}"' in html and 'value="llama3.1"' in html  # what was typed stays
    assert "Saved to" not in html
    assert (home / "config.yaml").read_bytes() == before


def test_setup_saves_a_local_server_and_the_default_key_variable(auth_client, home):
    html = setup_post(auth_client, base_url="http://ollama:11434/v1", model="qwen2.5:7b").content.decode()
    assert "Saved to" in html
    saved = yaml.safe_load((home / "config.yaml").read_text())["model"]
    assert (saved["base_url"], saved["name"]) == ("http://ollama:11434/v1", "qwen2.5:7b")
    assert hermes_config.get().model.api_key_env == "OPENAI_API_KEY"  # the default, left out of the file


def test_setup_shows_the_base_url_in_use_from_the_environment(auth_client, home, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    html = auth_client.get("/").content.decode()
    assert "Connect a model" in html  # no model name yet
    assert 'name="base_url" id="setup-base_url" value="http://127.0.0.1:8080/v1"' in html
    assert 'id="setup-env-base_url">in use from $OPENAI_BASE_URL' in html
    setup_post(auth_client, base_url="http://elsewhere.example/v1", model="local")
    saved = yaml.safe_load((home / "config.yaml").read_text())["model"]
    assert saved["name"] == "local" and saved.get("base_url", "") == ""  # the file keeps its own value


def test_setup_refuses_a_key_variable_that_cannot_be_a_name(auth_client, home):
    write_config(home, "model:\n  name: ''\n")
    before = (home / "config.yaml").read_bytes()
    html = setup_post(auth_client, model="m", api_key_env="my key").content.decode()
    assert 'id="setup-err-api_key_env"' in html and "like OPENROUTER_API_KEY (got &#x27;my key&#x27;)" in html
    assert (home / "config.yaml").read_bytes() == before
    assert "Saved to" in setup_post(auth_client, model="m", api_key_env="MY_KEY").content.decode()
    assert yaml.safe_load((home / "config.yaml").read_text())["model"]["api_key_env"] == "MY_KEY"


# --- rename -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("title", "words"), [("   ", "Give the chat a title"), ("x" * 201, "at most 200 characters")])
def test_rename_refuses_an_empty_or_long_title_in_the_form(auth_client, chat, title, words):
    ChatSession.objects.filter(pk=chat.pk).update(title="Kept")
    resp = auth_client.post(f"/c/{chat.pk}/rename/", {"title": title}, **HX)
    html = resp.content.decode()
    assert resp.status_code == 200 and 'class="rename-form"' in html and 'id="rename-error"' in html
    assert words in html and 'aria-invalid="true"' in html and "HX-Trigger" not in resp
    assert ChatSession.objects.get(pk=chat.pk).title == "Kept"


def test_rename_posted_without_htmx_shows_the_chat_with_the_form_and_its_error(auth_client, chat):
    resp = auth_client.post(f"/c/{chat.pk}/rename/", {"title": ""})
    html = resp.content.decode()
    assert resp.status_code == 400
    assert f'data-session="{chat.pk}"' in html and 'class="rename-form"' in html and "Give the chat a title" in html


# --- versions and model ------------------------------------------------------------------------


def test_choosing_a_version_answers_every_error_by_field(auth_client, chat):
    resp = auth_client.post(f"/c/{chat.pk}/version/", {"message_id": "abc", "step": "0"})
    data = resp.json()
    assert resp.status_code == 400 and set(data["fields"]) == {"message_id", "step"}
    assert "not a number" in data["error"] and "step is -1 or 1" in data["error"]


@pytest.mark.parametrize(("name", "words"), [("  ", "Give a model name"), ("a b", "one word"), ("m" * 201, "200")])
def test_model_choice_answers_the_fields_error(auth_client, chat, name, words):
    resp = auth_client.post(f"/c/{chat.pk}/model/", {"model": name})
    assert resp.status_code == 400 and words in resp.json()["fields"]["model"][0]
    chat.refresh_from_db()
    assert chat.model == ""


# --- new chat and delete ----------------------------------------------------------------------


def test_delete_from_a_page_showing_no_chat_keeps_that_page(auth_client, chat):
    resp = auth_client.post(f"/c/{chat.pk}/delete/", {"current": ""}, **HX)
    assert resp.status_code == 204 and not ChatSession.objects.filter(pk=chat.pk).exists()


def test_new_chat_from_an_unknown_chat_just_opens_a_new_one(auth_client, chat):
    resp = auth_client.post("/c/new/", {"from": "no-such-chat"})
    assert resp.status_code == 302 and resp["Location"] != f"/c/{chat.pk}/"
    assert ChatSession.objects.count() == 2
