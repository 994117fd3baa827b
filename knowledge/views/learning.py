"""Learning in the conversation: 👍/👎 on answers, the 💾 learned line's Undo, the per-session
prompt page."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from foundation import config as hermes_config
from knowledge import prompt_blocks, undo, versions
from knowledge.models import ChatSession, KnowledgeChange, Message
from knowledge.provenance import Provenance
from knowledge.skills import outcomes
from knowledge.views.changes import UNDO_ERRORS
from knowledge.views.forms import errors_text

USER = Provenance(actor="user")
NOTE_CHARS = 2000  # what AnswerFeedback keeps of a note
_WHICH = "Which answer was not said (message_id is not an answer's number)."


class FeedbackForm(forms.Form):
    """👍/👎 on one answer (`message_id`), or on the session's latest answer (`latest=1`, for an
    answer streamed into the page before its id was known)."""

    message_id = forms.IntegerField(
        required=False,
        min_value=1,
        error_messages={"invalid": _WHICH, "min_value": _WHICH},
    )
    latest = forms.BooleanField(required=False)
    verdict = forms.ChoiceField(
        choices=[("good", "👍"), ("bad", "👎")],
        error_messages={
            "required": "The verdict must be 'good' (👍) or 'bad' (👎); none was given.",
            "invalid_choice": "The verdict must be 'good' (👍) or 'bad' (👎), not %(value)s.",
        },
    )
    note = forms.CharField(
        required=False,
        max_length=NOTE_CHARS,
        error_messages={"max_length": f"A note is at most {NOTE_CHARS:,} characters; shorten it to save the verdict."},
    )

    def answer(self, session_id: str) -> Message | None:
        """The answer the verdict is about, in this chat; None when there is no such answer."""
        answers = Message.objects.filter(session_id=session_id, role="assistant").exclude(content="")
        if self.cleaned_data.get("message_id"):
            return answers.filter(pk=self.cleaned_data["message_id"]).first()
        if self.cleaned_data.get("latest"):
            # The latest of the version shown.
            return answers.exclude(id__in=versions.off_path_of(session_id)).order_by("-id").first()
        return None


@require_POST
def feedback(request: HttpRequest, session_id: str) -> JsonResponse:
    form = FeedbackForm(request.POST)
    if not form.is_valid():
        # As the chat's other JSON endpoints answer (agent/chat/actions.py): one line, and per field.
        fields = {name: list(errors) for name, errors in form.errors.items()}
        return JsonResponse({"ok": False, "error": errors_text(form), "fields": fields}, status=400)
    message = form.answer(session_id)
    if message is None:
        return JsonResponse({"ok": False, "error": "That answer was not found in this chat."}, status=404)
    verdict = form.cleaned_data["verdict"]
    outcomes.give_verdict(message, verdict, form.cleaned_data["note"].strip())
    return JsonResponse({"ok": True, "message_id": message.pk, "verdict": verdict})


@require_POST
def learned_undo(request: HttpRequest, pk: int) -> HttpResponse:
    """Undo one change from the chat's 💾 line, then back to the answer it followed."""
    change = get_object_or_404(KnowledgeChange, pk=pk)
    try:
        done = undo.undo(change, USER)
    except UNDO_ERRORS as exc:
        messages.error(request, f"Undo failed: {exc}")
        done = None
    if done is not None:
        messages.success(request, f"Undid: {change.summary or change.action}.")
    anchor = f"#m{change.review.upto_message_id}" if change.review and change.review.upto_message_id else ""
    if change.session_id:
        return redirect(f"/c/{change.session_id}/{anchor}")
    return redirect("change_detail", pk=pk)


@require_GET
def prompt_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    blocks = prompt_blocks.split(session.system_prompt, hermes_config.get())
    return render(
        request,
        "knowledge/prompt.html",
        {"nav": "chat", "session": session, "blocks": blocks, "total": len(session.system_prompt)},
    )
