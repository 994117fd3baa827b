"""Every module under agent/ and knowledge/ has a test module of its own (DESIGN: tests mirror
modules), so a change to a module has one obvious place for its tests.

The rule: agent/X.py -> tests/agent/test_X.py (or test_X_*.py for a module tested by concern);
agent/tools/X.py -> tests/agent/tools/test_X.py; management/commands/X.py -> .../commands/test_X.py;
knowledge/views/X.py -> tests/knowledge/views/test_X.py. A few older test modules keep the name
they had; they are listed here, each still the one test module of its module.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Wiring only (Django declarations): exercised by every request and page test.
WIRING = {"__init__.py", "apps.py", "urls.py", "urls_curation.py", "urls_tools.py", "routing.py"}
OLDER_NAMES = {
    "agent/views.py": "tests/agent/test_chat_views.py",
    "agent/management/commands/chat.py": "tests/agent/test_chat_command.py",
    "agent/tools/memory_tool.py": "tests/knowledge/test_memory_tool.py",
    "agent/tools/skill_tools.py": "tests/knowledge/test_skill_tools.py",
    "agent/tools/session_search.py": "tests/agent/test_session_search_tool.py",
    "agent/management/commands/check_model.py": "tests/agent/test_check_model.py",
    "agent/management/commands/learning_worker.py": "tests/test_scale_out.py",
    "knowledge/query.py": "tests/knowledge/test_sanitizer.py",
    "knowledge/admin.py": "tests/test_admin.py",
    "knowledge/search_pg.py": "tests/knowledge/test_search.py",  # the same tests, run on PostgreSQL
    "knowledge/search_results.py": "tests/knowledge/test_search.py",
    # The top lists' SQL per database, tested through the policy's tests, which run on both.
    "knowledge/search_top_fts.py": "tests/knowledge/test_search_top.py",
    "knowledge/search_top_pg.py": "tests/knowledge/test_search_top.py",
    # The model client package, tested through recorded wire shapes by concern.
    "agent/llm/client.py": "tests/agent/test_llm_wire.py",
    "agent/llm/assemble.py": "tests/agent/test_llm_wire.py",
    "agent/llm/textcalls.py": "tests/agent/test_llm_wire.py",
    "agent/llm/errors.py": "tests/agent/test_llm_wire.py",
    "agent/llm/types.py": "tests/agent/test_llm_wire.py",
    "agent/llm/capabilities.py": "tests/agent/test_llm_quirks.py",
    "agent/llm/probe.py": "tests/agent/test_llm_probe.py",
    "agent/llm/wire.py": "tests/agent/test_llm_wire.py",
    "knowledge/capabilities.py": "tests/agent/test_llm_quirks.py",  # the stored side of what a server refused
    # The threat scan's parts, tested together through the scan.
    "knowledge/threat_normalize.py": "tests/knowledge/test_threat_scan_hidden.py",
    "knowledge/threat_patterns.py": "tests/knowledge/test_threat_scan_corpus.py",
    "knowledge/threat_patterns_intl.py": "tests/knowledge/test_threat_scan_corpus.py",
    # Knowledge verification (issue 15), tested through the command and the real review path.
    "agent/learning_eval/run.py": "tests/agent/test_eval_learning.py",
    "agent/management/commands/eval_learning.py": "tests/agent/test_eval_learning.py",
    "agent/tools/evidence_gate.py": "tests/agent/test_review_evidence.py",
}


def _modules() -> list[str]:
    out = subprocess.run(["git", "ls-files", "agent", "knowledge"], cwd=ROOT, capture_output=True, text=True)
    return [
        f
        for f in out.stdout.split()
        if f.endswith(".py") and "/migrations/" not in f and Path(f).name not in WIRING and (ROOT / f).exists()
    ]


def _candidates(module: str) -> list[Path]:
    parts = Path(module).with_suffix("").parts
    folders = [p for p in parts[:-1] if p != "management"]
    name = parts[-1]
    base = ROOT / "tests" / Path(*folders)
    flat = ROOT / "tests" / folders[0]  # knowledge/views/x.py -> tests/knowledge/test_views_x.py
    return [
        base / f"test_{name}.py",
        *base.glob(f"test_{name}_*.py"),
        flat / f"test_{'_'.join([*folders[1:], name])}.py",
    ]


def test_every_module_has_a_test_module():
    missing = []
    for module in _modules():
        if module in OLDER_NAMES:
            if not (ROOT / OLDER_NAMES[module]).exists():
                missing.append(f"{module} (expected {OLDER_NAMES[module]})")
        elif not any(c.exists() for c in _candidates(module)):
            missing.append(module)
    assert missing == []
