from __future__ import annotations

from itertools import groupby

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from foundation.rendering import highlight_snippet, render_markdown
from knowledge import memory_providers
from knowledge.models import PendingWrite
from knowledge.search import meaning
from knowledge.verification.threat_normalize import char_label, is_hidden, tag_text

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    # Safe only because render_markdown escapes the input and nh3 cleans the output.
    return mark_safe(render_markdown(str(text or "")))


@register.filter(name="highlight")
def highlight_filter(snippet: str) -> SafeString:
    # Safe only because highlight_snippet escapes everything before adding <mark>.
    return mark_safe(highlight_snippet(str(snippet or "")))


@register.filter(name="show_hidden")
def show_hidden_filter(text: str) -> SafeString:
    """Stored text with every invisible code point drawn as a marker (`⟨U+E0041⟩`), so the
    curator sees what the model would read; a run's tooltip spells out text hidden in TAG
    characters. Safe because every other character is escaped."""
    parts = []
    for hidden, run in groupby(str(text or ""), key=is_hidden):
        chars = "".join(run)
        if not hidden:
            parts.append(escape(chars))
            continue
        markers = "".join(f"⟨U+{ord(ch):04X}⟩" for ch in chars)
        spelled = tag_text(chars)
        title = f"hidden text: {spelled}" if spelled else ", ".join(char_label(ch) for ch in chars[:8])
        parts.append(f'<mark class="hidden-char" title="{escape(title)}">{markers}</mark>')
    return mark_safe("".join(parts))


@register.simple_tag
def pending_count() -> int:
    """How many review writes wait for approval, for the nav (one COUNT per page)."""
    return PendingWrite.objects.filter(status="pending").count()


@register.simple_tag
def recall_status() -> meaning.Status:
    """Search by meaning: on or why not, and how far the background embedding came
    (templates/knowledge/_recall_status.html)."""
    return meaning.status()


@register.simple_tag
def memory_provider_states() -> list[memory_providers.ProviderState]:
    """The configured memory providers with their state and last sync, as any server process
    recorded them (templates/knowledge/_memory_providers.html)."""
    return memory_providers.states()


_PROVIDER_BADGES = {
    memory_providers.OK: "good",
    memory_providers.NOT_YET: "",
    memory_providers.SLOW: "warn",
    memory_providers.FAILING: "bad",
    memory_providers.UNAVAILABLE: "bad",
}


@register.filter
def provider_badge(state: str) -> str:
    return _PROVIDER_BADGES.get(state, "warn")
