"""Learning in the conversation: 👍/👎 on answers, the 💾 learned line's Undo, the per-session
prompt page."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from hermes_site import config as hermes_config
from knowledge import prompt_blocks, undo, versions
from knowledge.models import ChatSession, KnowledgeChange, Message
from knowledge.provenance import Provenance
from knowledge.skills import outcomes
from knowledge.views.changes import UNDO_ERRORS

USER = Provenance(actor="user")


@require_POST
def feedback(request: HttpRequest, session_id: str) -> JsonResponse:
    """👍/👎 on one answer (`message_id`), or on the session's latest answer (`latest=1`, for an
    answer streamed into the page before its id was known)."""
    answers = Message.objects.filter(session_id=session_id, role="assistant").exclude(content="")
    raw_id = request.POST.get("message_id", "")
    if raw_id.isdigit():
        message = answers.filter(pk=int(raw_id)).first()
    elif request.POST.get("latest"):
        # The latest of the version shown.
        message = answers.exclude(id__in=versions.off_path_of(session_id)).order_by("-id").first()
    else:
        message = None
    if message is None:
        return JsonResponse({"ok": False, "error": "That answer was not found in this chat."}, status=404)
    verdict = request.POST.get("verdict", "")
    if verdict not in ("good", "bad"):
        return JsonResponse({"ok": False, "error": "verdict must be 'good' or 'bad'."}, status=400)
    outcomes.give_verdict(message, verdict, request.POST.get("note", "").strip())
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
