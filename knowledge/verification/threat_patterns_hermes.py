"""Everything Hermes Agent refuses in memory writes, re-expressed for this project's scan.

A home shared with Hermes Agent is then at least as strict from either side. The table is read with
the project's own (knowledge/verification/threat_patterns.py) by knowledge/verification/threat_scan.py.
"""

# Pattern tables are data: a regex alternation reads better whole than split mid-word.
# ruff: noqa: E501

from __future__ import annotations

from knowledge.verification.threat_patterns import _clause_gap, _gap

# Everything Hermes Agent refuses in memory writes (its tools/threat_patterns.py, strict scope),
# re-expressed here so a shared home is at least as strict from either side. Some of these
# refuse ordinary words ("havoc", "check in with", "~/.ssh"); that is Hermes' own trade-off and the
# README says so. _F is the bounded filler of a few words between key words.
_F = r"(?:\w+\s+){0,8}"
# The filler between "share" and "conversation": "share the file in conversation" puts a file in
# the conversation, "share threads but not conversation" withholds it; neither outputs it.
_F_OBJECT = r"(?:(?!(?:in|into|with|within|during|not|but|per|across|between|throughout)\s)\w+\s+){0,8}"
_SECRET_VAR = r"\$\{?\w*(?:key|token|secret|password|credential)s?\b"
_MODIFY_WORD = r"(?:update|modify|edit|write|change|append|add\s+to)\s"
_MODIFY = _MODIFY_WORD + _clause_gap(300, _MODIFY_WORD)
HERMES_SPECS: list[tuple[str, str, str]] = [
    ("prompt_injection.ignore_instructions", "tells the model to ignore instructions",
     r"ignore\s+" + _F + r"(?:previous|all|above|prior)\s+" + _F + r"instructions"),
    ("prompt_injection.system_prompt_override", "tries to override the system prompt", r"system\s+prompt\s+override"),
    ("prompt_injection.disregard_rules", "tells the model to disregard its rules",
     r"disregard\s+" + _F + r"(?:your|all|any)\s+" + _F + r"(?:instructions|rules|guidelines)"),
    ("prompt_injection.bypass_restrictions", "asks the model to act as if it had no restrictions",
     r"act\s+as\s+(?:if|though)\s+" + _F + r"you\s+" + _F + r"(?:have\s+no|don't\s+have)\s+" + _F
     + r"(?:restrictions|limits|rules)"),
    ("prompt_injection.hidden_html", "hides instructions in an HTML comment",
     r"<!--(?:(?!<!--)[^>]){0,512}(?<![a-z])(?:ignore|override|system|secret|hidden)(?![a-z])(?:(?!<!--)[^>]){0,512}-->"),
    ("prompt_injection.hidden_html", "hides text in an invisible element",
     r"<\s*div\s+style\s*=\s*[\"'][^<>]{0,2048}display\s*:\s*none"),
    ("prompt_injection.translate_execute", "asks to translate text and then execute it",
     r"translate\s" + _gap(512, r"translate\s") + r"\s+into\s+\w+(?:[\s-]+\w+){0,2}\s+and\s+(?:execute|run|eval)\b"),
    ("prompt_injection.deception", "tells the model to keep something from the user",
     r"do\s+not\s+" + _F + r"tell\s+" + _F + r"the\s+user"),
    ("role_hijack.you_are_now", "tries to give the model a new role", r"you\s+are\s+" + _F + r"now\s+(?:a|an|the)\s+"),
    ("role_hijack.pretend", "asks the model to pretend", r"pretend\s+" + _F + r"(?:you\s+are|to\s+be)\s+"),
    ("role_hijack.leak_system_prompt", "asks to output the system prompt",
     r"output\s+" + _F + r"(?:system|initial)\s+prompt"),
    ("role_hijack.remove_filters", "asks to answer without safety filters",
     r"(?:respond|answer|reply)\s+without\s+" + _F + r"(?:restrictions|limitations|filters|safety)"),
    ("role_hijack.fake_system_update", "claims the model was updated",
     r"you\s+have\s+been\s+" + _F + r"(?:updated|upgraded|patched)\s+to"),
    ("role_hijack.identity_override", "tells the model to rename itself", r"\bname\s+yourself\s+\w+"),
    ("c2.register_node", "registers the agent as a node", r"register\s+(?:as\s+)?a?\s*node"),
    ("c2.heartbeat", "tells the agent to check in with a controller", r"(?:heartbeat|beacon|check[\s\-]?in)\s+(?:to|with)\s+"),
    ("c2.pull_tasks", "tells the agent to pull tasks", r"pull\s+(?:down\s+)?(?:new\s+)?task(?:ing|s)?\b"),
    ("c2.pull_tasks", "tells the agent to connect to a network", r"connect\s+to\s+the\s+network\b"),
    ("c2.forced_action", "forces the agent to report or connect",
     r"you\s+must\s+(?:\w+\s+){0,3}(?:register|connect|report|beacon)\b"),
    ("c2.anti_forensics", "tells the agent to leave no files behind", r"only\s+use\s+one[\s\-]?liners?\b"),
    ("c2.anti_forensics", "tells the agent never to write scripts to disk",
     r"never\s+" + _F + r"(?:create|write)\s+" + _F + r"(?:script|file)\s+" + _F + r"disk"),
    ("c2.anti_forensics", "unsets the agent's environment", r"unset\s+\w*(?:claude|codex|hermes|agent|openai|anthropic)\w*"),
    ("c2.known_framework", "names a command-and-control framework",
     r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b"),
    ("c2.known_framework", "mentions command-and-control infrastructure",
     r"\bc2\s+(?:server|channel|infrastructure|beacon)\b|\bcommand\s+and\s+control\b"),
    ("exfiltration.curl_secret", "sends an environment secret over the network",
     r"(?:curl|wget)\s" + _clause_gap(300, r"(?:curl|wget)\s", cells=False) + _SECRET_VAR),
    ("exfiltration.read_env_file", "reads a secrets file",
     r"cat\s" + _clause_gap(300, r"cat\s") + r"(?:\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)"),
    ("exfiltration.send_to_url", "sends something to a web address",
     # "send the user to https://…" points a person at a page.
     r"(?:send|post|upload|transmit)\s(?!(?:the\s+)?(?:user|users|them|him|her|people|you|yourself|me|us)\b)"
     + _clause_gap(300, r"(?:send|post|upload|transmit)\s") + r"\s(?:to|at)\s+https?://"),
    ("exfiltration.dump_context", "asks to output the conversation",
     r"(?:include|output|print|share)\s+" + _F_OBJECT
     + r"(?:conversation|chat\s+history|previous\s+messages|full\s+context|entire\s+context)"),
    ("persistence.ssh_keys", "touches authorized_keys or ~/.ssh", r"authorized_keys|\$home/\.ssh|~/\.ssh"),
    ("persistence.agent_config", "touches the agent's .env", r"\$home/\.hermes/\.env|~/\.hermes/\.env"),
    ("persistence.agent_config", "edits an agent instruction file",
     _MODIFY + r"(?<![\w-])(?:agents\.md|claude\.md|\.cursorrules|\.clinerules|\.hermes/(?:config\.yaml|soul\.md))"),
    ("secrets.hardcoded", "contains a hard-coded secret",
     r"(?:api[_-]?key|token|secret|password)\s*[=:]\s*[\"'][a-z0-9+/=_-]{20}"),
]  # fmt: skip
