"""Versions in place, for the chats of before (0019_message_versions made the columns).

Until now an edit or a regenerate made a new chat (a fork: `ChatSession.parent`) holding copies
of the messages before the edited one. Each fork is folded back into the chat it came from: its
copies are dropped for the messages they copy (everything pointing at a copy now points at the
original), its own messages join that chat as the next version of the turn where it began, and
what belonged to the fork (reviews, changes, held writes, outcomes) belongs to that chat. The
version shown is the one written last; the forks' rows are removed, so the sidebar lists one chat
(the column that linked them goes in 0021_forget_forks).

A migration of its own: on PostgreSQL a table cannot be altered (nor indexed) in the transaction
that changed its rows under deferred foreign keys ("pending trigger events").
"""

from django.db import migrations
from django.db.models import OuterRef, Subquery


# What a fork copied from each message (the fields the fork code copied), compared to find the copies.
COMPARED = ("role", "content", "tool_calls", "tool_call_id", "tool_name")
CHUNK = 500


def _chunks(ids):
    ids = list(ids)
    for at in range(0, len(ids), CHUNK):
        yield ids[at : at + CHUNK]


def link_messages(apps, schema_editor):
    """Every message follows the one before it in its chat (chats were straight lines)."""
    message = apps.get_model("knowledge", "Message")
    before = message.objects.filter(session_id=OuterRef("session_id"), id__lt=OuterRef("id")).order_by("-id")
    message.objects.update(parent_id=Subquery(before.values("id")[:1]))


def _copied(mine, theirs):
    """How many of the fork's first messages are the parent chat's first messages."""
    k = 0
    while k < min(len(mine), len(theirs)) and mine[k][1:] == theirs[k][1:]:
        k += 1
    return k


def _fold(apps, forks):
    """Fold each fork into its chat (a fork of a fork into the first chat); returns
    ({copy id: original id}, {fork id: chat id}, {message id: the chat it was written in})."""
    message = apps.get_model("knowledge", "Message")
    involved = {pk for pair in forks for pk in pair}
    rows = {pk: [] for pk in involved}
    for row in (
        message.objects.filter(session_id__in=involved).order_by("id").values_list("session_id", "id", *COMPARED)
    ):
        rows[row[0]].append(row[1:])
    copies, chat_of = {}, {}
    origin = {row[0]: sid for sid, chat_rows in rows.items() for row in chat_rows}

    def original(pk):
        while pk in copies:
            pk = copies[pk]
        return pk

    for fork, parent in forks:
        chat = chat_of.get(parent, parent)
        mine, theirs = rows[fork], rows[parent]
        k = _copied(mine, theirs)
        for at in range(k):
            copies[mine[at][0]] = original(theirs[at][0])
        own = [row[0] for row in mine[k:]]
        if own:
            message.objects.filter(pk=own[0]).update(parent_id=original(theirs[k - 1][0]) if k else None)
            for ids in _chunks(own):
                message.objects.filter(pk__in=ids).update(session_id=chat)
        chat_of[fork] = chat
    return {copy: original(copy) for copy in copies}, chat_of, origin


def _repoint_messages(apps, copies, chats):
    """Whatever named a copy names its original; a copy's 👍/👎 moves unless the original has one."""
    feedback = apps.get_model("knowledge", "AnswerFeedback")
    for row in feedback.objects.filter(message_id__in=list(copies)):
        if feedback.objects.filter(message_id=copies[row.message_id]).exists():
            row.delete()
        else:
            feedback.objects.filter(pk=row.pk).update(message_id=copies[row.message_id])
    fields = [
        ("ReviewRun", "upto_message_id"),
        ("KnowledgeChange", "message_id"),
        ("SkillOutcome", "user_message_id"),
        ("SkillOutcome", "answer_message_id"),
    ]
    for model_name, name in fields:
        model = apps.get_model("knowledge", model_name)
        for pk, value in model.objects.filter(**{f"{name}__in": list(copies)}).values_list("pk", name):
            model.objects.filter(pk=pk).update(**{name: copies[value]})
    change = apps.get_model("knowledge", "KnowledgeChange")
    for row in change.objects.filter(session_id__in=chats).only("pk", "evidence"):
        quotes = row.evidence if isinstance(row.evidence, list) else []
        if any(isinstance(q, dict) and q.get("message_id") in copies for q in quotes):
            moved = [{**q, "message_id": copies.get(q.get("message_id"), q.get("message_id"))} for q in quotes]
            change.objects.filter(pk=row.pk).update(evidence=moved)


def _move_session_rows(apps, chat_of):
    for model_name in ("ReviewRun", "KnowledgeChange", "PendingWrite", "SkillOutcome"):
        model = apps.get_model("knowledge", model_name)
        for fork, chat in chat_of.items():
            model.objects.filter(session_id=fork).update(session_id=chat)


# The live state of a chat, taken from the chat whose version is shown (the one written last).
LIVE_FIELDS = (
    "system_prompt", "context_summary", "context_head_to", "context_cut_to", "compression_count",
    "last_compressed_at", "turns_since_memory", "iters_since_skill", "ended_at", "end_reason", "end_worker",
)  # fmt: skip


def _recount(apps, chat_of, copies, origin):
    """Each chat's counters over all its versions; its live state from the chat that wrote last."""
    session, message = apps.get_model("knowledge", "ChatSession"), apps.get_model("knowledge", "Message")
    for chat_id in set(chat_of.values()):
        chat = session.objects.get(pk=chat_id)
        forks = {f.pk: f for f in session.objects.filter(pk__in=[f for f, c in chat_of.items() if c == chat_id])}
        rows = list(message.objects.filter(session_id=chat_id).values_list("id", "role", "tool_calls"))
        shown = forks.get(origin.get(max(pk for pk, _role, _calls in rows))) if rows else None
        if shown is not None:
            for name in LIVE_FIELDS:
                setattr(chat, name, getattr(shown, name))
            chat.context_head_to = copies.get(chat.context_head_to, chat.context_head_to)
            chat.context_cut_to = copies.get(chat.context_cut_to, chat.context_cut_to)
        chat.message_count = len(rows)
        chat.user_turn_count = sum(1 for _pk, role, _calls in rows if role == "user")
        chat.tool_call_count = sum(len(calls or []) for _pk, _role, calls in rows)
        chat.prompt_tokens += sum(f.prompt_tokens for f in forks.values())
        chat.completion_tokens += sum(f.completion_tokens for f in forks.values())
        updated = max([chat.updated_at, *(f.updated_at for f in forks.values())])
        chat.leaf_id = None  # the newest message: the version written last is shown
        chat.save()
        # save() would set updated_at to now (auto_now): the chat keeps its place in the list.
        session.objects.filter(pk=chat_id).update(updated_at=updated)


def merge_forks(apps, schema_editor):
    session = apps.get_model("knowledge", "ChatSession")
    forks = list(session.objects.exclude(parent=None).order_by("started_at", "id").values_list("id", "parent_id"))
    if not forks:
        return
    copies, chat_of, origin = _fold(apps, forks)
    _repoint_messages(apps, copies, set(chat_of) | set(chat_of.values()))
    message = apps.get_model("knowledge", "Message")
    for ids in _chunks(copies):
        message.objects.filter(pk__in=ids).delete()
    _move_session_rows(apps, chat_of)
    _recount(apps, chat_of, copies, origin)
    session.objects.filter(pk__in=list(chat_of)).delete()


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0019_message_versions")]

    operations = [
        migrations.RunPython(link_messages, migrations.RunPython.noop),
        migrations.RunPython(merge_forks, migrations.RunPython.noop),
    ]
