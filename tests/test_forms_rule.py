"""Every page that takes input reads it through a Django form, so bad input comes back as the
field's error in a person's words and the form keeps what was typed (docs/ARCHITECTURE.md, "Input").

The rule is checked on the code itself: every module of ours that the URLconf routes a request to is
parsed, and a direct read of a request's posted data — `request.POST[...]`, `request.POST.get(...)`,
`"x" in request.POST`, `request.FILES...`, `request.body` — fails the test. Handing the whole
`request.POST` to a form (`SomeForm(request.POST)`) is the one way in.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver

ROOT = Path(__file__).resolve().parent.parent
OURS = ("agent.", "knowledge.", "foundation.", "hermes_site.")
POSTED = {"POST", "FILES"}
# module -> why it may read posted data itself. Empty: every view goes through a form.
ALLOWED: dict[str, str] = {}


def _callbacks(patterns: list[Any]) -> Iterator[Any]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _callbacks(entry.url_patterns)
        elif isinstance(entry, URLPattern):
            yield entry.callback


def view_modules() -> set[str]:
    """The modules of ours holding a view the URLconf routes to (decorators unwrapped)."""
    modules = set()
    for callback in _callbacks(get_resolver().url_patterns):
        view = inspect.unwrap(getattr(callback, "view_class", callback))
        module = getattr(view, "__module__", "") or ""
        if module.startswith(OURS):
            modules.add(module)
    return modules


def _is_posted(node: ast.AST) -> bool:
    """`<something>.POST` or `<something>.FILES` (a request's posted fields or files)."""
    return isinstance(node, ast.Attribute) and node.attr in POSTED


def direct_reads(source: str) -> list[str]:
    """Each place `source` reads posted data itself instead of handing it to a form, as `line: text`."""
    found: dict[int, str] = {}
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        hit = (
            (isinstance(node, ast.Subscript) and _is_posted(node.value))
            or (isinstance(node, ast.Attribute) and _is_posted(node.value))
            or (
                isinstance(node, ast.Compare)
                and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
                and any(_is_posted(c) for c in node.comparators)
            )
            or (isinstance(node, ast.Attribute) and node.attr == "body" and _named(node.value, "request"))
        )
        if hit and isinstance(node, ast.expr):
            found[node.lineno] = f"{node.lineno}: {lines[node.lineno - 1].strip()}"
    return [found[line] for line in sorted(found)]


def _named(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def test_the_url_walk_finds_the_pages_that_take_input():
    modules = view_modules()
    # A sample of the views that accept POST, so an empty walk cannot pass the rule below.
    assert {
        "knowledge.views.reviews",
        "knowledge.views.memory",
        "knowledge.views.learning",
        "knowledge.views.skills",
        "knowledge.views.transfer",
        "agent.chat.views",
        "agent.chat.list_views",
        "hermes_site.access",
    } <= modules


def test_no_view_reads_posted_data_past_a_form():
    offenders = {}
    for module in sorted(view_modules() - ALLOWED.keys()):
        source = Path(inspect.getfile(sys.modules[module])).read_text(encoding="utf-8")
        if reads := direct_reads(source):
            offenders[module] = reads
    assert offenders == {}


def test_the_check_catches_each_way_of_reading_posted_data():
    source = """
def view(request):
    a = request.POST["a"]
    b = request.POST.get("b", "")
    c = request.POST.getlist("c")
    d = "d" in request.POST
    e = request.FILES.get("e")
    f = request.body
    form = SomeForm(request.POST if request.method == "POST" else None, request.FILES)
    other = OtherForm(request.POST or None)
"""
    assert [line.split(": ", 1)[1] for line in direct_reads(source)] == [
        'a = request.POST["a"]',
        'b = request.POST.get("b", "")',
        'c = request.POST.getlist("c")',
        'd = "d" in request.POST',
        'e = request.FILES.get("e")',
        "f = request.body",
    ]
