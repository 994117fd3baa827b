"""Every module under agent/, knowledge/, foundation/ and hermes_site/ has a test module of its own (tests mirror modules),
so a change to a module has one obvious place for its tests.

The rule: agent/P/X.py -> tests/agent/P/test_X.py (or test_X_*.py for a module tested by concern);
management/commands/X.py -> tests/<app>/commands/test_X.py. The modules listed below are tested
through another module's tests, each for the reason given.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Wiring only (Django declarations): exercised by every request and page test.
WIRING = {"__init__.py", "apps.py", "urls.py", "urls_curation.py", "urls_tools.py", "routing.py", "asgi.py"}
OLDER_NAMES = {
    "agent/chat/socket_access.py": "tests/test_origin_security.py",  # through real sockets from other origins
    "foundation/yaml_edit.py": "tests/foundation/test_config.py",  # every settings write edits the YAML in place
    "hermes_site/access.py": "tests/test_access_hardening.py",
    "hermes_site/security.py": "tests/hermes_site/test_body_cap.py",  # headers and body limits, through daphne
    "hermes_site/websocket_server.py": "tests/hermes_site/test_body_cap.py",  # daphne's body cap is set there
    "hermes_site/settings.py": "tests/test_settings.py",
    "hermes_site/sqlite/base.py": "tests/hermes_site/test_sqlite.py",
    "hermes_site/templatetags/hermes_tags.py": "tests/knowledge/views/test_search.py",  # snippets and Markdown on pages
    "agent/chat/connection_views.py": "tests/knowledge/views/test_model_key.py",  # the one connection form's pages
    "agent/chat/turn_hub.py": "tests/agent/chat/test_consumers_join.py",  # through the sockets that join a turn
    "knowledge/search/hybrid.py": "tests/knowledge/search/test_meaning.py",  # words and meaning fused
    "knowledge/vectors.py": "tests/knowledge/search/test_meaning.py",  # the vectors a search scans
    "agent/admission/batch.py": "tests/agent/admission/test_verifier.py",  # one call per reply, through a review
    "agent/admission/holds.py": "tests/agent/admission/test_provenance_classes.py",  # joins and settles
    "agent/admission/prompt.py": "tests/agent/admission/test_verifier.py",
    "knowledge/verification/threat_patterns_hermes.py": "tests/knowledge/verification/test_threat_scan.py",  # parity
    "knowledge/verification/secret_phrases.py": "tests/knowledge/verification/test_secrets.py",  # its prose forms
    "agent/management/commands/learning_worker.py": "tests/test_scale_out.py",
    "knowledge/admin.py": "tests/test_admin.py",
    "knowledge/search/postgres.py": "tests/knowledge/search/test_search.py",  # the same tests, run on PostgreSQL
    "knowledge/search/sqlite.py": "tests/knowledge/search/test_search.py",  # and on SQLite
    "knowledge/search/results.py": "tests/knowledge/search/test_search.py",
    # The top lists' SQL per database, tested through the policy's tests, which run on both.
    "knowledge/search/top_sqlite.py": "tests/knowledge/search/test_top.py",
    "knowledge/search/top_postgres.py": "tests/knowledge/search/test_top.py",
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
    "knowledge/verification/threat_normalize.py": "tests/knowledge/verification/test_threat_scan_hidden.py",
    "knowledge/verification/threat_patterns.py": "tests/knowledge/verification/test_threat_scan_corpus.py",
    "knowledge/verification/threat_patterns_intl.py": "tests/knowledge/verification/test_threat_scan_corpus.py",
    "knowledge/verification/threat_confusables.py": "tests/knowledge/verification/test_threat_scan_hidden.py",  # data
    # `migrate` renames rows recorded under old names: tested by upgrading databases that hold them.
    "knowledge/management/commands/migrate.py": "tests/knowledge/test_migrations.py",
    # One verifier call for a reply's memory and skill writes, tested through both kinds of write.
    "agent/tools/verify_batch.py": "tests/agent/tools/test_verify_skills.py",
    # The tables of skill use, tested through what records and reads them.
    "knowledge/skill_usage.py": "tests/knowledge/skills/test_outcomes.py",
    # The learning evaluation, tested through its command.
    "agent/learning_eval/run.py": "tests/agent/commands/test_eval_learning.py",
}


def _modules() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "agent", "knowledge", "foundation", "hermes_site"], cwd=ROOT, capture_output=True, text=True
    )
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
