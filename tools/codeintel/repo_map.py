"""Outlines and the repo map's text: ranked definitions grouped by file, fitted to a character budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keel.tools.codeintel.ranking import RankedDefinition
from keel.tools.codeintel.tags import Definition, FileTags

CHARS_PER_TOKEN = 4
_SHORTEST_LINE = 8  # "  1: x=1" and a newline


def outline_line(definition: Definition) -> str:
    return f"{'  ' * (definition.depth + 1)}{definition.line}: {definition.signature}"


def render_outline(rel: str, definitions: Sequence[Definition]) -> str:
    """A file's definitions in source order, nested ones indented under their container."""
    if not definitions:
        return f"{rel}\n  (no definitions)"
    return "\n".join([rel, *(outline_line(definition) for definition in definitions)])


def parents(definitions: Sequence[Definition], index: int) -> list[int]:
    """Indexes of the definitions enclosing definitions[index], outermost first."""
    chain: list[int] = []
    depth = definitions[index].depth
    for at in range(index - 1, -1, -1):
        if depth == 0:
            break
        if definitions[at].depth < depth:
            chain.append(at)
            depth = definitions[at].depth
    return chain[::-1]


def _render_selection(
    selection: Sequence[RankedDefinition], tags_by_file: Mapping[str, FileTags]
) -> str:
    """The chosen definitions grouped by file (files in rank order), each with its containers."""
    chosen: dict[str, set[int]] = {}
    for item in selection:
        indexes = chosen.setdefault(item.rel, set())
        indexes.add(item.index)
        indexes.update(parents(tags_by_file[item.rel].definitions, item.index))
    blocks: list[str] = []
    for rel, indexes in chosen.items():
        definitions = tags_by_file[rel].definitions
        blocks.append("\n".join([rel, *(outline_line(definitions[i]) for i in sorted(indexes))]))
    return "\n".join(blocks)


def most_that_fit(budget_chars: int) -> int:
    """An upper bound on how many definitions a map of `budget_chars` can show."""
    return max(budget_chars // _SHORTEST_LINE, 1)


def fit_map(
    ranked: Sequence[RankedDefinition], tags_by_file: Mapping[str, FileTags], budget_chars: int
) -> tuple[str, int]:
    """The longest prefix of the ranking whose rendering fits the budget, and how many it holds."""
    low, high = 0, min(len(ranked), most_that_fit(budget_chars))
    best = ""
    while low < high:
        middle = (low + high + 1) // 2
        text = _render_selection(ranked[:middle], tags_by_file)
        if len(text) <= budget_chars:
            low, best = middle, text
        else:
            high = middle - 1
    return best, low
