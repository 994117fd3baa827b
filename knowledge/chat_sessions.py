"""The conditional changes of a chat session's row (`ChatSession.objects`): each is one UPDATE
whose WHERE clause is the condition, so two processes racing for the same row cannot both win,
and the row is never read first. Each returns whether (or on how many rows) it took.

The single-row changes every caller may make (rename, pin, count a model call's tokens) are
ChatSession's own class methods (knowledge/models.py); the policies that decide when to call
these (how long a lease lasts, whether a holder is alive) stay with their modules:
knowledge/history/turns.py, knowledge/history/session_ends.py, agent/chat/titles.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db import models

from knowledge.compiled_query import RowUpdate
from knowledge.history.workers import IN_QUEUE

# Every turn takes its session's lease and gives it back (and a slow one renews it): a session
# row by its id and its holder ("": nobody), the SQL compiled once (knowledge/compiled_query.py).
_BY_HOLDER = RowUpdate(("pk", "turn_worker"))


class ChatSessionQuerySet(models.QuerySet[Any]):
    # -- the running turn's lease (knowledge/history/turns.py) --------------------------------
    def claim_free_turn(self, pk: str, worker: str, now: datetime, until: datetime) -> bool:
        """Take a session nobody holds a turn of, in one statement: the usual case of a turn."""
        taken = {"turn_worker": worker, "turn_started_at": now, "turn_lease_until": until}
        return bool(_BY_HOLDER.run(self.model, (pk, ""), taken))

    def take_turn(self, pk: str, worker: str, now: datetime, until: datetime) -> None:
        """Take the turn whatever the row says: the caller holds the row locked and found the
        holder dead or its lease run out."""
        self.filter(pk=pk).update(turn_worker=worker, turn_started_at=now, turn_lease_until=until)

    def renew_turn(self, pk: str, worker: str, until: datetime) -> None:
        """Extend the lease of a turn `worker` still holds (a lost one stays lost)."""
        _BY_HOLDER.run(self.model, (pk, worker), {"turn_lease_until": until})

    def renew_turns(self, pks: Iterable[str], worker: str, until: datetime) -> int:
        """Extend the leases `worker` still holds among these sessions; how many it held."""
        return int(self.filter(pk__in=pks, turn_worker=worker).update(turn_lease_until=until))

    def release_turn(self, pk: str, worker: str) -> None:
        """The turn ended: free the session if `worker` still holds it. The start is cleared too,
        which tells a watching socket the turn ended rather than was lost."""
        _BY_HOLDER.run(self.model, (pk, worker), {"turn_worker": "", "turn_lease_until": None, "turn_started_at": None})

    def give_up_turn(self, pk: str, worker: str, started_at: datetime | None) -> bool:
        """Free the turn `worker` started at `started_at`, found lost (its lease ran out, its
        process is gone), unless it moved on. The start is kept, so the socket watching that turn
        tells it was lost, not ended."""
        held = self.filter(pk=pk, turn_worker=worker, turn_started_at=started_at)
        return bool(held.update(turn_worker="", turn_lease_until=None))

    def free_dead_turn(self, pk: str, worker: str) -> int:
        """At start-up: free a session whose holder `worker` died, unless another took it since."""
        return int(self.filter(pk=pk, turn_worker=worker).update(turn_worker="", turn_lease_until=None))

    # -- ending a session once (knowledge/history/session_ends.py) -----------------------------
    def request_end(self, pk: str, reason: str, holder: str) -> bool:
        """Ask for the end of a session nobody ended or asked to end yet; `holder` will do it."""
        return bool(
            self.filter(pk=pk, ended_at__isnull=True, end_worker="").update(end_worker=holder, end_reason=reason)
        )

    def claim_end(self, pk: str, worker: str) -> bool:
        """Take an end waiting on the queue (or already `worker`'s) for `worker` to run."""
        return bool(
            self.filter(pk=pk, ended_at__isnull=True, end_worker__in=(IN_QUEUE, worker)).update(end_worker=worker)
        )

    def pass_end(self, pk: str, holder: str, to: str) -> bool:
        """Hand an end not yet done from `holder` to `to` ("": nobody, IN_QUEUE, or a worker);
        False if `holder` no longer has it (another process moved it first)."""
        return bool(self.filter(pk=pk, ended_at__isnull=True, end_worker=holder).update(end_worker=to))

    # -- the title (agent/chat/titles.py) ------------------------------------------------------
    def title_by_model(self, pk: str, title: str) -> bool:
        """The model's title replaces the first message's, never a person's: False if the chat
        was renamed (or deleted) meanwhile."""
        return bool(self.filter(pk=pk, title_source="message").update(title=title, title_source="model"))
