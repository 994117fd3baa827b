"""The threat scan for a skill's files: documentation of a task, read in context.

A skill documents how to do something, and its examples do exactly what the scan looks for in a
memory note: an API call carries `$NOTION_API_KEY`, a key-setup step names `~/.ssh/id_ed25519`,
an HTML asset hides a slider label, an XML schema starts with a byte-order mark. Read as a note
those are threats; read as the skill's own task they are not. So a skill file is read in
context before the ordinary scan (knowledge/verification/threat_scan.py) runs on all of it:

- a byte-order mark at the very start of a file is an encoding mark, not hidden text;
- code (a fenced block, an inline code span, a file under scripts/ or with a code suffix) is an
  example, not an instruction: in it
  - a secret variable sent to the service it belongs to (`$NOTION_API_KEY` to api.notion.com,
    `$API_KEY` to the service the skill is about, anything to this machine) is the skill's task;
  - a placeholder value (`ghp_your_github_token`, `sk-xxxx…`, `secret123`) is not a secret;
  - markup that hides an element, or a comment, hides nothing (code is shown as source), unless
    the hidden text speaks to the assistant;
  - `~/.ssh` paths of public or non-secret files, and private keys handed only to ssh-keygen,
    ssh-add, ssh, chmod, git or gh, are key management, not key theft;
- in prose, a linter's directive comment (`<!-- prettier-ignore -->`) and a parenthesised list of
  quoted phrases given as examples of wording (`avoid language like ("…", "…")`) are not
  instructions; a skill about the agent itself may name its config files; telling where a
  skill's API key goes (`add it to ~/.hermes/.env`) is setup.

Each rule rewrites only the construct it recognises in the raw text (a secret variable's name, a
placeholder's value, a comment's delimiters), and the full scan then reads everything else,
disguises included: an injection written inside a code block, a secret sent to another host, or
a key read out to the conversation is still caught.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from knowledge.verification.threat_scan import ThreatHit, scan_all_long

__all__ = ["Subject", "code_file", "read_in_context", "scan_document"]

BOM = "\ufeff"

# Files read as code whatever their content: a skill's scripts, and files with a code suffix.
_CODE_SUFFIXES = frozenset((
    ".py", ".pyi", ".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx",
    ".vue", ".svelte", ".html", ".htm", ".css", ".scss", ".xml", ".xsd", ".xsl", ".xslt", ".svg", ".json",
    ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".go", ".rb", ".php", ".java", ".kt", ".kts",
    ".cs", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp", ".swift", ".m", ".sql", ".lua", ".r", ".pl", ".dart",
    ".scala", ".ex", ".exs", ".tf", ".proto", ".graphql",
))  # fmt: skip
_CODE_FOLDERS = frozenset({"scripts"})


def code_file(path: str) -> bool:
    """Whether the file at `path` (relative to its skill) is code as a whole."""
    p = PurePosixPath(path)
    return p.suffix.lower() in _CODE_SUFFIXES or bool(p.parts[:-1]) and p.parts[0] in _CODE_FOLDERS


# -- what a skill is about ---------------------------------------------------------------------

_STOP = frozenset((
    "the", "and", "for", "with", "from", "into", "that", "this", "your", "you", "use", "uses", "using", "when",
    "what", "which", "how", "via", "any", "all", "are", "can", "not", "its", "their", "them", "then", "than",
    "will", "would", "should", "skill", "skills", "tool", "tools", "file", "files", "data", "api", "apis", "agent",
    "agents", "app", "apps", "cli", "http", "https",
))  # fmt: skip


@dataclass(frozen=True)
class Subject:
    """What a skill is about: the words of its name, category and description."""

    name: str = ""
    category: str = ""
    description: str = ""

    @cached_property
    def words(self) -> frozenset[str]:
        text = f"{self.name} {self.category} {self.description}".lower()
        return frozenset(w for w in re.findall(r"[a-z0-9]+", text) if len(w) >= 3 and w not in _STOP)

    @cached_property
    def agents(self) -> frozenset[str]:
        """The coding agents a skill documents by name ("hermes-agent", "claude-code"): their own
        config and instruction files are its subject."""
        return frozenset(re.findall(r"[a-z0-9]+", f"{self.name} {self.category}".lower())) & frozenset(_AGENT_FILES)


# -- regions: code and prose --------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)*[ \t]{0,3}(`{3,}|~{3,})", re.MULTILINE)
_INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def regions(text: str, path: str) -> list[tuple[str, bool]]:
    """The text cut into (piece, is_code) in order; the pieces joined are the text."""
    if code_file(path):
        return [(text, True)]
    out: list[tuple[str, bool]] = []
    pos = 0
    while (opening := _FENCE.search(text, pos)) is not None:
        fence = opening.group(1)
        close_rx = re.compile(
            rf"^[ \t]{{0,3}}(?:>[ \t]?)*[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M
        )
        body_start = text.find("\n", opening.end())
        body_start = len(text) if body_start < 0 else body_start + 1
        closing = close_rx.search(text, body_start)
        end = len(text) if closing is None else closing.end()
        out.extend(_inline(text[pos : opening.start()]))
        out.append((text[opening.start() : end], True))
        pos = end
    out.extend(_inline(text[pos:]))
    return out


def _inline(prose: str) -> Iterable[tuple[str, bool]]:
    pos = 0
    for m in _INLINE_CODE.finditer(prose):
        yield prose[pos : m.start()], False
        yield m.group(0), True
        pos = m.end()
    yield prose[pos:], False


# -- code: secrets sent to the service they belong to --------------------------------------------

_NET_TOOL = re.compile(
    r"\b(?:curl|wget|https?|httpie|xh|invoke-webrequest|invoke-restmethod|iwr|irm|nc|ncat|netcat|fetch|requests"
    r"|httpx|axios|aiohttp|urllib|gh|websocat|grpcurl)\b",
    re.I,
)
_SECRET_VAR = re.compile(
    r"\$\{?([A-Za-z_]\w*(?:key|token|secret|password|passwd|credential|credentials|pat)s?)\b(?::?-[^}]*)?\}?", re.I
)
_URL_HOST = re.compile(r"\b(?:https?|wss?|ftp)://(?:[^@/\s\"'`]+@)?([^/\s\"'`:?#)\]}>,;]+)", re.I)
_LOOPBACK = re.compile(r"^(?:localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[?::1\]?|host\.docker\.internal)$", re.I)
_GENERIC_VAR_WORDS = frozenset((
    "api", "key", "keys", "token", "tokens", "secret", "secrets", "password", "passwd", "pass", "access", "auth",
    "bearer", "private", "client", "id", "env", "value", "credential", "credentials", "pat", "personal", "app",
    "my", "the", "user",
))  # fmt: skip
_GENERIC_HOST_LABELS = frozenset((
    "api", "www", "com", "org", "net", "io", "dev", "co", "app", "ai", "v1", "v2", "v3", "gateway", "eu", "us",
    "uk", "de",
))  # fmt: skip


def _tokens(name: str) -> set[str]:
    return {t for t in re.split(r"[_\W]+", name.lower()) if t}


def _related(a: str, b: str) -> bool:
    """Two name parts that name the same service ("comfy" and "comfyui", "gh" and "github")."""
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and (len(short) >= 4 or len(short) >= 2 and len(long) <= 8)


def _own_host(host: str, var: str, subject: Subject) -> bool:
    """Whether sending the secret `var` to `host` is using it where it belongs."""
    if _LOOPBACK.match(host):
        return True
    if re.search(r"[$<{%]", host):
        return True  # a variable or placeholder host: decided by the literal hosts beside it
    labels = {part for label in host.lower().split(".") for part in label.split("-")} - _GENERIC_HOST_LABELS
    own = _tokens(var) - _GENERIC_VAR_WORDS
    # A named secret goes only to its own vendor; a generic one to the service the skill is about.
    words = own or set(subject.words)
    return any(_related(w, label) for w in words for label in labels)


def _logical_lines(code: str) -> list[str]:
    """Lines with their backslash continuations joined on (the line breaks kept)."""
    return re.split(r"(?<!\\)\n", code)


def _own_secrets(code: str, subject: Subject) -> str:
    literal_hosts = [h for h in _URL_HOST.findall(code) if not re.search(r"[$<{%]", h)]
    out = []
    for line in _logical_lines(code):
        variables = _SECRET_VAR.findall(line)
        if variables:
            hosts = [h for h in _URL_HOST.findall(line) if not re.search(r"[$<{%]", h)] or literal_hosts
            sends = _NET_TOOL.search(line) is not None
            if not sends or all(_own_host(h, v, subject) for v in variables for h in hosts):
                line = _SECRET_VAR.sub("$SKILL_SETTING", line)
        out.append(line)
    return "\n".join(out)


# -- code: placeholder values --------------------------------------------------------------------

_SECRET_VALUE = re.compile(
    r"(?P<lead>(?:password|passwd|pwd|secret|key|token)\w*[\"']?\s*[=:]\s*[\"']?(?:bearer\s+|token\s+)?)"
    r"(?P<value>[^\s\"'`,;)\]}]+(?:\{[^}\s]*\}[^\s\"'`,;)\]]*)?)"
    r"|(?P<prefixed>\b(?:sk-(?:proj-|ant-|live-)?|gh[pousr]_|github_pat_|xox[baprs]-|glpat-|akia)[\w\-]{4,})",
    re.I,
)
_PLACEHOLDER = re.compile(
    r"your|xxxx|\*\*\*\*|\.\.\.|…|example|placeholder|changeme|change[-_]me|dummy|fake|sample|generate|replace"
    r"|here|redacted|secret|password|passwd|token|test|demo|[<>{}$%]|(.)\1{5}",
    re.I,
)


def _placeholders(code: str) -> str:
    def inert(m: re.Match[str]) -> str:
        value = m.group("value") or m.group("prefixed")
        if value.startswith("$"):
            return m.group(0)  # a variable, not a value: where it is sent is judged by `_own_secrets`
        placeholder = _PLACEHOLDER.search(value)
        # A key with a vendor's prefix is a placeholder only when it says so ("ghp_your_token",
        # "sk-xxxx"); a well-formed one ending in "EXAMPLE" is still a key's shape.
        if not placeholder or m.group("prefixed") and placeholder.group(0).lower() == "example":
            return m.group(0)
        return (m.group("lead") or "") + "placeholder"

    return _SECRET_VALUE.sub(inert, code)


# -- markup: hidden elements and comments shown as source ----------------------------------------

# Words by which hidden text would speak to the assistant; a comment or hidden element holding
# one is left for the scan even in code.
_ADDRESS = re.compile(
    r"\b(?:ignore|disregard|instructions?|directives?|assistant|agent|model|llm|ai|override|you\s+must|you\s+should"
    r"|execute|exfiltrat\w*|obey|secrets?|hidden\s+note)\b",
    re.I,
)
_COMMENT = re.compile(r"<!--(.*?)(?:-->|$)", re.S)
_HIDDEN_TAG = re.compile(r"<(\s*(?:div|span|p|section)\b[^<>]*>)([^<]*)", re.I)


def _shown_markup(code: str) -> str:
    def comment(m: re.Match[str]) -> str:
        body = m.group(1)
        return m.group(0) if _ADDRESS.search(body) else f"    {body}   "

    def element(m: re.Match[str]) -> str:
        text = m.group(2)
        if _ADDRESS.search(text) or len(text.strip()) > 80:
            return m.group(0)
        return f"&lt;{m.group(1)}{text}"

    return _HIDDEN_TAG.sub(element, _COMMENT.sub(comment, code))


# -- code: SSH key management --------------------------------------------------------------------

_SSH_PATH = re.compile(r"(?:~|\$HOME|\$\{HOME\})/\.ssh(?P<rest>/[\w.*\-]*)?", re.I)
_PUBLIC_SSH = re.compile(r"/(?:config|known_hosts\w*|[\w*\-]+\.pub)$", re.I)
_KEY_PROGRAMS = re.compile(r"^\s*(?:sudo\s+)?(?:ssh-keygen|ssh-add|ssh|chmod|chown|git|gh|ls|mkdir|test|\[)\b")


def _key_management(code: str) -> str:
    out = []
    for line in _logical_lines(code):
        handled = _KEY_PROGRAMS.match(line) is not None and not re.search(r"\|\s*\S", line)

        def inert(m: re.Match[str], handled: bool = handled) -> str:
            rest = m.group("rest") or ""
            return "~/ssh-folder" + rest if handled or _PUBLIC_SSH.search(rest) else m.group(0)

        out.append(_SSH_PATH.sub(inert, line))
    return "\n".join(out)


# -- the agent's own files -----------------------------------------------------------------------

# Each agent's own config and instruction files, named in a skill that documents that agent.
_AGENT_FILES: dict[str, re.Pattern[str]] = {
    "hermes": re.compile(
        r"(?:~|\$HOME|\$\{HOME\}|\$\{?HERMES_HOME(?::-[^}]*)?\}?)?/?\.hermes\}?/(?:config\.ya?ml|\.env)\b", re.I
    ),
    "claude": re.compile(r"(?<![\w-])(?:CLAUDE\.md|\.claude/settings(?:\.local)?\.json)\b", re.I),
    "codex": re.compile(r"(?<![\w-])AGENTS\.md\b", re.I),
    "opencode": re.compile(r"(?<![\w-])AGENTS\.md\b", re.I),
    "cursor": re.compile(r"\.cursorrules\b", re.I),
    "cline": re.compile(r"\.clinerules\b", re.I),
}
_AGENT_SETUP_FILE = re.compile(
    r"(?:~|\$HOME|\$\{HOME\}|\$\{?HERMES_HOME(?::-[^}]*)?\}?)?/?\.hermes\}?/(?P<file>config\.ya?ml|\.env)\b", re.I
)
_KEY_WORDS = re.compile(r"api[\s_-]?keys?|tokens?|_KEY\b|_TOKEN\b|credentials?", re.I)
_ROUTING_WORDS = re.compile(r"_URL\b|base[\s_-]?url|_HOST\b|proxy|endpoint", re.I)
_ADD_TO = re.compile(r"\b(?:add|put|set|save|store|write|export|place)\b[^.\n]{0,120}?$", re.I)


def _agent_files(text: str, subject: Subject, before: str) -> str:
    """A skill about the agent names its config files; any skill says where its API key goes."""

    for agent in subject.agents:
        text = _AGENT_FILES[agent].sub("the agent's own file", text)

    def inert(m: re.Match[str]) -> str:
        lead = (before + text[: m.start()])[-300:]
        key_setup = _ADD_TO.search(lead) and _KEY_WORDS.search(lead) and not _ROUTING_WORDS.search(lead)
        if m.group("file").lower() == ".env" and key_setup:
            return "the agent's env file"
        return m.group(0)

    return _AGENT_SETUP_FILE.sub(inert, text)


# -- prose: directives and quoted examples -------------------------------------------------------

_DIRECTIVE = re.compile(
    r"<!--\s*([a-z0-9][\w.]*(?:-[\w.]+)*-(?:ignore|disable|enable|end|start|begin|next-line|line)[\w.\-]*"
    r"(?:\s+[\w.,:\-]+){0,3})\s*-->",
    re.I,
)
_MENTION_LEAD = re.compile(
    r"\b(?:language|phrases?|phrasing|wording|words|such\s+as|like|e\.g\.|for\s+example|avoid\w*)\b[^()\n]{0,40}$",
    re.I,
)
_QUOTED_LIST = re.compile(r"\((?:\s*[\"“][^\"”\n]{1,80}[\"”]\s*,)+\s*[\"“][^\"”\n]{1,80}[\"”]\s*\)")


# The risk named ("data exfiltration") or denied ("cannot read or exfiltrate"): a mention.
_EXFIL_NOUN = re.compile(r"\bexfiltration(s?)\b", re.I)
_EXFIL_DENIED = re.compile(
    r"\b(?P<lead>(?:cannot|can't|can\s+not|never|not|won't|don't|doesn't|mustn't)(?:\s+\w+){0,3}?\s+)exfiltrat(?:e|es|ing)\b",
    re.I,
)


def _mentions(text: str) -> str:
    return _EXFIL_DENIED.sub(lambda m: m.group("lead") + "take", _EXFIL_NOUN.sub(r"data theft\1", text))


def _prose(text: str) -> str:
    text = _DIRECTIVE.sub(lambda m: f"    {m.group(1)}   ", text)

    def quoted(m: re.Match[str]) -> str:
        if not _MENTION_LEAD.search(text[max(0, m.start() - 80) : m.start()]):
            return m.group(0)
        return "(" + ", ".join("[quoted example]" for _ in re.findall(r"[\"“]", m.group(0))[::2]) + ")"

    return _QUOTED_LIST.sub(quoted, text)


# -- the document --------------------------------------------------------------------------------

_CODE_RULES: tuple[Callable[[str, Subject], str], ...] = (
    _own_secrets,
    lambda code, _subject: _placeholders(code),
    lambda code, _subject: _shown_markup(code),
    lambda code, _subject: _key_management(code),
)


def read_in_context(text: str, path: str = "SKILL.md", subject: Subject | None = None) -> str:
    """`text` with the constructs that are a skill's own task made inert (see the module's doc)."""
    subject = subject or Subject()
    if text.startswith(BOM):
        text = text[1:]
    pieces: list[str] = []
    for piece, is_code in regions(text, path):
        if is_code:
            for rule in _CODE_RULES:
                piece = rule(piece, subject)
        else:
            piece = _prose(piece)
        pieces.append(_agent_files(_mentions(piece), subject, "".join(pieces[-3:])))
    return "".join(pieces)


def scan_document(text: str, path: str = "SKILL.md", subject: Subject | None = None) -> list[ThreatHit]:
    """Every threat in a skill's file, read in context; the ordinary scan when nothing applies."""
    return scan_all_long(read_in_context(text, path, subject))
