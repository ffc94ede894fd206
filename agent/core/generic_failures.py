"""Replies any model may send that are neither a call nor an answer: a copy of keel's own text (its status
block, a tool result, its messages to the model, a tool description's example) and calls to tools that do not
exist. Read the same way for every model, so that none of them ends a task with junk as its answer."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence

from keel.agent.core.context.budget import STATUS_MARK, is_status_line
from keel.agent.core.messages import Message
from keel.agent.core.state import SessionState
from keel.agent.core.text_protocol import ParsedCall, as_call, object_end
from keel.tools.base import EXAMPLE_MARK

# keel's text wrapped in tags the model's chat template uses, or that the model made up for it
_WRAPPED = re.compile(
    r"^[ \t]*<(status|tool_response|tool_result|tool_output|observation)\b[^>]*>.*?(?:</\1\s*>|\Z)",
    re.DOTALL | re.IGNORECASE | re.MULTILINE,
)
_STRAY_TAG = re.compile(r"</?[\w-]+\s*/?>")
_STATUS_LINE = re.compile(rf"^[ \t]*{re.escape(STATUS_MARK)}.*$", re.MULTILINE)
# an object opening with a name and then its arguments, or the other way round
_CALL_OPENING = re.compile(
    r'\{\s*"(?:(?:name|tool)"\s*:\s*"[^"\n]+"\s*,\s*")?(?:arguments|parameters)"\s*:'
)
KEEL_TEXTS_READ = 3  # how many of keel's latest messages and tool results a reply is compared with
# keel's lines this long in all, word for word: a copy (a short line of keel's may be the model's own words)
COPIED_WORDS = 12
_FENCE = re.compile(r"^(?:`{3,}|~{3,})[\w+.-]*$")  # a code fence's line, bare or with its language
# of the lines of a reply opening as keel's message does, at most this share its own: still an echo
ECHO_OWN_SHARE = 0.1
ELIDED = " ..."  # how keel's outline of a file ends a line it cuts short (`TABLE = { ...`, `def f(x): ...`)


def call_shaped(text: str) -> list[ParsedCall]:
    """Every JSON object in the text, fenced or not, that has a "name" and "arguments": a call, whatever
    the name (an unknown one gets the list of tools from the registry, never ends the task)."""
    calls: list[ParsedCall] = []
    after = 0
    for found in _CALL_OPENING.finditer(text):
        if found.start() < after:
            continue  # inside a call already read
        end = object_end(text, found.start())
        if end is None:
            continue
        try:
            value = json.loads(text[found.start() : end + 1])
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict) or not {"arguments", "parameters"} & set(value):
            continue
        if (call := as_call(value)) is not None:
            calls.append(call)
            after = end
    return calls


def echo_of_keel(text: str, state: SessionState) -> str | None:
    """What is wrong with a reply that only repeats keel's own text, None for any other reply: it is not an
    answer (a model that copies its input instead of acting would otherwise end the task with the copy)."""
    if f"/{EXAMPLE_MARK}" in text:  # a placeholder path of an example, not the word in a sentence
        return (
            "your reply repeats the example from a tool's description (its paths, like "
            f"{EXAMPLE_MARK}, are placeholders), which is not an answer and changes nothing"
        )
    rest = _STATUS_LINE.sub("", _WRAPPED.sub("", text))
    tagged = rest != text
    lines = [line.strip() for line in _STRAY_TAG.sub("", rest).splitlines() if line.strip()]
    if tagged and not lines:
        return (
            "your reply only repeated keel's status block or a tool result, which is not an answer"
        )
    keel_texts = _latest_keel_texts(state.history, state.task_prompt)
    if lines and any(_same(text, said) for role, said in keel_texts if _keel_words(role, said)):
        return "your reply only repeated keel's last message or error, which is not an answer"
    own_prose = {_first_line(said) for role, said in keel_texts if role == "user"} - {""}
    known = {line.strip() for _, said in keel_texts for line in said.splitlines()}
    opens_like_keel = bool(own_prose & set(lines)) and _mostly_known(lines, known)
    unfenced = [line for line in lines if not _FENCE.match(line)]
    copied = _copied_lines(unfenced, keel_texts) or _elided_copy(unfenced, keel_texts)
    if lines and (opens_like_keel or copied):
        return "your reply only repeated keel's message to you, which is not an answer"
    last = next((said for role, said in keel_texts if role == "user"), "")
    if len(lines) == 1 and _closing_words(lines[0], last):
        return "your reply only repeated the last words of keel's message to you, which is not an answer"
    return None


def _mostly_known(lines: list[str], known: set[str]) -> bool:
    """All but ECHO_OWN_SHARE of the lines are keel's: the 1.5B sent back keel's 43-line message of failed
    checks with a rule of `=` cut short and a sentence of the last line left out, and that went on as its
    answer (bench/small_model --set medium: slug_accents)."""
    return sum(line not in known for line in lines) <= len(lines) * ECHO_OWN_SHARE


def _copied_lines(lines: list[str], keel_texts: list[tuple[str, str]]) -> bool:
    """The reply's lines, code fences aside, are all lines of keel's own words (outside the files its messages
    show) and long enough not to be said anew: the 1.5B answered with the first line of a correction's call
    example and an empty ```json fence, and that ended its task as `completed`."""
    if not lines or sum(len(line.split()) for line in lines) < COPIED_WORDS:
        return False
    own = {line for role, said in keel_texts if role == "user" for line in _outside_fences(said)}
    return all(line in own for line in lines)


def _elided_copy(lines: list[str], keel_texts: list[tuple[str, str]]) -> bool:
    """The reply's lines, code fences aside, are lines of keel's messages, one of them a line keel cut short: its
    outline of a file sent back, which is no code to write. The 1.5B answered column_alignment with tables.py's
    outline twice, and the task ended `completed` with nothing changed (bench/small_model --set medium)."""
    shown = {
        line.strip() for role, said in keel_texts if role == "user" for line in said.splitlines()
    }
    return any(line.endswith(ELIDED) for line in lines) and all(line in shown for line in lines)


def _outside_fences(said: str) -> list[str]:
    """The stripped lines of a text outside its fenced blocks (inside them: a file's text, the project's)."""
    outside: list[str] = []
    fenced = False
    for line in said.splitlines():
        stripped = line.strip()
        if _FENCE.match(stripped):
            fenced = not fenced
        elif stripped and not fenced:
            outside.append(stripped)
    return outside


def _closing_words(reply: str, said: str) -> bool:
    """The reply is the closing words of the last line of keel's message, not the whole line (the 0.5B answered
    "…, say why." with "why."; a whole line of keel's, repeated, may be the model's own advice)."""
    lines = [line for line in said.splitlines() if line.strip()]
    words, ending = " ".join(reply.split()), " ".join(lines[-1].split()) if lines else ""
    return ending.endswith(" " + words)


def unknown_call_streak(state: SessionState, tool_names: Collection[str]) -> int:
    """How many of the latest replies in a row wrote, in their text, calls only to tools that do not exist
    (keel gave those calls their ids; a native call to an unknown tool is the model's explicit choice)."""
    streak = 0
    for message in reversed(state.history):
        if message.role != "assistant":
            continue
        calls = message.tool_calls
        if not calls or any(
            c.name in tool_names or not c.id.startswith(state.call_prefix) for c in calls
        ):
            break
        streak += 1
    return streak


def _latest_keel_texts(history: Sequence[Message], task_prompt: str) -> list[tuple[str, str]]:
    """keel's latest messages to the model in this task and the latest tool results, with their role."""
    said: list[tuple[str, str]] = []
    for message in reversed(history):
        if message.role == "user" and message.content == task_prompt:
            break
        if message.role == "user" and is_status_line(message.content):
            continue  # a status line kept in the history (append-only prompts) says nothing new
        if message.role in ("user", "tool") and message.content.strip():
            said.append((message.role, message.content))
        if len(said) >= KEEL_TEXTS_READ:
            break
    return said


def _keel_words(role: str, said: str) -> bool:
    """keel's own words: its messages and its errors (a file's text or a command's output is the
    project's, and an answer may rightly quote it whole)."""
    return role == "user" or said.startswith("Error")


def _same(reply: str, said: str) -> bool:
    """The reply is keel's text again, whitespace aside (a short text is too likely to be said anew)."""
    return len(said.strip()) >= 20 and " ".join(reply.split()) == " ".join(said.split())


def _first_line(said: str) -> str:
    """The first line of keel's message: its own words, never the model's."""
    return next((line.strip() for line in said.splitlines() if line.strip()), "")
