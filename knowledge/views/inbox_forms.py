"""The inbox's forms: a held write edited before it is approved, the bulk Approve / Reject of the
selected writes, a conflict's Replace / Keep both / Reject, the review the inbox is narrowed to
(`?review=N`) and "Approve all from this review".

An edit is checked by the store it will go to before it is approved (the memory store's `check`,
the skill format's `validate_skill_md`), so a refusal lands on the edited text in words for a
person and the write stays waiting with what was typed, instead of being approved and failing.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from knowledge.memory.ops import TARGETS, OpError
from knowledge.memory.store import MemoryStore
from knowledge.models import PendingWrite, ReviewRun
from knowledge.skills.format import SkillError, parse_skill_md, validate_skill_md
from knowledge.views.memory_forms import in_words

_PICK = "Pick one or more pending items, then Approve or Reject."
_DECIDE = "Pick Replace, Keep both or Reject."
DECISIONS = [("replace", "Replace"), ("keep", "Keep both"), ("reject", "Reject")]


def _lf(text: str) -> str:
    # Browsers submit textarea line breaks as CRLF; the files use LF.
    return text.replace("\r\n", "\n")


class PendingEditForm(forms.Form):
    """The person's edit of a held write: one argument (`field` names it, `value` is its text), or
    all of them as JSON (`arguments`). `edited` is the arguments to approve with; None: unedited."""

    field = forms.CharField(required=False, widget=forms.HiddenInput)
    value = forms.CharField(required=False, strip=False, widget=forms.Textarea)
    arguments = forms.CharField(required=False, strip=False, widget=forms.Textarea)

    def __init__(self, data: Any = None, *, item: PendingWrite, edit_key: str, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.item, self.edit_key = item, edit_key
        self.edited: dict[str, Any] | None = None

    @property
    def text_field(self) -> str:
        """The field the page edits for this write: one argument's text, or the JSON of all."""
        return "value" if self.edit_key else "arguments"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "value" in self.data and data.get("field"):
            if data["field"] != self.edit_key:
                self.add_error("value", f"Only this write's {self.edit_key or 'arguments'} can be edited here.")
                return data
            args = dict(self.item.arguments) if isinstance(self.item.arguments, dict) else {}
            args[data["field"]] = _lf(data.get("value", ""))
            self._check(args, "value")
        elif "arguments" in self.data:
            try:
                args = json.loads(data.get("arguments", ""))
            except json.JSONDecodeError as exc:
                self.add_error("arguments", f"The edited arguments are not valid JSON: {exc}. Nothing was approved.")
                return data
            if not isinstance(args, dict):
                self.add_error("arguments", "The edited arguments must be a JSON object ({…}). Nothing was approved.")
                return data
            self._check(args, "arguments")
        return data

    def _check(self, args: dict[str, Any], field: str) -> None:
        if self.item.kind == "curator":  # the curator's proposal is approved as it was made, or rejected
            self.add_error(field, "A curator proposal cannot be edited; approve or reject it. Nothing was approved.")
            return
        try:
            if self.item.kind == "memory":
                _check_memory(args)
            else:
                _check_skill(args)
        except ValidationError as exc:
            self.add_error(field, exc)
            return
        self.edited = args


def _check_memory(args: dict[str, Any]) -> None:
    target = args.get("target")
    if target not in TARGETS:
        raise ValidationError(f"'target' must be 'memory' or 'user' (got {target!r}). Nothing was approved.")
    batch = args.get("operations")
    ops = batch if isinstance(batch, list) else [{k: args[k] for k in ("action", "content", "old_text") if k in args}]
    store = MemoryStore()
    try:
        store.check(str(target), ops)
    except OpError as err:
        content = next((str(o.get("content", "")) for o in ops if isinstance(o, dict)), "")
        raise ValidationError(in_words(store, str(target), err, content) + " It is still waiting.") from err


def _check_skill(args: dict[str, Any]) -> None:
    if args.get("action") in ("create", "edit"):
        content = str(args.get("content", ""))
        try:
            # A new skill may name itself otherwise in its frontmatter (its folder is the name given), as Hermes'.
            if args.get("action") == "create":
                parse_skill_md(content)
            else:
                validate_skill_md(content, str(args.get("name", "")))
        except SkillError as exc:
            raise ValidationError(f"{exc} It is still waiting.") from exc


class IdsField(forms.Field):
    """The ids of the ticked items (`name="ids"`, one value each)."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[int]:
        values = value if isinstance(value, list | tuple) else [value] if value else []
        return [int(v) for v in values if str(v).isdigit()]

    def validate(self, value: Any) -> None:
        if not value:
            raise ValidationError(_PICK, code="required")


class BulkDecisionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("approve", "Approve"), ("reject", "Reject")],
        error_messages={"required": _PICK, "invalid_choice": _PICK},
    )
    ids = IdsField()

    def chosen(self) -> list[PendingWrite]:
        """The ticked writes still waiting (another tab may have decided some)."""
        return list(PendingWrite.objects.filter(pk__in=self.cleaned_data["ids"], status="pending").order_by("id"))


class ConflictDecisionForm(forms.Form):
    """Replace, Keep both or Reject; `waiting` says whether the item is still a conflict to decide."""

    decision = forms.ChoiceField(choices=DECISIONS, error_messages={"required": _DECIDE, "invalid_choice": _DECIDE})

    def __init__(self, data: Any = None, *, item: PendingWrite, waiting: bool, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.item, self.waiting = item, waiting

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.waiting:
            self.add_error(None, f"#{self.item.pk} is not a conflict waiting for a decision; nothing was done.")
        return data


class ReviewField(forms.ModelChoiceField[ReviewRun]):
    """A review run by its number: refused in words when it is not a number or names no run."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(queryset=ReviewRun.objects.select_related("session"), **kwargs)

    def to_python(self, value: Any) -> ReviewRun | None:
        if value in self.empty_values:
            return None
        text = str(value).strip()
        if not text.isdecimal():
            raise ValidationError(f"“{text[:40]}” is not a review number.", code="invalid")
        try:
            return self.queryset.get(pk=int(text))
        except ReviewRun.DoesNotExist:
            raise ValidationError(f"There is no review #{int(text)}.", code="invalid_choice") from None


class ReviewFilterForm(forms.Form):
    """`?review=N`: the inbox shows only what that review left waiting."""

    review = ReviewField(required=False)


class ApproveReviewForm(forms.Form):
    """Approve every write a review left waiting (its conflicts excepted: each needs its own choice)."""

    review = ReviewField(error_messages={"required": "Say which review's writes to approve."})
