"""Outlines and the ranked repo map: which definitions matter most, fitted to a token budget (pure functions)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from tools.tags import Definition, FileTags

CHARS_PER_TOKEN = 4
IN_PLAY_REFERRER_WEIGHT = 10.0  # uses from files the agent touched say what matters now
IN_PLAY_DEFINER_WEIGHT = 2.0
PRIVATE_NAME_WEIGHT = 0.1  # `_name` is meant for its own module
_NOT_NAMES = frozenset({"impl"})  # containers whose "name" is another definition's


@dataclass(frozen=True, slots=True)
class RankedDefinition:
    rel: str
    index: int  # position in the file's definitions, for finding its enclosing ones
    definition: Definition
    score: float


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


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


def _is_rankable(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__"))


def rank_definitions(
    tags_by_file: Mapping[str, FileTags], in_play: Collection[str] = ()
) -> list[RankedDefinition]:
    """Every definition, most referenced-from-other-files first.

    A file that uses a name spreads weight sqrt(uses) over the files defining that name (a name
    defined in many files says little about each of them). Uses from files in play weigh more,
    and so do definitions in them. Ties fall back to path and line, so the order is stable.
    """
    files = sorted(tags_by_file)
    definers: dict[str, list[str]] = {}
    for rel in files:
        for name in {d.name for d in tags_by_file[rel].definitions if d.kind not in _NOT_NAMES}:
            if _is_rankable(name):
                definers.setdefault(name, []).append(rel)
    received: dict[tuple[str, str], float] = {}
    for rel in files:
        references = tags_by_file[rel].references
        weight = IN_PLAY_REFERRER_WEIGHT if rel in in_play else 1.0
        for name in sorted(references.keys() & definers.keys()):
            targets = definers[name]
            share = weight * math.sqrt(references[name]) / len(targets)
            if name.startswith("_"):
                share *= PRIVATE_NAME_WEIGHT
            for target in targets:
                if target != rel:
                    key = (target, name)
                    received[key] = received.get(key, 0.0) + share
    ranked: list[RankedDefinition] = []
    for rel in files:
        boost = IN_PLAY_DEFINER_WEIGHT if rel in in_play else 1.0
        for index, definition in enumerate(tags_by_file[rel].definitions):
            score = boost * received.get((rel, definition.name), 0.0)
            ranked.append(RankedDefinition(rel, index, definition, score))
    ranked.sort(key=lambda item: (-item.score, item.rel, item.index))
    return ranked


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


def fit_map(
    ranked: Sequence[RankedDefinition], tags_by_file: Mapping[str, FileTags], budget_chars: int
) -> tuple[str, int]:
    """The longest prefix of the ranking whose rendering fits the budget, and how many it holds."""
    shortest_line = 16
    low, high = 0, min(len(ranked), max(budget_chars // shortest_line, 1))
    best = ""
    while low < high:
        middle = (low + high + 1) // 2
        text = _render_selection(ranked[:middle], tags_by_file)
        if len(text) <= budget_chars:
            low, best = middle, text
        else:
            high = middle - 1
    return best, low
