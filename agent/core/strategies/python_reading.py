"""The small-model strategy's reading of Python edits against the workspace (python_edits holds the pure rules):
which project files a reply's code blocks go into, the write_file calls that are fragments to merge, and the
edit_file calls whose old_string is widened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from keel.agent.core.protocol import ToolCall
from keel.agent.core.repo_files import read_inside
from keel.agent.core.strategies.base import Workspace
from keel.agent.core.strategies.heuristics import names_documentation
from keel.agent.core.strategies.python_edits import (
    code_blocks,
    code_lines,
    gives_back,
    is_fragment,
    merged,
    target_file,
    unused_imports_dropped,
    widened_old_string,
)
from keel.tools.base import ToolError

MAX_SOURCES = 200  # project .py files read to find where a block belongs
MAX_SOURCE_BYTES = 200_000


def _sources(at: Workspace) -> dict[str, str]:
    """The project's Python files as they are now (small ones, a bounded number)."""
    sources: dict[str, str] = {}
    root = at.tool_context.root
    for path in [p for p in at.files if p.endswith(".py")][:MAX_SOURCES]:
        try:
            if (root / path).stat().st_size > MAX_SOURCE_BYTES:
                continue
            data = read_inside(root, path)
            if data is not None:
                sources[path] = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return sources


def _mentioned(paths: list[str], *texts: str) -> list[str]:
    """The paths a text names, by path or by file name."""
    return [p for p in paths if any(p in t or Path(p).name in t for t in texts)]


class SnippetEdits(NamedTuple):
    """What a reply's code blocks do to the files they belong in."""

    writes: list[dict[str, Any]]  # write_file calls (name and arguments), a file each
    copied: list[
        str
    ]  # with no write: the files every block gave definitions of back exactly as they are


def snippet_edits(text: str, at: Workspace) -> SnippetEdits:
    """The code blocks of a reply that calls nothing, each block's definitions merged into the one file they
    belong in; a function sent back as it was shown, or with only its documentation changed (`same_code`), is
    a copy, not an edit. The 1.5B's three answers to slugify, told accents split its words, added "Also handles
    accented letters." to its docstring, and were written as the fix (bench/small_model --set medium)."""
    blocks = code_blocks(text)
    if not blocks:
        return SnippetEdits([], [])
    sources = _sources(at)
    named = _mentioned(list(sources), at.state.task_prompt, text)
    changed: dict[str, str] = {}
    copied: dict[str, None] = {}
    every_block_copied = True
    for block in blocks:
        path = target_file(block, sources, named)
        result = merged(changed.get(path, sources[path]), block) if path else None
        if path and result is not None:
            changed[path] = result
        elif path and gives_back(sources[path], block):
            copied[path] = None
        else:
            every_block_copied = False
    for path, content in list(changed.items()):
        if same_code(sources[path], content, at):  # only its docstrings or comments changed
            copied[path] = None
            del changed[path]
    writes = [
        {"name": "write_file", "arguments": json.dumps({"path": path, "content": content})}
        for path, content in changed.items()
    ]
    return SnippetEdits(writes, list(copied) if every_block_copied and not changed else [])


def _arguments(call: ToolCall, name: str) -> dict[str, Any] | None:
    """The call's arguments when it is a `name` call on a Python file with them as an object."""
    if call.name != name:
        return None
    try:
        args = json.loads(call.arguments)
    except json.JSONDecodeError:
        return None
    if not isinstance(args, dict) or not str(args.get("path", "")).endswith(".py"):
        return None
    return args


def _source(path: str, at: Workspace) -> str | None:
    try:
        return at.tool_context.resolve(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError, ToolError):
        return None


def fragment_merged(call: ToolCall, at: Workspace) -> ToolCall:
    """The call, with a write_file whose content keeps none of the file's definitions but brings new ones (and
    renames none) turned into the file with those added (python_edits.is_fragment)."""
    args = _arguments(call, "write_file")
    content = args.get("content") if args else None
    if args is None or not isinstance(content, str):
        return call
    source = _source(args["path"], at)
    if source is None or not is_fragment(source, content, at.state.task_prompt):
        return call
    whole = merged(source, content)
    if whole is None:
        return call
    return call.model_copy(update={"arguments": json.dumps({**args, "content": whole})})


def widened_edit(call: ToolCall, at: Workspace) -> ToolCall:
    """The call, with an edit_file's old_string widened to the whole definition its new_string replaces."""
    args = _arguments(call, "edit_file")
    if args is None:
        return call
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return call
    source = _source(args["path"], at)
    if source is None:
        return call
    wider = widened_old_string(source, old, new)
    if wider is None:
        return call
    return call.model_copy(update={"arguments": json.dumps({**args, "old_string": wider})})


def rewrites_unchanged(call: ToolCall, at: Workspace) -> bool:
    """A write_file of a workspace file with the content it has (for a Python file: its code, blank lines and
    spaces at line ends aside, imports it adds and does not use, and, unless the task speaks of them, its
    docstrings and comments too): a small model echoing the file it was given (or just wrote) instead of
    changing it. The 0.5B's copies of windows.py and tags.py each dropped one blank line, and were written as
    its fix (bench/small_model: off_by_one, wrong_default); the 1.5B's answer to a wrong quarter() was
    reports.py without its module docstring, which passed every check (ledger_quarter)."""
    if call.name != "write_file":
        return False
    try:
        args = json.loads(call.arguments)
    except json.JSONDecodeError:
        return False
    if not isinstance(args, dict) or not isinstance(args.get("content"), str):
        return False
    path, content = args.get("path"), str(args["content"])
    if not isinstance(path, str) or (source := _source(path, at)) is None:
        return False
    if source == content:
        return True
    if not path.endswith(".py"):
        return False
    return _nonblank_lines(source) == _nonblank_lines(content) or same_code(source, content, at)


def same_code(source: str, content: str, at: Workspace) -> bool:
    """Whether Python `content` runs as `source` does: the same code once docstrings, comments, blank lines and
    imports it adds and does not use are left aside (its documentation counts when the task speaks of it)."""
    code = code_lines(source)
    return (
        code is not None
        and code == code_lines(unused_imports_dropped(source, content))
        and not names_documentation(at.state.task_prompt)
    )


def _nonblank_lines(text: str) -> list[str]:
    """A file's lines that are not blank, without the spaces at their ends (it need not parse)."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]
