"""The English threat patterns, and patterns covering everything Hermes Agent's own scan refuses.

Each pattern has a stable id (`category.name`) that appears in refusals and logs. Patterns aim
at phrasing that targets the agent ("ignore previous instructions", "reveal your system prompt")
rather than topics ("the system", "ssh"), so ordinary notes stay writable. Other languages live
in knowledge/verification/threat_patterns_intl.py; knowledge/verification/threat_scan.py compiles and runs them all.
"""

# Pattern tables are data: a regex alternation reads better whole than split mid-word.
# ruff: noqa: E501

from __future__ import annotations

_SECRET_WORDS = r"(?:key|token|secret|password|passwd|credentials?|api_?key)"


def _gap(limit: int, stop: str) -> str:
    """Up to `limit` characters before the next key word, never across another match of `stop`.

    `stop` is the part of the pattern the gap follows. A match starting at an earlier occurrence
    that runs across a later one implies a shorter match from the later one, so nothing is lost,
    and each character is crossed by one gap at most: the search stays linear in the text's
    length when a prefix repeats ("curl curl curl ...") instead of rescanning `limit` characters
    from every occurrence.
    """
    return rf"(?:(?!{stop}).){{0,{limit}}}?"


def _clause_gap(limit: int, stop: str, cells: bool = True) -> str:
    """`_gap` that also ends at a sentence's end (and, with `cells`, at a table cell's edge).

    Hermes Agent matches these phrases within one line; the readings here join lines, so a
    sentence (or a table cell) stands for the line: "send" in one sentence and a web address
    three paragraphs on are not one instruction."""
    edge = r"|[.!?](?:\s|$)" + (r"|\|" if cells else "")
    return rf"(?:(?!{stop}{edge}).){{0,{limit}}}?"


_TRANSLATE = r"\b(?:translate|decode|decipher|unscramble)\b"
_NOTICE = r"\b(?:system|security|critical|urgent|developer|admin)\s+(?:update|notice|override|alert|message)\b"
_MUST_RUN = r"\b(?:must|always)\s+(?:silently\s+)?(?:run|execute)\s"
_NET_TOOL = r"\b(?:curl|wget|invoke-webrequest|iwr|httpie|nc|netcat)\b"
_WRITE_TO = r"\b(?:append|add|write|insert)\b"
# A script fetched and run unread ("curl … | sh"), and when a skill says to run it: every time
# something happens, or with nobody asked. A one-off install line says neither and passes.
_PIPE_TO_SHELL = (
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest)\b"
    + _clause_gap(200, r"\b(?:curl|wget)\b", cells=False)
    + r"\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b"
)
_EVERY_EVENT = (
    r"\b(?:before|after|on|at\s+the\s+start\s+of|ahead\s+of)\s+(?:every|each|any)\s+(?:new\s+)?"
    r"(?:deploy\w*|release|build|run|commit|push|merge|start\w*|session|task|turn|reply|boot|login|pr|pull\s+request)\b"
)
_UNASKED = (
    r"\bwithout\s+(?:first\s+)?(?:asking|confirm\w*|prompting|approval|review\w*|checking|telling|reading|permission)\b"
    r"|\b(?:no|skip\s+(?:the\s+)?)\s*(?:confirmation|approval|review)\b|\bdon'?t\s+ask\b"
)
# Files that steer the agent itself; editing them outside the stores is a persistence attack.
# A plan or a log the agent writes under .hermes/ (plans/, logs/) steers nothing.
_AGENT_FILES = r"(?:\.hermes(?![/ ](?:plans|logs)\b)(?:/|\b)|(?<![\w-])(?:memory\.md|user\.md|soul\.md))"

# (id, reason, regex). Order matters only for which id is reported when several match.
_PATTERN_SPECS: list[tuple[str, str, str]] = [
    # --- prompt injection -------------------------------------------------------------------
    (
        "prompt_injection.ignore_previous",
        "tells the model to ignore its previous instructions",
        r"\b(?:ignore|forget|disregard|skip|drop|discard|set\s+aside|throw\s+out|override|pay\s+no\s+(?:attention|heed)\s+to"
        r"|(?:do\s+not|don'?t|stop|no\s+longer)\s+(?:follow(?:ing)?|obey(?:ing)?|heed(?:ing)?))\s+"
        r"(?:all\s+|any\s+|every\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?"
        r"(?:previous|prior|above|earlier|preceding|original|existing|initial|former|other|foregoing)\s+(?:\w+\s+){0,2}?"
        r"(?:instructions?|prompts?|directives|programming|orders|commands|system\s+prompt"
        # Softer nouns ("the earlier guidance on tabs") are a preference update when qualified.
        r"|(?:guidance|guidelines|rules|directions|context|messages)\b(?!\s+(?:about|on|regarding|for|concerning|in|from)\b))"
        r"|\b(?:ignore|forget|disregard|discard)\s+(?:everything|anything|all)\s+(?:you\s+(?:were|have\s+been)\s+told"
        r"|(?:written\s+|said\s+)?(?:above|before\s+this|so\s+far))",
    ),
    (
        "prompt_injection.system_prompt_override",
        "tries to override or replace the system prompt",
        # "a new system prompt" is a description (of a deployment, a release); "new system prompt:" is not.
        r"\b(?:new(?<!\ba new)(?<!\bthe new)|updated|override|overrid(?:e|ing)|replace|replacing|overwrite|rewrite|ignore)\s+"
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
        r"<!--(?:(?!-->|<!--).){0,400}?\b(?:ignore|instructions?|system|assistant|agent|prompt|execute|run|secret|"
        r"override|you\s+must|do\s+not|don't)\b"
        # `[^<>]`: the attributes end at the next `<` too, so a run of "<p<p<p" is read once.
        r"|<\s*(?:div|span|p|section)\b[^<>]{0,400}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|"
        r"\bhidden\b|opacity\s*:\s*0)",
    ),
    (
        "prompt_injection.translate_execute",
        "asks to translate (or decode) text and then execute it",
        _TRANSLATE + _gap(120, _TRANSLATE) + r"\b(?:and|then)\s+(?:then\s+)?"
        r"(?:execute|run|follow|obey|carry\s+out|act\s+on)\b",
    ),
    (
        "prompt_injection.deception",
        "tells the model to deceive the user or hide actions from them",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn)\s+(?:the\s+)?user\b(?!['’]s)"
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
        r"|"
        + _NOTICE
        + r"\s*[:\-—]\s*"
        + _gap(80, _NOTICE)
        + r"\b(?:you|assistant|agent|model|ai)\s+(?:must|should|shall|will|are\s+now)\b",
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
        r"\b(?:send|post|emit|ping)\s+(?:a\s+)?heartbeats?\s+(?:to|at)\s+(?:https?://|\S{1,200}?\.\w{2}|the\s+(?:c2|controller|"
        r"command\s+server|server))"
        r"|\bheartbeats?\b"
        + _gap(40, r"heartbeat")
        + r"\b(?:every|each|after)\s+(?:turn|session|message|response|conversation|reply)",
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
        r"|" + _MUST_RUN + r"\s*" + _gap(60, _MUST_RUN) + r"(?:curl|wget|bash\s+-c|sh\s+-c|powershell|"
        r"python\s+-c|\|\s*(?:ba)?sh)"
        r"|\b(?:run|execute)\s+(?:this|the\s+following|these)\s+(?:command|script|code|commands)\s+"
        r"(?:immediately|silently|now|automatically)",
    ),
    (
        "c2.remote_script",
        "runs a downloaded script unread (curl | sh) on every deploy or without asking",
        # "… | sh, then run the tests before every deploy" runs the tests every time, not the script.
        _PIPE_TO_SHELL
        + _clause_gap(160, _PIPE_TO_SHELL + r"|;|\bthen\b", cells=False)
        + r"(?:"
        + _EVERY_EVENT
        + "|"
        + _UNASKED
        + ")"
        + r"|(?:"
        + _EVERY_EVENT
        + "|"
        + _UNASKED
        + ")"
        + _clause_gap(160, _EVERY_EVENT, cells=False)
        + _PIPE_TO_SHELL,
    ),
    (
        "c2.anti_forensics",
        "asks to cover tracks or destroy evidence",
        r"\b(?:cover|hide)\s+(?:your|the|our|its)\s+tracks\b"
        # "clear" needs its object's article: "clear evidence" is an adjective, "clear the evidence" is not.
        r"|\b(?:delete|wipe|erase|purge|scrub|remove|clear(?=\s+(?:all|the|your|any)\b))\s+(?:all\s+)?"
        r"(?:the\s+|your\s+|any\s+)?(?:traces?|evidence|"
        r"audit\s+(?:log|trail)|"
        r"\.?bash_history|shell\s+history|command\s+history)\b"
        r"|\bhistory\s+-c\b|\bunset\s+histfile\b"
        r"|\b(?:delete|erase|wipe|remove)\s+(?:this|these)\s+(?:instructions?|messages?|entry|note)\s+(?:after|once|when)",
    ),
    # --- exfiltration -------------------------------------------------------------------------
    (
        "exfiltration.curl_secret",
        "sends an environment secret over the network",
        _NET_TOOL + _gap(200, _NET_TOOL) + r"\$\{?\w*" + _SECRET_WORDS,
    ),
    (
        "exfiltration.read_env_file",
        "reads a .env or credentials file",
        r"\b(?:cat|less|more|head|tail|type|base64|xxd|strings|grep)\s+(?:-\S{1,40}\s+){0,8}\S{0,200}?"
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
        # A public key (id_ed25519.pub) is meant to be shared; the private one is not.
        r"\bauthorized_keys\b|\.ssh/id_\w+\b(?!\.pub)|\bssh-(?:rsa|ed25519|dss|ecdsa)\s+aaaa"
        r"|-----begin\s+(?:rsa\s+|openssh\s+|ec\s+|dsa\s+|encrypted\s+)?private\s+key-----",
    ),
    (
        "persistence.agent_config",
        "edits the agent's own configuration or instructions",
        r"\b(?:edit|modify|change|overwrite|write\s+to|append\s+to|update|replace|patch|delete)\s+"
        r"(?:your\s+own|hermes'?s?|your)\s+(?:config(?:uration)?|settings|memory\s+files?|system\s+prompt|"
        r"instructions\s+file|soul)"
        # "the agent's system prompt" is what an API's agent object has; its files are this agent's.
        r"|\b(?:edit|modify|change|overwrite|write\s+to|append\s+to|update|replace|patch|delete)\s+"
        r"the\s+agent'?s\s+(?:config(?:uration)?|settings|memory\s+files?|instructions\s+file|soul)"
        r"|\b(?:edit|modify|overwrite|write\s+to|append\s+to|echo\b[^>]{0,80}>>?|sed\s+-i)\s*\S*"
        + _AGENT_FILES
        + r"|"
        + _WRITE_TO
        + _gap(80, _WRITE_TO)
        + r"\b(?:to|into)\s+\S{0,200}?"
        + _AGENT_FILES
        + r"|\becho\b[^>]{0,200}>>\s*~?/?\S{0,200}?\.(?:bashrc|zshrc|bash_profile|profile)\b|\bcrontab\b"
        + _gap(80, "crontab")
        + r"\b(?:curl|wget)",
    ),
    # A secret is recognised by its first n characters: `{n}`, not `{n,}`, so a match never runs on
    # to the end of a long token.
    (
        "secrets.hardcoded",
        "contains a hard-coded secret",
        r"\bsk-(?:proj-|ant-|live-)?[a-z0-9_\-]{20}|\bakia[0-9a-z]{16}\b|\bgh[pousr]_[a-z0-9]{30}"
        r"|\bxox[baprs]-[a-z0-9-]{10}|\bglpat-[a-z0-9_\-]{20}"
        r"|\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)\s*[=:]\s*['\"]?"
        r"(?=[^\s'\"]{0,64}\d)[^\s'\"]{8}",
    ),
]


# `[. ]` after .env: the reading with separators as spaces writes ".env.example" as ".env example".
_CREDENTIAL_FILES = (
    r"(?:\.aws/credentials|\.aws/config|\.ssh/id_\w+\b(?!\.pub)|\.netrc|\.pgpass"
    r"|\.git-credentials|\.docker/config\.json|\.kube/config|\.npmrc|\.pypirc|\.gnupg\S*|/etc/shadow"
    r"|id_rsa\b(?!\.pub)|id_ed25519\b(?!\.pub)"
    r"|\.env\b(?![. ](?:example|sample|template|dist|path))|login_token|keychain)"
)
_REPLY = r"(?:the\s+|your\s+|each\s+|every\s+|my\s+)?(?:reply|replies|response|responses|answer|answers|output|chat)"

_PATTERN_SPECS += [
    (
        "exfiltration.credential_files",
        "reads out a credentials file",
        r"\b(?:cat|print|show|display|output|dump|reveal|leak|paste|quote|send|upload|post|e-?mail|attach|copy|read\s+out"
        r"|include|append|add|insert|embed)\s+(?:the\s+)?(?:contents?\s+of\s+|text\s+of\s+)?(?:the\s+|your\s+|their\s+)?\S{0,80}?"
        + _CREDENTIAL_FILES
        + r"|"
        + _CREDENTIAL_FILES
        + r".{0,60}?\b(?:to|into|in|at\s+the\s+end\s+of)\s+"
        + _REPLY
        + r"\b",
    ),
    (
        "exfiltration.forward_messages",
        "forwards the user's messages or mail to someone else",
        r"\b(?:forward|relay|redirect|mirror|bcc|cc|copy)\s+(?:all\s+(?:of\s+)?|every\s+one\s+of\s+)?"
        r"(?:their|his|her|the\s+user'?s|user'?s|the\s+owner'?s|my\s+owner'?s|all\s+incoming|every\s+incoming)\s+"
        r"(?:\w+\s+)?(?:messages|emails|e-mails|mail|conversations|chats|dms|texts|replies|correspondence|inbox)\b"
        r"|\b(?:forward|relay|send|copy)\s+(?:every|each|any)\s+(?:message|email|chat|conversation)\s+"
        r"(?:the\s+user|they|he|she)\s+(?:\w+\s+)?(?:sends?|writes?|receives?|gets?)\b",
    ),
    (
        "exfiltration.reply_smuggling",
        "hides data in the replies or in links the user will load",
        r"\b(?:append|add|include|embed|encode|hide)\s+(?:the\s+|their\s+|all\s+)?(?:user'?s\s+)?(?:secrets?|keys?|tokens?"
        r"|passwords?|credentials|api\s+keys?|conversation|chat\s+history)\s+(?:\w+\s+){0,3}?(?:to|into|in)\s+"
        r"(?:an?\s+|the\s+)?(?:image\s+url|markdown\s+image|link|url|query\s+string)",
    ),
]

# What a learned note must never tell the assistant: to drop its safety rules, or to change shared
# code (push, merge, deploy) with nobody asked.
_PATTERN_SPECS += [
    ("prompt_injection.ignore_safety", "tells the assistant to ignore its safety rules",
     r"\b(?:ignore|skip|drop|forget|bypass)\s+(?:your\s+|the\s+|all\s+|any\s+)?(?:safety|security)\s+"
     r"(?:rules|guidelines|checks|policies|restrictions)"),
    ("c2.without_confirmation", "tells the agent to change shared code without asking",
     r"\b(?:push|merge|deploy|force[- ]push)\b" + _clause_gap(120, r"\b(?:push|merge|deploy)\b")
     + r"(?:without\s+(?:asking|confirmation|review|a\s+review)|don'?t\s+ask\s+me|skip(?:ping)?\s+(?:the\s+)?review)"),
]  # fmt: skip

# Phrases spelled out letter by letter ("i g n o r e a l l p r e v i o u s ..."), matched on
# letters only.
COMPACT_SPECS: list[tuple[str, str, str]] = [
    ("prompt_injection.ignore_previous", "tells the model to ignore its previous instructions",
     r"(?:ignore|forget|disregard)(?:all|any|the|your)*(?:previous|prior|above|earlier)?(?:instructions|prompts|rules)"),
    ("role_hijack.leak_system_prompt", "asks to reveal the system prompt",
     r"(?:reveal|print|show|output|leak|repeat)(?:me|us)?(?:your|the)(?:full|hidden)?systemprompt"),
    ("prompt_injection.bypass_restrictions", "asks to bypass safety restrictions",
     r"(?:bypass|disable|remove)(?:all|your|the)*(?:safety|content)(?:filters|restrictions|guardrails)"),
    ("role_hijack.you_are_now", "tries to give the model a new role", r"youarenow(?:a|an|the|dan|free|unrestricted)"),
    ("prompt_injection.deception", "tells the model to keep something from the user", r"(?:donot|dont|never)tell(?:the)?user"),
    ("exfiltration.send_to_url", "sends data out", r"(?:send|upload|forward)(?:all|the|user|users)*(?:data|messages|files|"
     r"conversations|credentials|secrets|keys|passwords|history)to"),
]  # fmt: skip
