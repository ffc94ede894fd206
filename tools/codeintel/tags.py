"""Tag extraction with tree-sitter: the definitions (with signature lines) and references of one source file."""

from __future__ import annotations

import re
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from tree_sitter import Node, Parser, Query, QueryCursor

from keel.tools.codeintel.languages import grammar, parser_for
from keel.tools.codeintel.tag_queries import SPECS

TAGS_VERSION = 3  # bump when extraction changes, so cached tags from older code are dropped

FUNCTION_KINDS = frozenset({"function", "method"})  # what they define is local: not outlined
MAX_SIGNATURE_CHARS = 160
_IDENTIFIER = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]+")  # two characters or more
_BLANK_ALL_BUT_NEWLINES = bytes(10 if byte == 10 else 32 for byte in range(256))
# Reserved words, dropped from references to keep the tags small (none can name a definition).
_KEYWORDS = frozenset(
    b"and as assert async await break class const continue def del elif else except false "
    b"finally for from if import in is lambda not or pass raise return self static struct "
    b"this throw true try while with yield None True False".split()
)
_PADDED_BRACKET = re.compile(r"(?<=[(\[{]) | (?=[)\]}])")  # left by joining a multi-line header
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_NAME_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "type_identifier",
        "property_identifier",
        "constant",
        "namespace_identifier",
        "operator_name",
        "destructor_name",
        "word",
    }
)


class Definition(NamedTuple):
    """A named definition: where it is, how deeply it nests among definitions, and its header line.

    A NamedTuple, not a dataclass: tags of thousands of files cross process boundaries and go
    to disk, and plain tuples serialize several times faster.
    """

    name: str
    kind: str
    line: int  # 1-based
    end_line: int
    depth: int
    signature: str


PlainTags = tuple[tuple[tuple[str, str, int, int, int, str], ...], dict[str, int]]


@dataclass(slots=True)
class FileTags:
    """What one file defines (in source order) and how often it uses each identifier."""

    definitions: tuple[Definition, ...]
    references: dict[str, int]

    def to_plain(self) -> PlainTags:
        """Builtin types only, for `marshal` (the fastest serializer for such data)."""
        definitions = tuple(
            (d.name, d.kind, d.line, d.end_line, d.depth, d.signature) for d in self.definitions
        )
        return definitions, self.references

    @classmethod
    def from_plain(cls, plain: PlainTags) -> FileTags:
        definitions, references = plain
        return cls(tuple(map(Definition._make, definitions)), references)


_local = threading.local()  # tree-sitter parsers must not be shared between threads


def _compiled(language: str) -> tuple[Parser, Query, Query]:
    cache: dict[str, tuple[Parser, Query, Query]] = _local.__dict__.setdefault("compiled", {})
    if language not in cache:
        spec = SPECS[language]
        lang = grammar(language)
        cache[language] = (
            parser_for(language),
            Query(lang, spec.definitions),
            Query(lang, spec.prose),
        )
    return cache[language]


def supports(language: str | None) -> bool:
    return language in SPECS


def _declarator_name(node: Node) -> Node | None:
    """The name inside a C/C++ declarator chain (`**f(void)`, `Foo::bar()`, `~Foo()`)."""
    current: Node | None = node.child_by_field_name("declarator")
    while current is not None and current.type not in _NAME_TYPES:
        if current.type in ("qualified_identifier", "template_function", "template_method"):
            current = current.child_by_field_name("name")
        else:
            current = current.child_by_field_name("declarator")
    return current


def _signature(node: Node, source: bytes, language: str) -> str:
    """The definition's header: up to where its body starts, else its first line; whitespace collapsed."""
    start = node.start_byte
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > start and language != "ruby":
        end = min(body.start_byte, start + 4 * MAX_SIGNATURE_CHARS)
    else:
        line_end = source.find(b"\n", start)
        end = node.end_byte if line_end == -1 else min(line_end, node.end_byte)
        end = min(end, start + 4 * MAX_SIGNATURE_CHARS)
    text = " ".join(source[start:end].decode("utf-8", "replace").split())
    text = _PADDED_BRACKET.sub("", text).replace(",)", ")")
    if language not in ("python", "ruby", "bash"):
        text = text.rstrip("{ ").rstrip()
    if language == "go" and node.type == "type_spec":
        text = "type " + text
    if len(text) > MAX_SIGNATURE_CHARS:
        text = text[: MAX_SIGNATURE_CHARS - 1] + "…"
    return text


def _definition_nodes(root: Node, language: str) -> list[tuple[Node, Node, str]]:
    """(definition node, name node, kind) per definition, deduplicated, in source order."""
    _, definitions_query, _ = _compiled(language)
    cursor = QueryCursor(definitions_query)
    cursor.set_max_start_depth(SPECS[language].max_depth)
    best: dict[tuple[int, int], tuple[int, Node, Node, str]] = {}
    for pattern, captures in cursor.matches(root):
        kind = node = None
        for capture_name, nodes in captures.items():
            if capture_name.startswith("def."):
                kind, node = capture_name[4:], nodes[0]
        if node is None or kind is None:
            continue
        names = captures.get("name")
        name = names[0] if names else _declarator_name(node)
        if name is None:
            continue
        key = (node.start_byte, name.start_byte)
        if key not in best or pattern < best[key][0]:
            best[key] = (pattern, node, name, kind)
    return [(node, name, kind) for _, node, name, kind in (best[k] for k in sorted(best))]


def _definitions(root: Node, source: bytes, language: str) -> tuple[list[Definition], list[Node]]:
    """The definitions worth showing, with their nesting depth, and the name nodes of all definitions."""
    definitions: list[Definition] = []
    name_nodes: list[Node] = []
    open_scopes: list[
        tuple[int, str]
    ] = []  # (end byte, kind) of the definitions enclosing this one
    for node, name_node, kind in _definition_nodes(root, language):
        name = sys.intern(
            source[name_node.start_byte : name_node.end_byte].decode("utf-8", "replace")
        )
        name_nodes.append(name_node)
        while open_scopes and open_scopes[-1][0] <= node.start_byte:
            open_scopes.pop()
        if open_scopes and open_scopes[-1][1] in FUNCTION_KINDS:
            continue  # local to a function body: not part of the file's outline
        if kind == "constant" and (open_scopes or not _CONSTANT_NAME.match(name)):
            continue
        definitions.append(
            Definition(
                name=name,
                kind=kind,
                line=node.start_point[0] + 1,
                end_line=node.end_point[0] + 1,
                depth=len(open_scopes),
                signature=_signature(node, source, language),
            )
        )
        open_scopes.append((node.end_byte, kind))
    if language == "python":
        definitions = _with_python_constants(root, source, definitions, name_nodes)
    return definitions, name_nodes


def _with_python_constants(
    root: Node, source: bytes, definitions: list[Definition], name_nodes: list[Node]
) -> list[Definition]:
    """Add module-level `UPPER_CASE = ...` assignments (a walk of the top level, cheaper than a query)."""
    constants: list[Definition] = []
    for statement in root.named_children:
        if statement.type != "expression_statement" or statement.named_child_count != 1:
            continue
        assignment = statement.named_children[0]
        if assignment.type != "assignment":
            continue
        target = assignment.child_by_field_name("left")
        if target is None or target.type != "identifier":
            continue
        name = source[target.start_byte : target.end_byte].decode("utf-8", "replace")
        if not _CONSTANT_NAME.match(name):
            continue
        name_nodes.append(target)
        line = statement.start_point[0] + 1
        constants.append(
            Definition(
                name,
                "constant",
                line,
                statement.end_point[0] + 1,
                0,
                _signature(statement, source, "python"),
            )
        )
    if not constants:
        return definitions
    return sorted([*definitions, *constants], key=lambda definition: definition.line)


def _code_only(root: Node, source: bytes, language: str) -> bytearray:
    """The source with string contents and comments blanked, so the words left are code."""
    _, _, prose_query = _compiled(language)
    code = bytearray(source)
    for node in QueryCursor(prose_query).captures(root).get("text", ()):
        start, end = node.start_byte, node.end_byte
        code[start:end] = source[start:end].translate(_BLANK_ALL_BUT_NEWLINES)
    return code


def extract_tags(source: bytes, language: str) -> FileTags:
    """Definitions and reference counts of one file's source in a supported language.

    The counts are of identifier-shaped words (one regex pass), which include words in strings
    and comments: a tree-sitter query per identifier costs half as much again as the parse,
    for rankings that barely differ. `reference_lines` is the exact version, for a few files.
    """
    root = _compiled(language)[0].parse(source).root_node
    definitions, name_nodes = _definitions(root, source, language)
    counts = Counter(_IDENTIFIER.findall(source))
    for node in name_nodes:  # a definition's own name is not a use of it
        name = node.text
        if counts.get(name, 0) > 0:
            counts[name] -= 1
    for keyword in _KEYWORDS:
        counts.pop(keyword, None)
    # Interned: the same names recur in every file, and marshal then stores each name once.
    references = {
        sys.intern(name.decode("utf-8", "replace")): count
        for name, count in counts.items()
        if count
    }
    return FileTags(tuple(definitions), references)


def reference_lines(source: bytes, language: str, name: str) -> list[int]:
    """The 1-based lines where `name` is used (not defined) in one file's source, in order."""
    root = _compiled(language)[0].parse(source).root_node
    name_starts = {node.start_byte for node in _definitions(root, source, language)[1]}
    code = _code_only(root, source, language)
    lines: list[int] = []
    line, counted_to = 1, 0
    for match in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\b", code):
        if match.start() in name_starts:
            continue
        line += code.count(b"\n", counted_to, match.start())
        counted_to = match.start()
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines
