"""Whether a prompt asks for a change to the code, read from its wording: the loop nudges a model that ends such
a task having changed nothing (small models announce edits they never made)."""

from __future__ import annotations

import re
from functools import lru_cache

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
