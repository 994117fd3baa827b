"""One check of a person's message for the browser and the terminal: the same refusal, in the same
words, and nothing stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agent.chat import service as chat_service
from agent.chat.validation import MAX_ROW_ID, images_of, message_error
from knowledge.models import Message
from tests.agent.ws import open_socket
from tests.cli import new_home
from tests.conftest import write_config

TOO_LONG = "The message is 101 characters; the limit is 100. Nothing was sent."
EMPTY = "The message is empty. Nothing was sent."
NOT_IDS = '"images" must be a list of the ids of attached images (whole numbers). Nothing was sent.'


def test_a_message_within_the_limit_passes():
    assert message_error("hello", 100) is None
    assert message_error("x" * 100, 100) is None  # exactly the limit


def test_an_empty_or_blank_message_is_refused():
    assert message_error("", 100) == EMPTY
    assert message_error(" \n\t ", 100) == EMPTY


def test_an_oversized_message_says_both_numbers_with_separators():
    assert message_error("x" * 101, 100) == TOO_LONG
    assert message_error("x" * 12_345, 10_000) == (
        "The message is 12,345 characters; the limit is 10,000. Nothing was sent."
    )


@pytest.fixture
def ws_owner(transactional_db: None) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("owner")


@pytest.mark.django_db(transaction=True)
async def test_the_browser_gets_the_validators_words_and_nothing_is_stored(llm: Any, home: Path, ws_owner: Any) -> None:
    write_config(home, "agent:\n  max_message_chars: 100\n")
    session_id = (await sync_to_async(chat_service.create_session)()).pk
    comm = await open_socket(f"/ws/chat/{session_id}/", ws_owner)
    for text, expected in (("x" * 101, TOO_LONG), ("   ", EMPTY)):
        await comm.send_json_to({"type": "message", "text": text})
        assert await comm.receive_json_from(timeout=5) == {"type": "error", "error": expected}
    stored = Message.objects.filter(session_id=session_id, role="user")
    assert not await sync_to_async(stored.exists)()
    assert not llm.chat_requests()
    await comm.disconnect()


@pytest.mark.slow
def test_the_terminal_gets_the_same_words_and_nothing_is_stored(tmp_path, server):
    home = new_home(tmp_path, server.base_url)
    (home.path / "config.yaml").write_text("agent:\n  max_message_chars: 100\n")
    r = home.manage("chat", "-m", "x" * 101)
    assert r.returncode == 1
    assert f"error: {TOO_LONG}" in r.stderr and "Traceback" not in r.stderr
    assert home.query("select count(*) from knowledge_message where role='user'") == [(0,)]
    assert not server.requests


def test_image_ids_are_whole_numbers_a_database_row_can_have():
    assert images_of({"images": [1, MAX_ROW_ID, 1]}, 4) == ((1, MAX_ROW_ID), None)
    for bad in ([MAX_ROW_ID + 1], [10**30], [0], [-3], [2.0], ["2"], [None], "2", {"id": 2}):
        ids, problem = images_of({"images": bad}, 4)
        assert ids == () and problem == NOT_IDS, bad
    ids, problem = images_of({"images": [1] * 100_000}, 4)
    assert problem == "A message can carry 4 images; this one has 100,000. Nothing was sent."
