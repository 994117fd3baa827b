"""The chat tests' logged-in person and their chat, for the consumer tests."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from agent.chat import service as chat_service


@pytest.fixture
def owner(transactional_db):
    return get_user_model().objects.create_user("owner")


@pytest.fixture
def session_id(llm, transactional_db) -> str:
    return chat_service.create_session().pk
