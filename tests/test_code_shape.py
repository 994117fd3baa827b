"""The code stays readable in one sitting: files under ~400 lines, functions of the
product under ~60, and no module hides its imports inside functions (ruff PLC0415 does that)."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_FILE_LINES = 420
MAX_FUNCTION_LINES = 60
PRODUCT = ("agent/", "knowledge/", "hermes_site/")


def _python_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in out.stdout.split() if "/migrations/" not in f and (ROOT / f).exists()]


def test_files_read_in_one_sitting():
    long = {
        f: n
        for f in _python_files()
        if (n := len((ROOT / f).read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    }
    assert long == {}


def test_product_functions_fit_on_a_screen():
    long: dict[str, int] = {}
    for f in _python_files():
        if not f.startswith(PRODUCT):
            continue
        for node in ast.walk(ast.parse((ROOT / f).read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{f}:{node.name}"] = lines
    assert long == {}


def test_no_merge_conflict_markers_are_committed():
    out = subprocess.run(["git", "grep", "-nE", "^(<<<<<<<|>>>>>>>) "], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout == ""
