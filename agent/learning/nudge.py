"""The learning loop's two counters (docs/BEHAVIOUR.md, The learning loop).

Pure state: the runner feeds it turn starts, model calls, tool calls and turn ends, and
persists the two numbers on the session row so a restart does not lose them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class NudgeCounters:
    memory_interval: int
    skill_interval: int
    memory_available: bool
    skill_available: bool
    turns_since_memory: int = 0
    iters_since_skill: int = 0
    should_review_memory: bool = False
    should_review_skills: bool = False
    # A private chat (knowledge/private_chats.py) counts nothing and fires nothing; switched back,
    # the counts go on from where they stood.
    private: bool = False

    def turn_started(self) -> None:
        # Three preconditions, as in Hermes Agent: positive interval, tool registered, store present.
        if self.memory_interval > 0 and self.memory_available and not self.private:
            self.turns_since_memory += 1
            if self.turns_since_memory >= self.memory_interval:
                self.should_review_memory = True
                self.turns_since_memory = 0

    def model_called(self) -> None:
        # Every model call of the main loop counts, including the one giving the final answer.
        if self.skill_interval > 0 and self.skill_available and not self.private:
            self.iters_since_skill += 1

    def tool_called(self, name: str) -> None:
        # Using the tool on its own is what the nudge asks for, so it short-circuits the count.
        if name == "memory":
            self.turns_since_memory = 0
        elif name == "skill_manage":
            self.iters_since_skill = 0

    def turns_until_memory(self) -> int | None:
        """Turns left before the next memory review; None when memory reviews are off."""
        if self.memory_interval <= 0 or not self.memory_available or self.private:
            return None
        return self.memory_interval - self.turns_since_memory

    def iters_until_skill(self) -> int | None:
        """Model calls left before the next skill review; None when skill reviews are off."""
        if self.skill_interval <= 0 or not self.skill_available or self.private:
            return None
        return self.skill_interval - self.iters_since_skill

    def turn_finished(self) -> None:
        # Checked only once every tool call of the turn has finished.
        if self.private:
            return
        if self.skill_interval > 0 and self.skill_available and self.iters_since_skill >= self.skill_interval:
            self.should_review_skills = True
            self.iters_since_skill = 0

    def take_flags(self) -> tuple[bool, bool]:
        flags = (self.should_review_memory, self.should_review_skills)
        self.should_review_memory = self.should_review_skills = False
        return flags
