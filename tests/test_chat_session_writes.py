"""A chat session's row changes only through ChatSession's named methods (knowledge/models.py, and
its queryset in knowledge/chat_sessions.py): no other module writes
`ChatSession.objects.filter(...).update(...)`, so every way the row changes is listed in one
place, each with the condition that makes it safe across processes.

Tests arrange rows directly and are not read; nor are migrations, which use historical models."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALLOWED = {"knowledge/models.py", "knowledge/chat_sessions.py"}


def _is_chat_sessions(node: ast.expr, names: set[str]) -> bool:
    """Whether `node` is ChatSession.objects, a queryset made from it, or a name bound to one."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            base = node.value
            if node.attr == "objects" and (
                (isinstance(base, ast.Name) and base.id == "ChatSession")
                or (isinstance(base, ast.Attribute) and base.attr == "ChatSession")
            ):
                return True
            node = base
        else:
            return False


def raw_updates(source: str) -> list[int]:
    """Lines of `source` that call .update() on a ChatSession queryset."""
    tree = ast.parse(source)
    names: set[str] = set()
    for node in ast.walk(tree):  # names bound to a queryset of sessions, anywhere in the module
        if isinstance(node, ast.Assign) and _is_chat_sessions(node.value, names):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "update"
        and _is_chat_sessions(node.func.value, names)
    ]


def _modules() -> list[str]:
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [
        f
        for f in out.stdout.split()
        if not f.startswith("tests/") and "/migrations/" not in f and f not in ALLOWED and (ROOT / f).exists()
    ]


def test_only_the_model_updates_chat_session_rows():
    found = {}
    for f in _modules():
        lines = raw_updates((ROOT / f).read_text(encoding="utf-8"))
        if lines:
            found[f] = lines
    assert found == {}, "call a named method of ChatSession (knowledge/models.py, knowledge/chat_sessions.py)"


def test_the_check_sees_each_way_of_writing_an_update():
    source = """
from knowledge import models
from knowledge.models import ChatSession

ChatSession.objects.filter(pk=1).update(title="a")
models.ChatSession.objects.filter(pk=1).exclude(private=True).update(pinned=True)
held = ChatSession.objects.filter(pk=1)
held.update(model="x")
narrower = held.only("id")
narrower.filter(turn_worker="w").update(turn_worker="")
ChatSession.rename(1, "a", "person")
ChatSession.objects.claim_end(1, "w")
Message.objects.filter(pk=1).update(content="")
other = {}
other.update(a=1)
"""
    assert raw_updates(source) == [5, 6, 8, 10]
