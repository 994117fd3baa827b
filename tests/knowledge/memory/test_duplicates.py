"""Near duplicates refused before saving or queuing: memory entries across both files."""

from __future__ import annotations

import json

import pytest

from agent.tools.memory_tool import memory_tool
from agent.tools.registry import ToolContext
from knowledge.memory.duplicates import memory_duplicate
from knowledge.memory.store import MemoryStore
from knowledge.models import PendingWrite
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db

USER = Provenance(actor="user")


def test_entry_repeating_the_other_file_is_refused_and_replace_of_itself_is_not(home):
    store = MemoryStore()
    store.add("user", "Prefers Debian base images", USER)
    error = memory_duplicate(store, "memory", [{"action": "add", "content": "prefers debian base image"}])
    assert error is not None and "Prefers Debian base images" in error and "replace" in error
    same = [{"action": "replace", "old_text": "Debian", "content": "Prefers Debian base images, slim"}]
    assert memory_duplicate(store, "user", same) is None


def test_staged_review_write_never_repeats_a_saved_entry(home):
    MemoryStore().add("user", "Prefers Debian base images", USER)
    ctx = ToolContext(
        actor="review", stage_writes={"memory": True}, seen=[{"role": "user", "content": "I prefer Debian base images"}]
    )
    args = {
        "target": "user",
        "action": "add",
        "content": "Prefers Debian base images.",
        "evidence": "prefer Debian base images",
    }
    result = json.loads(memory_tool().handler(args, ctx).content())
    assert result["success"] is False and "nearly repeats" in result["error"]
    assert not PendingWrite.objects.exists()


def test_exact_repeat_in_the_same_file_stays_the_stores_no_op(home):
    MemoryStore().add("user", "Uses vim", USER)
    result = json.loads(
        memory_tool()
        .handler({"target": "user", "action": "add", "content": "Uses vim"}, ToolContext(actor="user"))
        .content()
    )
    assert result["success"] is True and result["changed"] is False
