"""keel's guesses from wording, in one replaceable module: whether a task asks for a change (a model that ends
one having changed nothing is nudged: small models announce edits they never made), which fenced blocks of a
reply give a project file whole, and a step a reply announces without taking it. English only, by rules of
thumb; the loop never imports this, the strategies and the reply reader do."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache

from keel.agent.core.strategies.edit_blocks import has_edit_blocks
from keel.agent.core.strategies.file_lines import FILE_HEADING, FILE_LINE
from keel.agent.core.text_protocol import ParsedCall

CHANGE_VERBS = frozenset(
    [
        "add",
        "append",
        "bump",
        "change",
        "clean",
        "convert",
        "correct",
        "create",
        "delete",
        "drop",
        "edit",
        "extend",
        "fix",
        "handle",
        "implement",
        "improve",
        "insert",
        "introduce",
        "make",
        "migrate",
        "modify",
        "move",
        "optimise",
        "optimize",
        "patch",
        "port",
        "refactor",
        "remove",
        "rename",
        "repair",
        "replace",
        "resolve",
        "restore",
        "rewrite",
        "set",
        "simplify",
        "support",
        "swap",
        "update",
        "upgrade",
        "write",
    ]
)
# "can you fix …", "please add …": what comes before the verb
_POLITE = re.compile(
    r"^(?:(?:please|pls|kindly|now|ok(?:ay)?|hey|so|then|also|and|just)\b[\s,]*"
    r"|(?:can|could|would|will) you\s+(?:please\s+)?"
    r"|(?:i (?:need|want|would like) you to|let'?s|go ahead and|try to)\s+)+",
    re.IGNORECASE,
)
_QUESTION = re.compile(
    r"^(?:what|why|how|where|which|who|when|is|are|was|does|do|did|can|could|should|explain|describe|"
    r"show|list|find|tell|summari[sz]e|review|read|look|check|use|give|print|count|compare|analy[sz]e|"
    r"search|run|walk|say|reply|respond|answer|greet|repeat|translate)\b",
    re.IGNORECASE,
)
_BROKEN = re.compile(
    r"\b(?:broken|buggy|bug|fails?|failing|crash(?:es|ing)?|wrong|doesn'?t work|does not work|"
    r"off[- ]by[- ]one|regression|errors? out|raises?)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z']+")
_DOCUMENTATION = re.compile(
    r"\b(?:docs?|docstrings?|comments?|commented|documentation)\b", re.IGNORECASE
)
_THEN = re.compile(r"(?:\band|\bthen|[,;.:])\s+(?:please\s+)?([A-Za-z]+)", re.IGNORECASE)


@lru_cache(maxsize=32)  # the loop asks about the same task prompt at every step
def asks_for_change(prompt: str) -> bool:
    """True for "fix the parser", "can you add a --verbose flag", "add() is broken", "moving_sums drops the
    last window"; False for questions ("why does add() fail?", "explain main.py") and for thanks or chat."""
    text = _POLITE.sub("", prompt.strip())
    first = _WORD.match(text)
    if first and first.group(0).lower() in CHANGE_VERBS:
        return True
    question = prompt.strip().endswith("?")
    if not question and any(verb.lower() in CHANGE_VERBS for verb in _THEN.findall(prompt)):
        return True  # "look at main.py and fix the off-by-one"
    if question or _QUESTION.match(prompt.strip()):
        return False
    # what is left reads as a report ("moving_sums drops the last window") unless it is chat ("thanks!")
    return bool(_BROKEN.search(prompt)) or len(_WORD.findall(prompt)) > 3


def names_documentation(prompt: str) -> bool:
    """Whether a task speaks of docstrings or comments ("remove the outdated comments", "a comment after its
    amount"): then a change to them alone may be the answer."""
    return bool(_DOCUMENTATION.search(prompt))


_WHOLE_FILE = re.compile(
    rf"^[ \t]*{FILE_HEADING}[ \t]*\n(?:[ \t]*\n)*```[\w+-]*[ \t]*\n(.*?)^[ \t]*```",
    re.MULTILINE | re.DOTALL | re.IGNORECASE,
)
# "Here is the corrected code for `calc.py`:" and a fence: the whole file only if it is about as long
_NAMED_BEFORE_FENCE = re.compile(
    r"^[^\n]*?`?([\w./-]+\.\w+)`?[ \t]*:[ \t]*\n(?:[ \t]*\n)*```[\w+-]*[ \t]*\n(.*?)^[ \t]*```",
    re.MULTILINE | re.DOTALL,
)
WHOLE_SHARE = 0.6  # a block shorter than this share of the file is a snippet, not the file
# "Let me read calc.py." ending a reply that calls nothing
_ANNOUNCED = re.compile(
    r"\b(?:let me|let's|i will|i'll|i am going to|i'm going to|now i will|next,? i will)\s+(?:now\s+)?"
    r"(?:read|open|look|check|run|search|list|edit|call|use|inspect|examine|find|view|fix|update|modify|"
    r"write|create|add|implement|apply|change|start|begin|try)\b[^.!?]*",
    re.IGNORECASE,
)


def whole_files(text: str, size_of: Callable[[str], int | None] | None) -> list[ParsedCall]:
    """write_file calls for the project files a reply gives whole (`size_of`: a project file's length, None
    for any other path): a line naming the file (`FILE: calc.py`, `calc.py:`, `**calc.py**`) and a fenced
    block with its new content; or a sentence ending in the file and a colon, when the block is about the
    file's length. A block of search/replace blocks is not a whole file (strategies/edit_blocks)."""
    if size_of is None or "```" not in text:
        return []
    given = {
        path: body
        for path, body in _WHOLE_FILE.findall(text)
        if size_of(path) is not None and not has_edit_blocks(body)
    }
    for path, body in _NAMED_BEFORE_FENCE.findall(text):
        size = size_of(path) if path not in given and not has_edit_blocks(body) else None
        if size is not None and len(body) >= WHOLE_SHARE * size:
            given[path] = body
    return [
        ParsedCall(name="write_file", arguments=json.dumps({"path": path, "content": body}))
        for path, body in given.items()
    ]


_FENCED = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)


def prose_of(text: str) -> str:
    """A reply's words without its fenced blocks and the lines that name their files: what it says it did."""
    without = FILE_LINE.sub("", _FENCED.sub("", text))
    return re.sub(r"\n{3,}", "\n\n", without).strip()


def announced_step(text: str) -> str | None:
    """The step a reply's last sentence says it takes ("let me read calc.py"), None when it announces none."""
    stripped = text.strip().rstrip(":")
    sentences = re.split(r"(?<=[.!?])\s+", stripped)
    found = _ANNOUNCED.search(sentences[-1] if sentences else "")
    return found.group(0) if found else None
