"""Threat scan for text that ends up in the system prompt (SPEC §2, the seed's `_scan_memory_content`).

Memory entries are rendered into every future system prompt, so a single poisoned entry is a
persistent prompt injection. Every memory write is scanned (a hit means nothing is written) and
every entry is scanned again on load (a hit is masked in the prompt only).

How matching works, and why:
- Invisible and bidi-control code points are checked on the RAW text: they have no business in
  a note and are the usual way to hide instructions from the person reading the file.
- Patterns run on a normalised copy: capped at 65,536 characters (bounded regex cost), NFKC
  (folds full-width and other compatibility letters onto ASCII), zero-width characters deleted
  (so "ig\u200bnore" cannot split a keyword), whitespace collapsed to single spaces (so
  "ignore   all\nprevious instructions" still matches). All patterns are case-insensitive.
- Each pattern has a stable id (`category.name`) that appears in error messages and logs, so
  tests, users and the change log can refer to exactly which rule fired.

Patterns aim at phrasing that targets the agent ("ignore previous instructions", "reveal your
system prompt") rather than topics ("the system", "ssh"), so ordinary notes stay writable.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

MAX_SCAN_CHARS = 65_536


@dataclass(frozen=True)
class ThreatHit:
    id: str
    reason: str


# The 17 code points the spec names, with their Unicode names for a readable reason.
INVISIBLE_CHARS: dict[str, str] = {
    "\u200b": "ZERO WIDTH SPACE",
    "\u200c": "ZERO WIDTH NON-JOINER",
    "\u200d": "ZERO WIDTH JOINER",
    "\u2060": "WORD JOINER",
    "\u2062": "INVISIBLE TIMES",
    "\u2063": "INVISIBLE SEPARATOR",
    "\u2064": "INVISIBLE PLUS",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE",
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "POP DIRECTIONAL FORMATTING",
    "\u202d": "LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2067": "RIGHT-TO-LEFT ISOLATE",
    "\u2068": "FIRST STRONG ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
}

# Deleted before pattern matching: the 17 above plus other invisible fillers (soft hyphen,
# function application, Mongolian vowel separator, combining grapheme joiner) that could split
# a keyword without being blocked on their own.
_STRIP_FOR_MATCHING = re.compile("[" + "".join(INVISIBLE_CHARS) + "\u00ad\u2061\u180e\u034f]")
_WHITESPACE = re.compile(r"\s+")

_SECRET_WORDS = r"(?:key|token|secret|password|passwd|credentials?|api_?key)"
# Files that steer the agent itself; editing them outside the stores is a persistence attack.
_AGENT_FILES = r"(?:\.hermes(?:/|\b)|memory\.md|user\.md|soul\.md)"

# (id, reason, regex). Order matters only for which id is reported when several match.
_PATTERN_SPECS: list[tuple[str, str, str]] = [
    # --- prompt injection -------------------------------------------------------------------
    (
        "prompt_injection.ignore_previous",
        "tells the model to ignore its previous instructions",
        r"\b(?:ignore|forget|disregard|skip|drop)\s+(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
        r"(?:previous|prior|above|earlier|preceding|original|existing)\s+"
        r"(?:instructions?|prompts?|rules|directions|directives|guidance|context|messages)",
    ),
    (
        "prompt_injection.system_prompt_override",
        "tries to override or replace the system prompt",
        r"\b(?:new|updated|override|overrid(?:e|ing)|replace|replacing|overwrite|rewrite|ignore)\s+"
        r"(?:the\s+|your\s+|this\s+)?system\s+(?:prompt|message|instructions)\b"
        r"|\bsystem\s+prompt\s+(?:override|overwrite|replacement|is\s+now|has\s+(?:been\s+)?changed)",
    ),
    (
        "prompt_injection.disregard_rules",
        "tells the model to disregard its rules",
        r"\b(?:disregard|ignore|forget|abandon|break|violate)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:your|its)\s+"
        r"(?:\w+\s+)?(?:rules|guidelines|guardrails|policies|principles|programming|training|restrictions|safety)",
    ),
    (
        "prompt_injection.bypass_restrictions",
        "asks to bypass safety restrictions",
        r"\b(?:bypass|circumvent|evade|get\s+around|work\s+around|sidestep)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
        r"(?:safety\s+|content\s+|security\s+|ethical\s+)?"
        r"(?:restrictions|filters|guardrails|safeguards|safety|content\s+polic(?:y|ies)|moderation)",
    ),
    (
        "prompt_injection.hidden_html",
        "hides instructions in an HTML comment or invisible element",
        r"<!--(?:(?!-->).){0,400}?\b(?:ignore|instructions?|system|assistant|agent|prompt|execute|run|secret|"
        r"override|you\s+must|do\s+not|don't)\b"
        r"|<\s*(?:div|span|p|section)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|"
        r"\bhidden\b|opacity\s*:\s*0)",
    ),
    (
        "prompt_injection.translate_execute",
        "asks to translate (or decode) text and then execute it",
        r"\b(?:translate|decode|decipher|unscramble)\b.{0,120}?\b(?:and|then)\s+(?:then\s+)?"
        r"(?:execute|run|follow|obey|carry\s+out|act\s+on)\b",
    ),
    (
        "prompt_injection.deception",
        "tells the model to deceive the user or hide actions from them",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn)\s+(?:the\s+)?user\b"
        r"|\bhide\s+(?:this|it|that|these|your\s+actions|the\s+following|everything)\s+from\s+(?:the\s+)?user"
        r"|\bwithout\s+(?:the\s+user(?:'s)?|them)\s+(?:knowing|noticing|knowledge|realizing)"
        r"|\b(?:lie|lying)\s+to\s+(?:the\s+)?user\b|\bdeceive\s+(?:the\s+)?user\b",
    ),
    # --- role hijack --------------------------------------------------------------------------
    (
        "role_hijack.you_are_now",
        "tries to give the model a new role ('you are now ...')",
        r"\byou\s+are\s+now\s+(?:a|an|the|my|no\s+longer|free|unrestricted|unfiltered|uncensored|jailbroken|"
        r"dan|evil|in\s+(?:developer|god|admin|jailbreak|unrestricted)\s+mode|root|admin)\b",
    ),
    (
        "role_hijack.pretend",
        "asks the model to pretend to be something else",
        r"\b(?:pretend|imagine)\s+(?:to\s+be|you\s+are|you're|that\s+you\s+are)\b"
        r"|\b(?:act|behave|roleplay|role-play)\s+as\s+(?:if\s+you\s+(?:are|were|have)|an?\s+(?:unrestricted|unfiltered|"
        r"jailbroken|evil|uncensored))",
    ),
    (
        "role_hijack.leak_system_prompt",
        "asks to reveal the system prompt",
        r"\b(?:reveal|leak|print|show|output|repeat|dump|disclose|expose|share|recite|tell\s+me)\s+"
        r"(?:me\s+|us\s+)?(?:your|the)\s+(?:full\s+|entire\s+|original\s+|hidden\s+|initial\s+|secret\s+)?"
        r"(?:system\s+prompt|system\s+message|initial\s+instructions|hidden\s+instructions|instructions\s+verbatim)",
    ),
    (
        "role_hijack.remove_filters",
        "asks to remove safety filters",
        r"\b(?:remove|disable|turn\s+off|switch\s+off|drop|lift|deactivate)\s+(?:all\s+|any\s+)?(?:of\s+)?"
        r"(?:your|its|the\s+(?:ai'?s?|model'?s?|assistant'?s?))\s+(?:\w+\s+)?"
        r"(?:filters|filtering|guardrails|safeguards|censorship|restrictions|limitations|safety)"
        r"|\b(?:safety|content|ethical|moral)\s+(?:filters?|guardrails)\s+(?:are\s+)?(?:off|disabled|removed)"
        r"|\b(?:respond|answer|reply|operate)\s+without\s+(?:any\s+)?(?:filters|restrictions|censorship|guardrails)",
    ),
    (
        "role_hijack.fake_system_update",
        "poses as a system or developer message",
        r"\[\s*(?:system|admin|developer|sys)\s*(?:message|update|override|note|notice|instruction)?\s*\]"
        r"|<\s*/?\s*(?:system|sys|im_start|im_end)\s*>|<\|im_(?:start|end)\|>"
        r"|\b(?:system|security|critical|urgent|developer|admin)\s+(?:update|notice|override|alert|message)\s*"
        r"[:\-—]\s*.{0,80}?\b(?:you|assistant|agent|model|ai)\s+(?:must|should|shall|will|are\s+now)\b",
    ),
    (
        "role_hijack.identity_override",
        "tries to override the model's identity",
        r"\byour\s+(?:new\s+)?(?:name|identity|persona|true\s+self|role)\s+is\s+now\b"
        r"|\bfrom\s+now\s+on,?\s+you\s+(?:are|will\s+be|shall\s+be)\s+(?:a|an|called|named|no\s+longer|dan|free)\b"
        r"|\byou\s+are\s+no\s+longer\s+(?:an?\s+|the\s+)?(?:ai|assistant|hermes|bound|restricted|limited)\b"
        r"|\bforget\s+(?:who|what)\s+you\s+(?:are|were)\b|\b(?:assume|adopt)\s+(?:a|the)\s+new\s+identity\b",
    ),
    # --- command and control / promptware -----------------------------------------------------
    (
        "c2.register_node",
        "tells the agent to register itself with a remote controller",
        r"\bregister\s+(?:yourself|itself|this\s+(?:agent|assistant|instance)|the\s+agent)\b"
        r"|\bregister\s+as\s+an?\s+(?:node|bot|worker|peer|agent|client)\b"
        r"|\b(?:join|connect\s+to|enroll\s+in)\s+the\s+(?:botnet|c2|c&c|command\s+(?:and|&)\s+control|swarm|mesh)\b",
    ),
    (
        "c2.heartbeat",
        "tells the agent to send heartbeats to a remote controller",
        r"\b(?:send|post|emit|ping)\s+(?:a\s+)?heartbeats?\s+(?:to|at)\s+(?:https?://|\S+\.\w{2,}|the\s+(?:c2|controller|"
        r"command\s+server|server))"
        r"|\bheartbeats?\b.{0,40}\b(?:every|each|after)\s+(?:turn|session|message|response|conversation|reply)",
    ),
    (
        "c2.pull_tasks",
        "tells the agent to fetch instructions or tasks from a remote source",
        r"\b(?:fetch|pull|poll|download|retrieve|get|load|check)\s+(?:for\s+)?(?:new\s+|your\s+|further\s+|the\s+latest\s+|"
        r"next\s+|pending\s+)?(?:instructions|commands|orders|directives)\s+from\b"
        r"|\b(?:pull|poll|fetch|get)\s+(?:new\s+|pending\s+|your\s+)?tasks\s+from\s+(?:the\s+)?(?:c2|controller|"
        r"command\s+server|https?://)",
    ),
    (
        "c2.forced_action",
        "forces the agent to run something on every turn or without asking",
        r"\b(?:on|at\s+the\s+start\s+of|before|after)\s+(?:every|each)\s+(?:turn|message|session|response|reply|"
        r"conversation)\s*,?\s*(?:you\s+(?:must|should|will)\s+|always\s+)?(?:run|execute|call|fetch|send|visit|curl|"
        r"download|post)\b"
        r"|\b(?:must|always)\s+(?:silently\s+)?(?:run|execute)\s+.{0,60}?(?:curl|wget|bash\s+-c|sh\s+-c|powershell|"
        r"python\s+-c|\|\s*(?:ba)?sh)"
        r"|\b(?:run|execute)\s+(?:this|the\s+following|these)\s+(?:command|script|code|commands)\s+"
        r"(?:immediately|silently|now|automatically)",
    ),
    (
        "c2.anti_forensics",
        "asks to cover tracks or destroy evidence",
        r"\b(?:cover|hide)\s+(?:your|the|our|its)\s+tracks\b"
        r"|\b(?:delete|clear|wipe|erase|purge|scrub|remove)\s+(?:all\s+)?(?:the\s+|your\s+|any\s+)?(?:traces?|evidence|"
        r"audit\s+(?:log|trail)|"
        r"\.?bash_history|shell\s+history|command\s+history)\b"
        r"|\bhistory\s+-c\b|\bunset\s+histfile\b"
        r"|\b(?:delete|erase|wipe|remove)\s+(?:this|these)\s+(?:instructions?|messages?|entry|note)\s+(?:after|once|when)",
    ),
    # --- exfiltration -------------------------------------------------------------------------
    (
        "exfiltration.curl_secret",
        "sends an environment secret over the network",
        r"\b(?:curl|wget|invoke-webrequest|iwr|httpie|nc|netcat)\b.{0,200}?\$\{?\w*" + _SECRET_WORDS,
    ),
    (
        "exfiltration.read_env_file",
        "reads a .env or credentials file",
        r"\b(?:cat|less|more|head|tail|type|base64|xxd|strings|grep)\s+(?:-\S+\s+)*\S*"
        r"(?:\.env\b|\.aws/credentials|\.netrc|\.pgpass|\.git-credentials)"
        r"|\b(?:print|dump|send|post|upload|leak)\s+(?:all\s+)?(?:the\s+|your\s+)?(?:environment\s+variables|env\s+vars)",
    ),
    (
        "exfiltration.send_to_url",
        "sends data to an external address",
        r"\bexfiltrat\w*"
        r"|\b(?:send|post|upload|forward|transmit|leak|copy|report)\s+(?:all\s+|the\s+|your\s+|this\s+|any\s+|every\s+)*"
        r"(?:(?:the\s+)?user'?s\s+)?(?:data|conversations?|chats?|messages?|history|context|memory|memories|files|credentials|secrets|keys|tokens|"
        r"passwords|user\s+data|information|info)\s+(?:\w+\s+){0,2}(?:to|at|into)\s+(?:https?://|\S+@\S+\.\w+|"
        r"[\w-]+\.(?:com|net|org|io|xyz|ru|top|site|cc)\b)",
    ),
    (
        "exfiltration.dump_context",
        "asks to dump the conversation context",
        r"\b(?:dump|print|output|reveal|repeat|leak)\s+(?:out\s+)?(?:the\s+|your\s+)?(?:entire|full|whole|complete)\s+"
        r"(?:context|context\s+window|conversation|chat\s+history|memory)"
        r"|\b(?:dump|leak|send|post|upload)\s+(?:the\s+|your\s+|all\s+)*(?:context(?:\s+window)?|conversation\s+history)\s+"
        r"(?:to|into)\b",
    ),
    # --- persistence and secrets --------------------------------------------------------------
    (
        "persistence.ssh_keys",
        "touches SSH keys or authorized_keys",
        r"\bauthorized_keys\b|\.ssh/id_\w+|\bssh-(?:rsa|ed25519|dss|ecdsa)\s+aaaa"
        r"|-----begin\s+(?:rsa\s+|openssh\s+|ec\s+|dsa\s+|encrypted\s+)?private\s+key-----",
    ),
    (
        "persistence.agent_config",
        "edits the agent's own configuration or instructions",
        r"\b(?:edit|modify|change|overwrite|write\s+to|append\s+to|update|replace|patch|delete)\s+"
        r"(?:your\s+own|the\s+agent'?s|hermes'?s?|your)\s+(?:config(?:uration)?|settings|memory\s+files?|system\s+prompt|"
        r"instructions\s+file|soul)"
        r"|\b(?:edit|modify|overwrite|write\s+to|append\s+to|echo\b.{0,80}>>?|sed\s+-i)\s*\S*"
        + _AGENT_FILES
        + r"|\b(?:append|add|write|insert)\b.{0,80}?\b(?:to|into)\s+\S*"
        + _AGENT_FILES
        + r"|\becho\b.{0,200}>>\s*~?/?\S*\.(?:bashrc|zshrc|bash_profile|profile)\b|\bcrontab\b.{0,80}\b(?:curl|wget)",
    ),
    (
        "secrets.hardcoded",
        "contains a hard-coded secret",
        r"\bsk-(?:proj-|ant-|live-)?[a-z0-9_\-]{20,}|\bakia[0-9a-z]{16}\b|\bgh[pousr]_[a-z0-9]{30,}"
        r"|\bxox[baprs]-[a-z0-9-]{10,}|\bglpat-[a-z0-9_\-]{20,}"
        r"|\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)\s*[=:]\s*['\"]?"
        r"(?=[^\s'\"]*\d)[^\s'\"]{8,}",
    ),
]

PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    (pid, reason, re.compile(rx, re.IGNORECASE | re.DOTALL)) for pid, reason, rx in _PATTERN_SPECS
]
PATTERN_IDS: frozenset[str] = frozenset(pid for pid, _, _ in PATTERNS)


def normalise(text: str) -> str:
    """The copy patterns are matched against (see module docstring)."""
    folded = unicodedata.normalize("NFKC", text[:MAX_SCAN_CHARS])
    return _WHITESPACE.sub(" ", _STRIP_FOR_MATCHING.sub("", folded))


def invisible_hit(text: str) -> ThreatHit | None:
    for ch in text:
        name = INVISIBLE_CHARS.get(ch)
        if name is not None:
            code = f"U+{ord(ch):04X}"
            return ThreatHit(id=f"invisible-{code}", reason=f"contains the invisible character {code} ({name})")
    return None


def scan_all(text: str) -> list[ThreatHit]:
    """Every rule that fires, pattern hits first."""
    clean = normalise(text)
    hits = [ThreatHit(id=pid, reason=reason) for pid, reason, rx in PATTERNS if rx.search(clean)]
    invisible = invisible_hit(text)
    if invisible is not None:
        hits.append(invisible)
    return hits


def scan(text: str) -> ThreatHit | None:
    """The first threat in `text`, or None if it is safe to put in a prompt.

    Pattern hits are reported before invisible characters because they say what the text was
    trying to do; a zero-width-obfuscated injection still names its pattern.
    """
    clean = normalise(text)
    for pid, reason, rx in PATTERNS:
        if rx.search(clean):
            return ThreatHit(id=pid, reason=reason)
    return invisible_hit(text)
