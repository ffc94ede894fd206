"""A project too big to give a small model whole, and a task whose words name a function of the file that
matters most: that function alone, with the outline of its file, is what the model is shown and asked to give
back changed. Given journal.py whole (5 kB), the 1.5B sent it back unchanged every time; given `quarter` alone,
it rewrote the function correctly (bench/small_model, medium set)."""

from __future__ import annotations

import ast
import re

from pydantic import BaseModel

from keel.agent.core.context.files_that_matter import task_identifiers, word_stem
from keel.agent.core.context.small_project import ProjectFile
from keel.agent.core.generic_failures import ELIDED
from keel.agent.core.strategies.python_edits import parsed, span

NAME_WEIGHT = 3  # a task word in the function's name counts as much as three in its body
BODY_SCALE = 1500  # characters: a longer body's share of the task's words counts for less
MIN_STEM = 4  # shorter stems ("add", "set") meet too many names
SIGNATURE_LINES = 4  # of another definition's first lines in the outline, at most
SUMMARY_CHARACTERS = 200  # of another definition's docstring in the outline, at most
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# words of a task that say how, not what: they name no code
_PLAIN_WORDS = (
    "should instead only such like make every each other than more when with without from into that this "
    "these those them their there have does what which while come comes give gives whole right left"
)
_PLAIN = {word_stem(word) for word in _PLAIN_WORDS.split()}


SHOWN = "the function `{name}` as it is now:"  # prompts/focused_definition.j2 says it so
_SHOWN = re.compile(re.escape(SHOWN).replace(re.escape("{name}"), r"(\w+)"))


class FocusedDefinition(BaseModel):
    """One top-level function of a project file: where it is, its source, and the outline of the rest."""

    path: str
    name: str
    source: str
    outline: str  # the file's other statements as stubs: `def minor_digits(code: str) -> int: ...`
    lines: tuple[int, int]  # where the function is in its file, 1-based, first and last

    @property
    def shown(self) -> str:
        """The line that introduces it in keel's message (shown_function finds it again)."""
        return SHOWN.format(name=self.name)


def focused_definition(file: ProjectFile, task: str) -> FocusedDefinition | None:
    """The top-level function of a Python file the task's words point at most (one of them in its name), None
    when the file is not Python, does not parse, or no function's name meets the task's words."""
    tree = _parsed(file)
    if tree is None:
        return None
    stems = {word_stem(word) for word in task_identifiers(task)} - _PLAIN
    stems = {stem for stem in stems if len(stem) >= MIN_STEM}
    lines = file.text.splitlines()
    best: tuple[float, ast.stmt] | None = None
    for node in _functions(tree):
        if named := _name_hits(node.name, stems):
            source = "\n".join(lines[slice(*span(node))])
            score = NAME_WEIGHT * named + _body_hits(source, stems) / (1 + len(source) / BODY_SCALE)
            if best is None or score > best[0]:
                best = (score, node)
    return _focus(file, tree, best[1]) if best else None


def named_definition(file: ProjectFile, name: str) -> FocusedDefinition | None:
    """The top-level function of that name, as the file has it now (None when it has none): the one the model
    was shown stays the one it is shown again, whatever its answer added beside it."""
    tree = _parsed(file)
    found = [node for node in _functions(tree) if node.name == name] if tree else []
    return _focus(file, tree, found[-1]) if tree and found else None


def shown_function(texts: list[str]) -> str | None:
    """The function keel last showed the model alone, from keel's own messages, latest last."""
    for text in reversed(texts):
        if found := _SHOWN.search(text):
            return found[1]
    return None


def _parsed(file: ProjectFile) -> ast.Module | None:
    return parsed(file.text) if file.fence_language == "python" else None


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def _focus(file: ProjectFile, tree: ast.Module, node: ast.stmt) -> FocusedDefinition:
    lines = file.text.splitlines()
    first, last = span(node)
    return FocusedDefinition(
        path=file.path,
        name=getattr(node, "name", ""),
        source="\n".join(lines[first:last]),
        outline="\n".join(_outline(tree, node, lines)),
        lines=(first + 1, last),
    )


def _name_parts(name: str) -> list[str]:
    """A name's words, stemmed: `parse_posting` gives pars and post, `columnAlignment` column and alignment."""
    return [word_stem(part) for part in _CAMEL.sub("_", name).split("_") if part]


def _meet(stem: str, part: str) -> bool:
    """A task's word and a name's word meet when one begins the other (slug and slugify, align and alignment)."""
    return len(part) >= MIN_STEM and (part.startswith(stem) or stem.startswith(part))


def _name_hits(name: str, stems: set[str]) -> int:
    """How many of the task's words a function's name holds."""
    parts = _name_parts(name)
    return sum(any(_meet(stem, part) for part in parts) for stem in stems)


def _body_hits(source: str, stems: set[str]) -> int:
    """How many of the task's words a function's source holds (its words, stemmed, as the task's are)."""
    words = {word_stem(word) for word in task_identifiers(source)}
    words |= {part for word in list(words) for part in _name_parts(word)}
    return len(stems & words)


def _outline(tree: ast.Module, focused: ast.stmt, lines: list[str]) -> list[str]:
    """The file's top-level statements other than the focused one as stubs, as a .pyi shows them: a definition
    by its signature and the summary of its docstring (`...` when it has none), any other statement by its
    first line (`...` when it goes on). Given the rest of wrap.py line by line, the 1.5B sent those lines back
    as its answer, wrap renamed fill; shown slugify with only `def transliterate(text: str) -> str: ...` beside
    it, it never called transliterate (bench/small_model --set medium: slug_accents)."""
    outline: list[str] = []
    for node in tree.body:
        if node is focused or isinstance(node, ast.Expr):  # a docstring: nothing to edit
            continue
        first, last = span(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body[0]
            last = max(first + 1, min(body.lineno - 1, first + SIGNATURE_LINES))
            outline.extend(lines[first : last - 1])
            summary = _summary(node) if last == body.lineno - 1 else None
            if summary is None:
                outline.append(lines[last - 1] + ELIDED)
            else:
                outline += [lines[last - 1], f'{" " * body.col_offset}"""{summary}"""']
        else:
            outline.append(lines[first] + (ELIDED if last > first + 1 else ""))
    return outline


def _summary(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
    """The first paragraph of a definition's docstring on one line, cut at SUMMARY_CHARACTERS (None: none)."""
    docstring = ast.get_docstring(node)
    paragraph = " ".join(docstring.split("\n\n", 1)[0].split()) if docstring else ""
    if len(paragraph) > SUMMARY_CHARACTERS:
        paragraph = paragraph[:SUMMARY_CHARACTERS].rsplit(" ", 1)[0] + " …"
    return paragraph.replace('"""', "'''").rstrip('"\\') or None
