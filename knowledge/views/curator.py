"""The skill curator on the skills pages: pin or unpin a skill, archive one by hand, restore an
archived one, and ask for a report now (a dry run, like the periodic one: its proposals wait in the
inbox).

Pinning, archiving and restoring are the person's own acts, so they are done at once; an archive or
a restore is recorded in the change log and can be undone there.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from knowledge.models import SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills import archive, curator
from knowledge.skills.format import SkillError
from knowledge.skills.store import SkillStore
from knowledge.views.forms import errors_text

USER = Provenance(actor="user")


class PinForm(forms.Form):
    """Pin (the curator never proposes it) or unpin one skill."""

    pin = forms.ChoiceField(
        choices=[("1", "Pin"), ("0", "Unpin")], error_messages={"required": "Say whether to pin or unpin."}
    )
    back = forms.ChoiceField(choices=[("list", "the list"), ("detail", "the skill's page")], required=False)

    def __init__(self, data: Any = None, *, store: SkillStore, name: str, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.store, self.name = store, name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.store.find(self.name) is None:
            self.add_error(None, f"There is no skill '{self.name}'.")
        return data

    def save(self) -> bool:
        pinned = self.cleaned_data["pin"] == "1"
        SkillUsage.objects.update_or_create(name=self.name, defaults={"pinned": pinned})
        return pinned


@require_POST
def pin(request: HttpRequest, name: str) -> HttpResponse:
    form = PinForm(request.POST, store=SkillStore(), name=name)
    if not form.is_valid():
        messages.error(request, errors_text(form))
    elif form.save():
        messages.success(request, f"Pinned '{name}': the curator will never propose it.")
    else:
        messages.success(request, f"Unpinned '{name}'.")
    if form.is_valid() and form.cleaned_data["back"] == "detail":
        return redirect("skill_detail", name=name)
    return redirect(f"{reverse('skills')}#skill-{name}")


@require_POST
def archive_now(request: HttpRequest, name: str) -> HttpResponse:
    """The person archives a skill themselves (no report needed: it is their own act)."""
    try:
        change = archive.archive(SkillStore(), name, USER, why="by hand")
    except SkillError as exc:
        messages.error(request, f"Not archived: {exc}")
        return redirect("skills")
    messages.success(request, f"Archived '{name}'; restore it below or undo change #{change.pk}.")
    return redirect(f"{reverse('skills')}#archived")


@require_POST
def restore(request: HttpRequest, folder: str) -> HttpResponse:
    try:
        change = archive.restore(SkillStore(), folder, USER)
    except SkillError as exc:
        messages.error(request, f"Not restored: {exc}")
        return redirect(f"{reverse('skills')}#archived")
    messages.success(
        request, f"Restored '{change.target}': it is back in the prompt and the slash menu (undo: change #{change.pk})."
    )
    return redirect(f"{reverse('skills')}#skill-{change.target}")


@require_POST
def run_now(request: HttpRequest) -> HttpResponse:
    run = curator.run_now()
    waiting = run.pendingwrite_set.count()
    if waiting:
        messages.success(request, f"Curator report #{run.pk}: {waiting} proposal(s) wait for you; nothing changed yet.")
        return redirect(f"{reverse('pending')}?review={run.pk}")
    messages.info(request, "The curator has nothing to propose.")
    return redirect("skills")
