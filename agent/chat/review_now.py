"""Review on demand (docs/BEHAVIOUR.md, The learning loop): the chat menu's "Review this chat now",
with an optional focus, and `/refine [focus]` typed in the chat's message box (static/js/chat/refine.js)
start the same background review the counters start, at once. Its 💾 toast follows as any review's.
"""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_POST

from agent.chat import live
from agent.chat.runner import default_client_factory
from agent.learning.review import MAX_FOCUS_CHARS, ReviewRefused, request_review
from agent.toolset import build_registry
from foundation import config as hermes_config
from knowledge.models import ChatSession
from knowledge.views.forms import errors_text


class ReviewNowForm(forms.Form):
    focus = forms.CharField(
        required=False,
        max_length=MAX_FOCUS_CHARS,
        error_messages={"max_length": f"Keep the focus under {MAX_FOCUS_CHARS} characters."},
    )


def started_text(focus: str) -> str:
    """What the person who asked reads while the review runs."""
    about = f", focusing on: {focus}" if focus else ""
    return f"💾 Reviewing this chat now{about}. What it saves shows here when it is done."


@require_POST
def review_now(request: HttpRequest, session_id: str) -> JsonResponse:
    session = get_object_or_404(ChatSession, pk=session_id)
    form = ReviewNowForm(request.POST)
    if not form.is_valid():
        fields = {name: list(errors) for name, errors in form.errors.items()}
        return JsonResponse({"error": errors_text(form), "fields": fields}, status=400)
    focus = " ".join(form.cleaned_data["focus"].split())
    config = hermes_config.get()
    try:
        request_review(
            session, focus, config=config, registry=build_registry(config), client_factory=default_client_factory
        )
    except ReviewRefused as exc:
        return JsonResponse({"error": str(exc)}, status=409)
    # Every open page of this chat shows "Review running…" until the review's toast arrives.
    live.send_after_turn(session.pk, live.REVIEW_STARTED, {"session_id": session.pk}, f"review of {session.pk}")
    return JsonResponse({"started": True, "focus": focus, "message": started_text(focus)})
