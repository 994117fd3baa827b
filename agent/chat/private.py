"""Private chats from the chat page (docs/BEHAVIOUR.md, Private chats): "New private chat" beside New
chat, and the chat menu's switch, both plain form posts that end on the chat's page, which shows
the chat marked Private (the flag is stored: knowledge/private_chats.py).

What private means is said where it is switched (templates/chat/_private_switch.html): from now on
nothing in the chat is learned or found by search; what was already learned from it stays.
Switched back, the whole chat — what was said while it was private included — is learned from and
found again.
"""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from agent.chat import service as chat_service
from agent.chat import session_end
from agent.chat.forms import NewChatForm
from knowledge import private_chats
from knowledge.models import ChatSession


class PrivateForm(forms.Form):
    """The chat menu's switch: `private` is "1" to make the chat private, "0" to stop."""

    private = forms.ChoiceField(choices=[("1", "private"), ("0", "not private")])

    @property
    def value(self) -> bool:
        return self.cleaned_data["private"] == "1"


def _is_unused(session: ChatSession) -> bool:
    """Nothing said in it yet (whatever its counter says: a chat made by an import may hold rows it never counted)."""
    return session.message_count == 0 and not session.messages.exists()


@require_POST
def new_private_chat(request: HttpRequest) -> HttpResponse:
    """A new chat, private from its first message. An unused chat shown (`from`) becomes it, as New
    chat reuses one; another one is ended as New chat ends it."""
    form = NewChatForm(request.POST)
    previous = form.previous() if form.is_valid() else None
    if previous is not None and _is_unused(previous):
        private_chats.set_private(previous.pk, True)
        return redirect("chat", session_id=previous.pk)
    if previous is not None and previous.ended_at is None:
        session_end.end_in_background(previous.pk, "new session")
    session = chat_service.create_session()
    private_chats.set_private(session.pk, True)
    return redirect("chat", session_id=session.pk)


@require_POST
def switch(request: HttpRequest, session_id: str) -> HttpResponse:
    """Make the chat private, or stop keeping it private; back to its page, which shows the change."""
    session = get_object_or_404(ChatSession, pk=session_id)
    form = PrivateForm(request.POST)
    if not form.is_valid():
        return HttpResponse("Say whether the chat is to be private: private=1 or private=0.", status=400)
    private_chats.set_private(session.pk, form.value)
    return redirect("chat", session_id=session.pk)
