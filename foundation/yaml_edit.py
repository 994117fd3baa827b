"""Change a few keys of a YAML document and keep every other byte.

config.yaml is shared with Hermes Agent, which keeps many keys the dashboard does not know
(`model.default`, `toolsets`, `skills.external_dirs`, `_config_version`, ...). Re-dumping the
parsed document would keep the keys but not their formatting or comments, so a save splices the
new values into the original text at the positions PyYAML's composer reports, and only falls
back to a full re-dump when the splice does not parse back to the intended data (an exotic
layout such as a flow-style section). Either way no key the save did not mean to change is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


class SpliceError(Exception):
    """The document's shape is not one the splice handles; the caller re-dumps instead."""


def render_inline(value: Any) -> str:
    """A value as it would follow `key: ` on one line (flow style for lists and mappings)."""
    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000)
    return text.removesuffix("\n...\n").rstrip("\n")


def render_block(value: Mapping[str, Any], indent: int) -> str:
    """A mapping as block lines indented by `indent` spaces, each line starting with a newline."""
    text = yaml.safe_dump(dict(value), sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
    pad = " " * indent
    return "".join(f"\n{pad}{line}" for line in text.rstrip("\n").split("\n"))


def _pairs(node: MappingNode) -> dict[str, tuple[Node, Node]]:
    return {k.value: (k, v) for k, v in node.value if isinstance(k, ScalarNode)}


def _end(text: str, node: Node) -> int:
    """Where a value really ends: block collections' end marks run on over trailing blank lines."""
    end = int(node.end_mark.index)
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _value_text(old: Node, value: Any) -> str:
    """A new value written in the old one's style: a block list stays a block list."""
    if isinstance(old, SequenceNode) and not old.flow_style and isinstance(value, list) and value:
        pad = " " * int(old.start_mark.column)
        return "".join(f"\n{pad}- {render_inline(item)}" for item in value)
    return " " + render_inline(value)


def _section_edits(text: str, skey: Node, sval: Node, new_section: Any, keys: list[str]) -> list[tuple[int, int, str]]:
    if not (isinstance(sval, MappingNode) and not sval.flow_style and isinstance(new_section, Mapping)):
        # A null, scalar (Hermes' `model: "name"`) or flow-style section: rewrite that section only.
        if isinstance(new_section, Mapping):
            body = render_block(new_section, int(skey.start_mark.column) + 2)
            return [(int(skey.end_mark.index), _end(text, sval), ":" + body)]
        return [(int(skey.end_mark.index), _end(text, sval), ": " + render_inline(new_section))]
    pairs = _pairs(sval)
    edits: list[tuple[int, int, str]] = []
    added: list[str] = []
    for key in keys:
        if key in pairs:
            k, v = pairs[key]
            edits.append((int(k.end_mark.index), _end(text, v), ":" + _value_text(v, new_section[key])))
        else:
            added.append(key)
    if added:
        first_key = sval.value[0][0]
        pad = " " * int(first_key.start_mark.column)
        where = _end(text, sval)
        lines = "".join(f"\n{pad}{key}: {render_inline(new_section[key])}" for key in added)
        edits.append((where, where, lines))
    return edits


def splice(text: str, new_data: Mapping[str, Any], changed: Mapping[str, list[str]]) -> str:
    """`text` with the `changed` keys ({section: [key, ...]}) set to their values in `new_data`."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise SpliceError(str(exc)) from exc
    if root is None:
        raise SpliceError("empty document")
    if not isinstance(root, MappingNode) or root.flow_style:
        raise SpliceError("the top level is not a block mapping")
    sections = _pairs(root)
    edits: list[tuple[int, int, str]] = []
    appended: list[str] = []
    for section, keys in changed.items():
        if section in sections:
            skey, sval = sections[section]
            edits.extend(_section_edits(text, skey, sval, new_data[section], keys))
        else:
            appended.append(section)
    out = text
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + new + out[end:]
    if appended:
        out = out if out.endswith("\n") or not out else out + "\n"
        for section in appended:
            value = new_data[section]
            body = render_block(value, 2) if isinstance(value, Mapping) else " " + render_inline(value)
            out += f"{section}:{body}\n"
    return out
