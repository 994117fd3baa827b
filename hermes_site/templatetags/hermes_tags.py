from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from hermes_site.rendering import highlight_snippet, render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    # Safe only because render_markdown escapes the input and nh3 cleans the output.
    return mark_safe(render_markdown(str(text or "")))


@register.filter(name="highlight")
def highlight_filter(snippet: str) -> SafeString:
    # Safe only because highlight_snippet escapes everything before adding <mark>.
    return mark_safe(highlight_snippet(str(snippet or "")))
