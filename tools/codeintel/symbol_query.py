"""A symbol's definitions and uses across a tree, from cached tags (uses re-read only the files that name it)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from keel.tools.codeintel.repo_map import parents
from keel.tools.codeintel.source_files import SourceFile
from keel.tools.codeintel.tags import Definition, FileTags, reference_lines

MAX_DEFINITIONS = 20
MAX_USES = 40
MAX_USES_PER_FILE = 8
MAX_LINE_CHARS = 160
_SYMBOL = re.compile(r"[\w$~]+(?:(?:\.|::|#)[\w$~]+)*\Z")
_SEPARATOR = re.compile(r"\.|::|#")


@dataclass(frozen=True, slots=True)
class SymbolQuery:
    """`name`, or `Container.name` (also `::` or `#`) to keep only members of that container."""

    container: str | None
    name: str

    @classmethod
    def parse(cls, text: str) -> SymbolQuery | None:
        text = text.strip()
        if not _SYMBOL.match(text):
            return None
        parts = _SEPARATOR.split(text)
        return cls(parts[-2] if len(parts) > 1 else None, parts[-1])


@dataclass(frozen=True, slots=True)
class FoundDefinition:
    rel: str
    definition: Definition
    container: str | None


@dataclass(frozen=True, slots=True)
class SymbolUse:
    rel: str
    line: int
    text: str


def find_definitions(
    query: SymbolQuery, tags_by_file: Mapping[str, FileTags]
) -> list[FoundDefinition]:
    found: list[FoundDefinition] = []
    for rel in sorted(tags_by_file):
        definitions = tags_by_file[rel].definitions
        for index, definition in enumerate(definitions):
            if definition.name != query.name:
                continue
            chain = parents(definitions, index)
            container = definitions[chain[-1]].name if chain else None
            if query.container is None or container == query.container:
                found.append(FoundDefinition(rel, definition, container))
    return found


def find_uses(
    query: SymbolQuery,
    files: Sequence[SourceFile],
    tags_by_file: Mapping[str, FileTags],
    first: Collection[str] = (),
) -> tuple[list[SymbolUse], list[str]]:
    """Up to MAX_USES uses and every file using the name; files in `first`, then files naming
    the query's container (likelier to mean this `name`), come before the rest."""
    name = query.name
    near = {
        rel
        for rel, tags in tags_by_file.items()
        if query.container is not None and query.container in tags.references
    }
    using = [
        source
        for source in files
        if (tags := tags_by_file.get(source.rel)) is not None and name in tags.references
    ]
    using.sort(key=lambda source: (source.rel not in first, source.rel not in near, source.rel))
    uses: list[SymbolUse] = []
    only_mentioned: set[str] = set()  # the word is there, but only in strings or comments
    for source in using:
        if len(uses) >= MAX_USES:
            break
        try:
            with open(source.path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        lines = data.splitlines()
        found = reference_lines(data, source.language, name)
        if not found:
            only_mentioned.add(source.rel)
        for number in found[:MAX_USES_PER_FILE]:
            text = lines[number - 1].decode("utf-8", "replace").strip()
            if len(text) > MAX_LINE_CHARS:
                text = text[: MAX_LINE_CHARS - 1] + "…"
            uses.append(SymbolUse(source.rel, number, text))
            if len(uses) >= MAX_USES:
                break
    return uses, [source.rel for source in using if source.rel not in only_mentioned]


def render_query(
    query: SymbolQuery,
    where: str,
    definitions: Sequence[FoundDefinition],
    uses: Sequence[SymbolUse],
    using_files: Sequence[str],
    tags_by_file: Mapping[str, FileTags],
) -> str:
    label = f"{query.container}.{query.name}" if query.container else query.name
    if not definitions and not using_files:
        return (
            f"No definition or use of `{label}` in {len(tags_by_file)} source files under {where}. "
            "The name may be spelled differently or live in a file type code_map does not read: "
            "try search with a regex, or code_map without query for the repo map."
        )
    out: list[str] = []
    if definitions:
        out.append(f"Definitions of `{label}` ({len(definitions)}):")
        for found in definitions[:MAX_DEFINITIONS]:
            inside = f"  [in {found.container}]" if found.container else ""
            out.append(
                f"  {found.rel}:{found.definition.line}: {found.definition.signature}{inside}"
            )
        if len(definitions) > MAX_DEFINITIONS:
            out.append(f"  … {len(definitions) - MAX_DEFINITIONS} more")
    else:
        out.append(f"No definition of `{label}` under {where} (it may come from a library).")
    if not using_files:
        out.append(f"No uses of `{query.name}` under {where}.")
        return "\n".join(out)
    shown_files = len({use.rel for use in uses})
    showing = f", first {len(uses)} uses shown" if shown_files < len(using_files) else ""
    out.append(f"Uses of `{query.name}` (matched by name) in {len(using_files)} files{showing}:")
    out.extend(f"  {use.rel}:{use.line}: {use.text}" for use in uses)
    if shown_files < len(using_files):
        rest = [rel for rel in using_files if rel not in {use.rel for use in uses}]
        listed = ", ".join(rest[:10]) + (f", … {len(rest) - 10} more" if len(rest) > 10 else "")
        out.append(f"  also used in: {listed}")
    return "\n".join(out)
