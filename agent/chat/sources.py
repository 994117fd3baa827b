"""Where an answer came from: the memory entries and skills in its chat's frozen prompt, what the
memory providers recalled for its turn (kept on the answer's row, `Message.sources`), and the
tools its turn called (its messages between the question and the answer). Each can be sent to
the inbox as "Not relevant" or "Wrong" (knowledge/source_feedback.py says what approving does).

Recalled text is untrusted (a past chat, a model's memory): the templates render it as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from django import forms
from django.contrib import messages as flash
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from foundation import config as hermes_config
from knowledge import prompt_blocks, source_feedback, versions
from knowledge.memory.ops import ENTRY_DELIMITER, TARGETS
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message, PendingWrite

SKILLS_BLOCK = "Skills index"


@dataclass(frozen=True)
class Source:
    key: str  # names the item within its answer (the feedback form sends it back)
    kind: str  # memory | skill | recall | mem0 | tool
    text: str
    href: str = ""
    note: str = ""  # e.g. that a memory entry is no longer in memory
    detail: dict[str, str] = field(default_factory=dict)  # what the inbox item needs to act


@dataclass
class Sources:
    session: ChatSession
    answer: Message
    memory: list[Source] = field(default_factory=list)
    skills: list[Source] = field(default_factory=list)
    recalled: list[Source] = field(default_factory=list)
    tools: list[Source] = field(default_factory=list)
    recorded: bool = True  # False: the answer is older than kept recall (nothing to show for it)

    def all(self) -> list[Source]:
        return [*self.memory, *self.skills, *self.recalled, *self.tools]

    def find(self, key: str) -> Source | None:
        return next((s for s in self.all() if s.key == key), None)


def _memory(prompt: str) -> tuple[list[Source], list[Source]]:
    """The memory entries and skills of the frozen prompt, each linked to where it lives now."""
    by_label = {spec.label: name for name, spec in TARGETS.items()}
    store = MemoryStore()
    memory: list[Source] = []
    skills: list[Source] = []
    for block in prompt_blocks.split(prompt, hermes_config.get()):
        if block.name == SKILLS_BLOCK:
            for line in block.text.splitlines():
                if line.startswith("- ") and ":" in line:
                    name = line[2:].split(":", 1)[0].strip()
                    href = reverse("skill_detail", args=[name])
                    skills.append(Source(f"skill:{name}", "skill", name, href, detail={"name": name}))
            continue
        target = by_label.get(block.name)
        if target is None:
            continue
        current = store.entries(target)
        for n, entry in enumerate(e.strip() for e in block.text.split(ENTRY_DELIMITER) if e.strip()):
            key = f"memory:{target}:{n}"
            if entry in current:
                href = f"{reverse('memory')}#entry-{target}-{current.index(entry)}"
                memory.append(Source(key, "memory", entry, href, detail={"target": target, "entry": entry}))
            else:
                memory.append(Source(key, "memory", entry, reverse("memory"), note="no longer in memory"))
    return memory, skills


def _recalled(items: list[dict[str, Any]]) -> list[Source]:
    out = []
    for n, item in enumerate(i for i in items if isinstance(i, dict)):
        text = str(item.get("text") or "")
        session_id = str(item.get("session_id") or "")
        if session_id:
            anchor = f"#m{item['message_id']}" if item.get("message_id") else ""
            title = str(item.get("title") or "Untitled chat")
            out.append(
                Source(
                    f"recall:{n}",
                    "recall",
                    text,
                    f"/c/{session_id}/{anchor}",
                    note=title,
                    detail={"session_id": session_id, "title": title},
                )
            )
        else:
            out.append(Source(f"recall:{n}", "mem0", f"{text} ({item.get('provider') or 'provider'})"))
    return out


def _tools(answer: Message) -> list[Source]:
    """The tool results of the answer's turn: its messages back to the question, on its version."""
    rows = {m.pk: m for m in Message.objects.filter(session_id=answer.session_id, id__lte=answer.pk)}
    found = []
    at = rows.get(answer.parent_id) if answer.parent_id else None
    while at is not None and at.role != "user":
        if at.role == "tool":
            # The chat page's tool card has its call's id as its anchor (templates/chat/_item.html).
            anchor = f"tool-{quote(at.tool_call_id, safe='')}" if at.tool_call_id else f"m{answer.pk}"
            href = f"/c/{answer.session_id}/#{anchor}"
            found.append(Source(f"tool:{at.pk}", "tool", at.tool_name or "tool", href, detail={"name": at.tool_name}))
        at = rows.get(at.parent_id) if at.parent_id else None
    return found[::-1]


def sources_of(session: ChatSession, answer: Message) -> Sources:
    memory, skills = _memory(session.system_prompt)
    return Sources(
        session,
        answer,
        memory=memory,
        skills=skills,
        recalled=_recalled(answer.sources or []),
        tools=_tools(answer),
        recorded=answer.sources is not None,
    )


_SAY = "Say 'Not relevant' or 'Wrong'."


class SourceFeedbackForm(forms.Form):
    """ "Not relevant" / "Wrong" on one source of an answer (`key`, as the Sources list names it)."""

    key = forms.CharField(max_length=200, error_messages={"required": "Which source was not said."})
    verdict = forms.ChoiceField(
        choices=list(source_feedback.VERDICTS.items()),
        error_messages={"invalid_choice": _SAY, "required": _SAY},
    )

    def __init__(self, *args: Any, sources: Sources, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sources = sources

    def clean_key(self) -> Source:
        found = self.sources.find(self.cleaned_data["key"])
        if found is None:
            raise forms.ValidationError("That source is not among this answer's sources (any more).")
        if found.kind == "memory" and not found.detail:
            raise forms.ValidationError("That entry is no longer in memory: there is nothing to remove.")
        return found

    def save(self) -> PendingWrite:
        source: Source = self.cleaned_data["key"]
        verdict = self.cleaned_data["verdict"]
        session, answer_id = self.sources.session, self.sources.answer.pk
        if source.kind == "memory":
            target, entry = source.detail["target"], source.detail["entry"]
            return source_feedback.memory_removal(session, answer_id, verdict, target, entry)
        if source.kind == "skill":
            action, subject = source_feedback.FLAG_SKILL, source.detail["name"]
        elif source.kind == "recall":
            action, subject = source_feedback.NO_RECALL, source.detail["session_id"]
        else:
            action, subject = source_feedback.NOTE, source.text[:500]
        detail = {"kind": source.kind, "text": source.text[:500], "href": source.href}
        if source.kind == "recall":
            detail["title"] = source.detail["title"]
        return source_feedback.source_item(session, answer_id, verdict, action, subject, detail)


def _answer(session_id: str, message_id: int) -> tuple[ChatSession, Message]:
    session = get_object_or_404(ChatSession, pk=session_id)
    answer = get_object_or_404(Message, pk=message_id, session=session, role="assistant")
    return session, answer


def _show(
    request: HttpRequest, found: Sources, form: SourceFeedbackForm | None = None, status: int = 200
) -> HttpResponse:
    partial = request.headers.get("HX-Request") == "true"
    template = "chat/_sources.html" if partial else "chat/sources_page.html"
    context = {"nav": "chat", "found": found, "form": form, "verdicts": source_feedback.VERDICTS}
    return render(request, template, context, status=status)


@require_GET
def sources(request: HttpRequest, session_id: str, message_id: int) -> HttpResponse:
    """The answer's sources: a fragment for the chat page (htmx), or a page of its own."""
    return _show(request, sources_of(*_answer(session_id, message_id)))


@require_GET
def latest_sources(request: HttpRequest, session_id: str) -> HttpResponse:
    """The sources of the chat's latest answer on the version shown (an answer streamed into the
    page does not know its id yet)."""
    session = get_object_or_404(ChatSession, pk=session_id)
    answers = Message.objects.filter(session=session, role="assistant").exclude(content="")
    answer = answers.exclude(id__in=versions.off_path_of(session.pk)).order_by("-id").first()
    if answer is None:
        raise Http404("This chat has no answer yet.")
    return redirect("chat_sources", session_id=session.pk, message_id=answer.pk)


@require_POST
def source_feedback_view(request: HttpRequest, session_id: str, message_id: int) -> HttpResponse:
    """Send one source to the inbox as "Not relevant" / "Wrong"."""
    found = sources_of(*_answer(session_id, message_id))
    form = SourceFeedbackForm(request.POST, sources=found)
    if not form.is_valid():
        return _show(request, found, form, status=400)
    item = form.save()
    if request.headers.get("HX-Request") == "true":
        return _sent(request, found, item)
    flash.success(request, f"Sent to the inbox as #{item.pk}: approve or reject it there.")
    return redirect("chat_sources", session_id=session_id, message_id=message_id)


def _sent(request: HttpRequest, found: Sources, item: PendingWrite) -> HttpResponse:
    context = {"nav": "chat", "found": found, "form": None, "verdicts": source_feedback.VERDICTS, "sent": item}
    return render(request, "chat/_sources.html", context)
