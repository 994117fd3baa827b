"""Which skills a turn used and how it went after they were loaded."""

from __future__ import annotations

import json

from agent.chat.skill_use import SkillUseTracker
from knowledge.skills.outcomes import Use

OK = json.dumps({"success": True})


def test_a_clean_turn_after_a_slash_and_a_view_is_ok_for_both():
    t = SkillUseTracker("deploy-app")
    t.tool_finished("skill_view", json.dumps({"success": True, "name": "git-bisect", "content": "..."}))
    t.tool_finished("terminal", OK)
    assert t.uses(interrupted=False) == [Use("deploy-app", "slash"), Use("git-bisect", "view")]


def test_an_error_counts_only_for_skills_loaded_before_it():
    t = SkillUseTracker()
    t.tool_finished("terminal", json.dumps({"success": False, "error": "early"}))
    t.tool_finished("skill_view", json.dumps({"success": True, "name": "deploy-app"}))
    t.tool_finished("terminal", json.dumps({"success": False, "error": "permission denied"}))
    [use] = t.uses(interrupted=False)
    assert (use.outcome, use.detail) == ("tool_error", "terminal failed: permission denied")


def test_an_interrupted_or_failed_answer_is_a_bad_outcome():
    assert SkillUseTracker("a").uses(interrupted=True)[0].outcome == "interrupted"
    [use] = SkillUseTracker("a").uses(interrupted=True, error="HTTP 500")
    assert use.detail == "The answer ended early: HTTP 500"
