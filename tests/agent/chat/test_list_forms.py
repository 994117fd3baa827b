"""The chat list's forms and a chat's settings form: what each accepts, and the words of each refusal."""

from __future__ import annotations

import pytest

from agent.chat.list_forms import TAGS_PER_CHAT, ChatSettingsForm, FlagForm, TagForm
from knowledge.chat_tags import ChatTag
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("temperature", "error"),
    [
        ("2.5", "from 0 to 2 (got 2.5)"),
        ("-0.1", "from 0 to 2 (got -0.1)"),
        ("warm", "a number from 0 to 2, like 0.7"),
        ("nan", "a number from 0 to 2, like 0.7"),
        ("inf", "a number from 0 to 2, like 0.7"),
    ],
)
def test_a_temperature_outside_0_to_2_is_refused_and_nothing_is_saved(temperature, error):
    session = ChatSession.objects.create(instructions="before", temperature=0.5)
    form = ChatSettingsForm({"instructions": "after", "temperature": temperature})
    assert not form.is_valid()
    assert error in form.errors["temperature"][0]
    session.refresh_from_db()
    assert (session.instructions, session.temperature) == ("before", 0.5)


@pytest.mark.parametrize(("typed", "stored"), [("0", 0.0), ("2", 2.0), ("0.7", 0.7), ("", None)])
def test_temperatures_from_0_to_2_and_blank_are_saved(typed, stored):
    session = ChatSession.objects.create()
    form = ChatSettingsForm({"instructions": "  Be brief.\r\nUse tables.  ", "temperature": typed})
    assert form.is_valid(), form.errors
    form.save(session)
    session.refresh_from_db()
    assert session.temperature == stored and session.instructions == "Be brief.\nUse tables."


def test_overlong_instructions_are_refused():
    form = ChatSettingsForm({"instructions": "x" * 8_001, "temperature": ""})
    assert not form.is_valid() and "at most 8,000 characters; these are 8,001" in form.errors["instructions"][0]


def test_pinning_and_archiving_do_not_change_when_the_chat_was_used():
    session = ChatSession.objects.create()
    used = ChatSession.objects.get(pk=session.pk).updated_at
    for action, value in (("pin", "1"), ("archive", "1")):
        form = FlagForm({"on": value})
        assert form.is_valid()
        getattr(form, action)(session)
    row = ChatSession.objects.get(pk=session.pk)
    assert row.pinned and row.archived_at is not None and row.updated_at == used
    form = FlagForm({"on": "0"})
    assert form.is_valid()
    form.archive(session)
    assert ChatSession.objects.get(pk=session.pk).archived_at is None


def test_tags_are_added_trimmed_removed_and_forgotten_when_unused():
    session = ChatSession.objects.create()
    form = TagForm({"add": "  #Work   notes "}, session=session)
    assert form.is_valid(), form.errors
    form.save()
    assert list(session.tags.values_list("name", flat=True)) == ["Work notes"]
    form = TagForm({"remove": "Work notes"}, session=session)
    assert form.is_valid()
    form.save()
    assert session.tags.count() == 0 and not ChatTag.objects.exists()


def test_empty_long_and_too_many_tags_are_refused():
    session = ChatSession.objects.create()
    assert TagForm({"add": "  "}, session=session).errors["__all__"] == ["Type a tag to add."]
    assert "at most 40 characters; this one is 41" in TagForm({"add": "x" * 41}, session=session).errors["add"][0]
    for i in range(TAGS_PER_CHAT):
        session.tags.add(ChatTag.objects.create(name=f"t{i}"))
    assert "at most 12 tags" in TagForm({"add": "one more"}, session=session).errors["add"][0]
    assert TagForm({"add": "t0"}, session=session).is_valid()  # already on it: not one more
