"""The 💾 line a chat keeps under the answer a review followed."""

from __future__ import annotations

import pytest

from knowledge import undo as knowledge_undo
from knowledge.history import learned
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message, PendingWrite, ReviewRun
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db


def test_a_review_line_lists_its_changes_and_waiting_writes_under_its_answer(home):
    session = ChatSession.objects.create()
    answer = Message.objects.create(session=session, role="assistant", content="ok")
    run = ReviewRun.objects.create(session=session, prompt_kind="memory", status="done", upto_message_id=answer.pk)
    quiet = ReviewRun.objects.create(session=session, prompt_kind="memory", status="done", upto_message_id=answer.pk)
    MemoryStore().add(
        "memory", "Staging host is stage-7", Provenance(actor="review", session_id=session.pk, review_id=run.pk)
    )
    PendingWrite.objects.create(
        kind="memory", tool_name="memory", arguments={}, session=session, review=run, unsupported=True
    )
    [line] = learned.for_session(session.pk)
    assert line.run == run and line.upto_message_id == answer.pk and line.waiting == 1
    [change] = line.changes
    knowledge_undo.undo(change)
    # The undo itself is not listed as something the review learned.
    assert [c.pk for c in learned.for_session(session.pk)[0].changes] == [change.pk]
    assert quiet.pk not in [ln.run.pk for ln in learned.for_session(session.pk)]
