"""How a small model's Python edits are meant, not only how they are written: a fenced block of definitions with no
file named is those definitions put into the file that has them (or that the task names), a "whole file" that
keeps none of the file's definitions but brings new ones is those new ones added, and an edit_file whose
old_string is a definition's first line and whose new_string is a whole new definition replaces that definition,
not its first line only (which would leave the old body behind the new one). Pure functions over source text."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable

from keel.agent.core.verification.imports import module_name

_FENCE = re.compile(
    r"^[ \t]*```(?:python|py|python3)?[ \t]*\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL
)
_HEADER = re.compile(r"^\s*(?:async\s+def|def|class)\s+\w+")
_DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
WHOLE_SHARE = (
    0.6  # a block of every definition and at least this share of the file is the whole file
)


def parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def code_lines(source: str) -> list[str] | None:
    """A Python file's lines without its docstrings, comments, blank lines and line-end spaces: what runs, as
    written (None when it does not parse)."""
    module = parsed(source)
    if module is None:
        return None
    lines = io.StringIO(source).readlines()  # as tokenize numbers them (a form feed ends no line)
    documentation: set[int] = set()
    for node in ast.walk(module):
        if not isinstance(node, (ast.Module, *_DEFINITION)) or not node.body:
            continue
        first = node.body[0]
        own_lines = isinstance(node, ast.Module) or first.lineno > node.lineno
        if ast.get_docstring(node, clean=False) is not None and own_lines:
            documentation.update(range(first.lineno - 1, first.end_lineno or first.lineno))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for token in tokens:
        if token.type == tokenize.COMMENT:
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column]
    return [
        line.rstrip() for at, line in enumerate(lines) if at not in documentation and line.strip()
    ]


def unused_imports_dropped(source: str, content: str) -> str:
    """`content` without the top-level imports it adds to `source` that nothing in it uses (a star import
    among them): beside code the same as before, such an import changes nothing. The 0.5B's answers to
    people.py and windows.py were the files with `import re`, `from typing import *` added, written as its fix
    (bench/small_model, embedded 0.5B: none_input, off_by_one)."""
    module = parsed(content)
    if module is None:
        return content
    had = {line.strip() for line in source.splitlines()}
    used = {node.id for node in ast.walk(module) if isinstance(node, ast.Name)}
    lines = content.splitlines(keepends=True)
    dropped: set[int] = set()
    for node in module.body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        first, last = span(node)
        bound = {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        if any(line.strip() not in had for line in lines[first:last]) and not bound & used:
            dropped.update(range(first, last))
    return "".join(line for at, line in enumerate(lines) if at not in dropped)


def _definitions(module: ast.Module) -> dict[str, ast.stmt]:
    return {node.name: node for node in module.body if isinstance(node, _DEFINITION)}


def span(node: ast.stmt) -> tuple[int, int]:
    """The node's lines, 0-based and end-exclusive, decorators included."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return first - 1, node.end_lineno or node.lineno


def code_blocks(text: str) -> list[str]:
    """The Python (or unlabelled) fenced blocks of a reply that parse and define something at top level."""
    blocks = []
    for body in _FENCE.findall(text):
        module = parsed(body)
        if module is not None and _definitions(module):
            blocks.append(body)
    return blocks


def defined_names(source: str) -> set[str]:
    """The names a file defines at top level (none when it does not parse)."""
    module = parsed(source)
    return set(_definitions(module)) if module is not None else set()


def is_fragment(source: str, content: str, task: str) -> bool:
    """New content for a file that defines things, none of them the file's, and renames none of them (no
    definition of the file is named in the task or has the body of a new one): the 0.5B, asked for the whole
    file with a function added, wrote the file back unchanged and then a "whole file" of the new function."""
    module, written = parsed(source), parsed(content)
    if module is None or written is None:
        return False
    old, new = _definitions(module), _definitions(written)
    if not old or not new or set(old) & set(new):
        return False
    if any(re.search(rf"\b{re.escape(name)}\b", task) for name in old):
        return False
    bodies = {_body(node) for node in new.values()}
    return not any(_body(node) in bodies for node in old.values())


def gives_back(source: str, block: str) -> bool:
    """Whether every top-level definition of the block is one of the file's, exactly as it is there (blank lines
    and line-end spaces aside): a function sent back as it was shown, which changes nothing."""
    module, snippet = parsed(source), parsed(block)
    if module is None or snippet is None:
        return False
    old, new = _definitions(module), _definitions(snippet)
    if not new or not set(new) <= set(old):
        return False
    source_lines, block_lines = source.splitlines(), block.splitlines()

    def written(lines: list[str], node: ast.stmt) -> list[str]:
        start, end = span(node)
        return [line.rstrip() for line in lines[start:end] if line.strip()]

    return all(
        is_stub(new[name]) or written(block_lines, new[name]) == written(source_lines, old[name])
        for name in new
    )


def is_stub(node: ast.stmt) -> bool:
    """A definition whose body is its docstring, `...`, or both: a definition of the outline keel showed beside a
    function, echoed (the 1.5B sent wrap.py's stubs back, and they replaced fill, indent, dedent and shorten)."""
    return all(
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and (statement.value.value is Ellipsis or isinstance(statement.value.value, str))
        for statement in getattr(node, "body", [])
    )


def _body(node: ast.stmt) -> str:
    return ast.dump(ast.Module(body=getattr(node, "body", []), type_ignores=[]))


def merged(source: str, block: str) -> str | None:
    """The file with the block's definitions in it: each replaces the top-level definition of its name, or is
    added at the end, and imports it lacks go after the file's own; the block itself when it redefines every
    definition of the file and is about as long. None when it changes nothing or the result does not parse."""
    module, snippet = parsed(source), parsed(block)
    if module is None or snippet is None:
        return None
    old, new = _definitions(module), _definitions(snippet)
    new = {name: node for name, node in new.items() if not (name in old and is_stub(node))}
    if set(old) <= set(new) and len(block) >= WHOLE_SHARE * len(source):
        result = block if block.endswith("\n") else block + "\n"
        return result if result != source and parsed(result) is not None else None
    lines, block_lines = source.splitlines(), block.splitlines()
    added: list[str] = []
    replacements: list[tuple[int, int, list[str]]] = []
    for name, node in new.items():
        start, end = span(node)
        text = block_lines[start:end]
        if name in old:
            replacements.append((*span(old[name]), text))
        else:
            added += ["", "", *text]
    for start, end, text in sorted(replacements, reverse=True):
        lines[start:end] = text
    lines += added
    lines = _with_imports(lines, module, _imports(snippet, block_lines), source)
    result = "\n".join(lines).rstrip("\n") + "\n"
    return result if result != source and parsed(result) is not None else None


def _imports(snippet: ast.Module, block_lines: list[str]) -> list[str]:
    return [
        "\n".join(block_lines[node.lineno - 1 : node.end_lineno])
        for node in snippet.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]


def _with_imports(
    lines: list[str], module: ast.Module, imports: list[str], source: str
) -> list[str]:
    """The lines with the imports the file does not have yet, after its last top-level import (or its
    docstring)."""
    missing = [line for line in imports if line not in source]
    if not missing:
        return lines
    anchors: list[ast.stmt] = [n for n in module.body if isinstance(n, ast.Import | ast.ImportFrom)]
    body = module.body
    if (
        not anchors
        and body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        anchors = [body[0]]  # the module's docstring
    at = (anchors[-1].end_lineno or 0) if anchors else 0
    return [*lines[:at], *missing, *lines[at:]]


def target_file(block: str, sources: dict[str, str], named: Iterable[str]) -> str | None:
    """The one file the block's definitions belong in: the one file that defines any of them, else the one
    file the project imports them from (a definition a rewrite lost is still imported where it lived), else
    the one file among `named` (the paths the task or the reply mention); None when that is not one file."""
    wanted = defined_names(block)
    having = [path for path, text in sources.items() if wanted & defined_names(text)]
    if len(having) == 1:
        return having[0]
    if having:
        return None
    importing = imported_from(sources, wanted)
    if importing:
        return importing[0] if len(importing) == 1 else None
    mentioned = [path for path in named if path in sources]
    return mentioned[0] if len(mentioned) == 1 else None


def imported_from(sources: dict[str, str], names: set[str]) -> list[str]:
    """The project files the others import any of `names` from (`from pkg.mod import name`, or relative)."""
    files = {module_name(path): path for path in sources}
    found: set[str] = set()
    for path, text in sources.items():
        module = parsed(text)
        for node in ast.walk(module) if module is not None else ():
            if not isinstance(node, ast.ImportFrom) or not {a.name for a in node.names} & names:
                continue
            source = files.get(_absolute_module(path, node.module, node.level))
            if source is not None and source != path:
                found.add(source)
    return sorted(found)


def _absolute_module(importer: str, module: str | None, level: int) -> str | None:
    """The module a `from` import names, written out (`from .slug import x` in `pkg/__init__.py` is pkg.slug)."""
    if not level:
        return module
    package = importer.split("/")[:-1]
    if level > 1:
        package = package[: -(level - 1)] if len(package) >= level - 1 else []
    return ".".join([*package, *([module] if module else [])]) or None


def widened_old_string(source: str, old: str, new: str) -> str | None:
    """For an edit_file whose old_string is only a definition's first line and whose new_string is a whole new
    definition of the same name ending in a return or raise: the old definition whole, as the file has it
    (from where old_string starts), so the new one replaces it. None when that is not such an edit."""
    header = old.strip()
    if "\n" in header or not _HEADER.match(header):
        return None
    first_new = next((line.strip() for line in new.splitlines() if line.strip()), "")
    if first_new != header:
        return None
    replacement = parsed(_dedented(new))
    if replacement is None or len(replacement.body) != 1:
        return None
    definition = replacement.body[0]
    if not isinstance(definition, _DEFINITION) or not definition.body:
        return None
    if isinstance(definition, ast.ClassDef) or not isinstance(
        definition.body[-1], ast.Return | ast.Raise
    ):
        return None
    return _whole_definition(source, header)


def _whole_definition(source: str, header: str) -> str | None:
    module = parsed(source)
    if module is None:
        return None
    lines = source.splitlines()
    found = [
        node
        for node in ast.walk(module)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and lines[node.lineno - 1].strip() == header
    ]
    if len(found) != 1 or (found[0].end_lineno or 0) <= found[0].lineno:
        return None
    node = found[0]
    first = lines[node.lineno - 1]
    whole = "\n".join([first[first.index(header) :], *lines[node.lineno : node.end_lineno]])
    return whole if source.count(whole) == 1 else None


def _dedented(text: str) -> str:
    lines = [line for line in text.splitlines()]
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] for line in lines)
