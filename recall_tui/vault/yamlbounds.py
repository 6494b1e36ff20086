"""The bounds on what one file's frontmatter may become, whatever it holds.

PyYAML expands aliases when it constructs: a 365-byte alias bomb (9 levels of 9 aliases) is
387 million values. `_refuse_unbounded` walks the composed node graph first, in time linear
in the nodes (expanded sizes memoised per node), and drops each top-level key whose value
would be unbounded, with a problem on its line; `_cut_value` cuts long texts. Used by
`frontmatter.py`; the limits are documented in docs/vault-format.md ("Frontmatter").
"""

from __future__ import annotations

from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from recall_tui.vault.model import Problem

#: Values YAML aliases (`*name`, and `<<` merges) may add to one file's frontmatter once
#: expanded; a key whose aliases would pass it is ignored (an alias bomb: 365 bytes, 9 levels
#: of 9 aliases, expands to 387 million values).
MAX_ALIAS_NODES = 10_000
#: Levels a frontmatter value may nest (lists in lists, maps in maps, through aliases too).
MAX_DEPTH = 64
#: Unknown keys kept per file (the known keys are always kept); the rest are ignored.
MAX_EXTRA_KEYS = 256
#: Characters kept of one text value (a key's, a list item's, a title taken from the body).
MAX_VALUE_CHARS = 65_536


class _Unbounded(Exception):
    """A value beyond the bounds; carries the reason for the problem."""


def _refuse_unbounded(
    doc: MappingNode, rel: str, first_line: int, problems: list[Problem]
) -> None:
    """Drop from the composed document each top-level entry whose value, constructed, would
    be unbounded: aliases past the file's MAX_ALIAS_NODES, nesting past MAX_DEPTH, or a
    value that contains itself. Runs on PyYAML's node graph before anything is constructed,
    in time linear in the nodes composed (expanded sizes are memoised per node)."""
    seen: set[int] = set()  # nodes met in the document so far: meeting one again is an alias
    sizes: dict[int, tuple[int, int]] = {}  # node -> (expanded size, capped; height)
    spent = 0
    kept: list[tuple[Node, Node]] = []
    for key_node, value_node in doc.value:
        try:
            cost = _alias_cost(key_node, 0, seen, sizes, MAX_ALIAS_NODES - spent)
            cost += _alias_cost(value_node, 0, seen, sizes, MAX_ALIAS_NODES - spent - cost)
        except _Unbounded as exc:
            key = key_node.value if isinstance(key_node, ScalarNode) else "a key"
            problems.append(
                Problem(rel, first_line + key_node.start_mark.line, f"{key}: {exc}; key ignored")
            )
            continue
        spent += cost
        kept.append((key_node, value_node))
    doc.value = kept


def _alias_cost(node: Node, depth: int, seen: set[int], sizes: dict[int, tuple[int, int]],
                budget: int) -> int:
    """Values the aliases under `node` add when expanded (its own nodes, met for the first
    time, are free: they are bounded by the file's size). Raises `_Unbounded`."""
    if depth > MAX_DEPTH:
        raise _Unbounded(f"nested deeper than {MAX_DEPTH} levels")
    if id(node) in seen:  # an alias (or a merge of one): it costs its whole expansion
        size, height = _expanded(node, sizes, set())
        if depth + height > MAX_DEPTH:
            raise _Unbounded(f"nested deeper than {MAX_DEPTH} levels through YAML aliases")
        if size > budget:
            raise _Unbounded(
                f"YAML aliases expand past {MAX_ALIAS_NODES:,} values in this file")
        return size
    seen.add(id(node))
    cost = 0
    if isinstance(node, SequenceNode):
        for item in node.value:
            cost += _alias_cost(item, depth + 1, seen, sizes, budget - cost)
    elif isinstance(node, MappingNode):
        for k, v in node.value:
            cost += _alias_cost(k, depth + 1, seen, sizes, budget - cost)
            cost += _alias_cost(v, depth + 1, seen, sizes, budget - cost)
    return cost


def _expanded(node: Node, sizes: dict[int, tuple[int, int]], open_: set[int]) -> tuple[int, int]:
    """(values in `node` once every alias is expanded, capped just past MAX_ALIAS_NODES;
    levels below it). Memoised in `sizes`; recursion stops at MAX_DEPTH levels."""
    got = sizes.get(id(node))
    if got is not None:
        return got
    if id(node) in open_:
        raise _Unbounded("a value that contains itself (a YAML alias to its own anchor)")
    if len(open_) > MAX_DEPTH:
        raise _Unbounded(f"nested deeper than {MAX_DEPTH} levels through YAML aliases")
    size, height = 1, 0
    if isinstance(node, SequenceNode | MappingNode):
        open_.add(id(node))
        children: list[Node] = (
            node.value if isinstance(node, SequenceNode) else [n for kv in node.value for n in kv]
        )
        for child in children:
            s, h = _expanded(child, sizes, open_)
            size = min(size + s, MAX_ALIAS_NODES + 1)
            height = max(height, h + 1)
        open_.discard(id(node))
    sizes[id(node)] = (size, height)
    return size, height


def _cut_value(value: Any) -> Any:
    """`value` with every text in it cut at MAX_VALUE_CHARS: the same object when none is
    longer (values are bounded in size and depth by now)."""
    if type(value) is str:
        return value[:MAX_VALUE_CHARS] if len(value) > MAX_VALUE_CHARS else value
    if type(value) is list:
        items = [_cut_value(v) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if type(value) is dict:
        pairs = {k: _cut_value(v) for k, v in value.items()}
        return pairs if any(pairs[k] is not v for k, v in value.items()) else value
    return value
