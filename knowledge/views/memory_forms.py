"""The memory page's forms: an entry (new or edited), an entry's delete, the merge of two
near-duplicate entries.

Each `clean()` runs the memory store's own checks on the file as it is now (`check_entry`,
`check`), and words a refusal for a person on the field it is about: the store's own text is
written for the model ("use action 'replace' ... retry"). Nothing is written until the form is valid.
"""

from __future__ import annotations

from typing import Any

from django import forms

from knowledge.memory.ops import TARGETS, OpError, Overflow
from knowledge.memory.store import MemoryStore, Result, WriteRefused
from knowledge.provenance import Provenance

USER = Provenance(actor="user")
TARGET_CHOICES = [(name, name) for name in TARGETS]
_NOT_GIVEN = "Nothing merged: the entries to merge were not given (reload the memory page and try again)."


def over_limit_message(label: str, overflow: Overflow) -> str:
    """The store's figures for a person (its own text tells the model to consolidate and retry)."""
    after, limit, rest = overflow.after, overflow.limit, overflow.after - overflow.added
    return (
        f"Too long to save: {label} holds at most {limit:,} characters, and this would make it {after:,} "
        f"({after - limit:,} over). Shorten this entry, or edit or delete other entries first. Nothing was saved. "
        f"This entry is {overflow.added:,} characters; the rest of {label.lower()} uses {rest:,}."
    )


def in_words(store: MemoryStore, target: str, err: OpError, content: str) -> str:
    """The store's refusal is worded for the model ("use action 'replace' ... retry"); this is for a person."""
    if err.overflow is not None:
        return over_limit_message(store.spec(target).label, err.overflow)
    if err.kind == "invalid" and not content.strip():
        return "The entry is empty: an entry needs non-empty text. Nothing was saved."
    if err.kind == "drift":  # the store's words tell the model to re-read; a person sees the file
        return drift_in_words(store, target)
    return err.message


def drift_in_words(store: MemoryStore, target: str) -> str:
    return (
        f"{store.spec(target).filename} was changed outside the dashboard (by hand or by another agent) since it "
        "was last read; a backup was kept. The page shows the file as it is now: press the button again if you "
        "still mean it."
    )


def _lf(text: str) -> str:
    # Browsers submit textarea line breaks as CRLF; the files (and `expected`) use LF.
    return text.replace("\r\n", "\n")


class MemoryEntryForm(forms.Form):
    """A new entry (no `index`) or the edit of entry `index`, checked by the store before it is written."""

    content = forms.CharField(required=False, strip=False, widget=forms.Textarea)
    expected = forms.CharField(required=False, strip=False, widget=forms.HiddenInput)

    def __init__(
        self, data: Any = None, *, store: MemoryStore, target: str, index: int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(data, **kwargs)
        self.store, self.target, self.index = store, target, index

    def clean_content(self) -> str:
        return _lf(str(self.cleaned_data["content"]))

    def clean_expected(self) -> str | None:
        """The entry text the page showed, so the store refuses an edit of a since-changed entry."""
        if "expected" not in self.data:
            return None
        return _lf(str(self.cleaned_data["expected"]))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "content" in data:
            try:
                self.store.check_entry(self.target, data["content"], self.index, data.get("expected"))
            except OpError as err:
                self.add_error("content", self._in_words(err))
        return data

    def _in_words(self, err: OpError) -> str:
        return in_words(self.store, self.target, err, self.cleaned_data.get("content", ""))

    def save(self) -> Result | None:
        content, expected = self.cleaned_data["content"], self.cleaned_data.get("expected")
        if self.index is None:
            result = self.store.add_entry(self.target, content, USER)
        else:
            result = self.store.edit_entry(self.target, self.index, content, USER, expected=expected)
        if result["success"]:
            return result
        try:  # refused by a change made since clean(): the same words for the file as it is now
            self.store.check_entry(self.target, content, self.index, expected)
            self.add_error("content", str(result["error"]))
        except OpError as err:
            self.add_error("content", self._in_words(err))
        return None


class MemoryDeleteForm(forms.Form):
    """Delete entry `index`; `expected` is the text the page showed, so a since-changed entry is kept."""

    expected = forms.CharField(required=False, strip=False, widget=forms.HiddenInput)

    def clean_expected(self) -> str | None:
        if "expected" not in self.data:
            return None
        return _lf(str(self.cleaned_data["expected"]))


class MemoryMergeForm(forms.Form):
    """Two near-duplicate entries become one: `keep` takes the merged `content`, `drop` goes.

    Both steps are checked against the files before either is written, so a merge the store would
    refuse halfway (the kept entry not updated after the duplicate was removed) is refused whole."""

    keep_target = forms.ChoiceField(
        choices=TARGET_CHOICES, error_messages={"required": _NOT_GIVEN, "invalid_choice": _NOT_GIVEN}
    )
    keep = forms.CharField(strip=False, widget=forms.HiddenInput, error_messages={"required": _NOT_GIVEN})
    drop_target = forms.ChoiceField(
        choices=TARGET_CHOICES, error_messages={"required": _NOT_GIVEN, "invalid_choice": _NOT_GIVEN}
    )
    drop = forms.CharField(strip=False, widget=forms.HiddenInput, error_messages={"required": _NOT_GIVEN})
    content = forms.CharField(required=False, strip=False, widget=forms.Textarea)

    def __init__(self, data: Any = None, *, store: MemoryStore, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.store = store

    def clean_content(self) -> str:
        return _lf(str(self.cleaned_data["content"]))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        keep, drop = data["keep"], data["drop"]
        if keep not in self.store.entries(data["keep_target"]) or drop not in self.store.entries(data["drop_target"]):
            self.add_error(
                None,
                "Nothing merged: one of the two entries changed since the page was shown; the page shows them as "
                "they are now.",
            )
            return data
        if not data["content"].strip():
            self.add_error(
                "content", "The merged entry is empty: write the text the two entries become. Nothing was merged."
            )
            return data
        # Both halves are checked, each whatever the other says, so everything that stops the merge
        # is said at once (and an outside edit of either file is logged, so the next press goes ahead).
        problems: list[str] = []
        for target, ops in (
            (data["drop_target"], [{"action": "remove", "old_text": drop}]),
            (data["keep_target"], self._replacement()),
        ):
            try:
                self.store.check(target, ops)
            except OpError as err:
                said = in_words(self.store, target, err, data["content"])
                problems += [said] if said not in problems else []
        if problems:
            self.add_error("content", "Nothing merged: " + " ".join(problems))
        return data

    def _replacement(self) -> list[dict[str, str]]:
        data = self.cleaned_data
        return [{"action": "replace", "old_text": data["keep"], "content": data["content"]}]

    def matches(self, keep_target: str, keep: str, drop_target: str, drop: str) -> bool:
        """Whether this (posted) form is the one of the pair shown as these two entries."""
        posted = (self["keep_target"].value(), self["keep"].value(), self["drop_target"].value(), self["drop"].value())
        return posted == (keep_target, keep, drop_target, drop)

    def save(self) -> bool:
        """Give the kept entry the merged text, then remove the duplicate; False (and the error) if
        refused. Both were checked in clean(); in this order a write refused after all (the disk)
        leaves the text twice, never lost."""
        data = self.cleaned_data
        try:
            self.store.write(data["keep_target"], self._replacement(), USER)
        except WriteRefused as refused:
            self.add_error("content", "Nothing merged: " + self._refusal(data["keep_target"], refused))
            return False
        try:
            self.store.write(data["drop_target"], [{"action": "remove", "old_text": data["drop"]}], USER)
        except WriteRefused as refused:
            why = self._refusal(data["drop_target"], refused)
            self.add_error(None, f"The kept entry holds the merged text, but the duplicate is still there: {why}")
            return False
        return True

    def _refusal(self, target: str, refused: WriteRefused) -> str:
        if refused.kind == "drift":
            return drift_in_words(self.store, target)
        return str(refused.result.get("error", ""))
