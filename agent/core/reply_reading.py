"""What a model's reply asks keel to do: the calls to run, the calls it wrote but keel will not run, or what was
wrong with a reply that tried to call a tool and could not be read (it gets a correction, never ends the task)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from keel.agent.core.generic_failures import call_shaped, echo_of_keel
from keel.agent.core.model.reply import ModelReply
from keel.agent.core.protocol import ToolCall
from keel.agent.core.state import SessionState
from keel.agent.core.strategies.edit_blocks import cut_off_file, edit_blocks
from keel.agent.core.strategies.heuristics import announced_step, whole_files
from keel.agent.core.text_protocol import (
    MalformedToolCall,
    ParsedCall,
    as_call,
    object_end,
    parse_tool_calls,
)

EMPTY_REPLY = "your reply was empty"
CUT_OFF = (
    "your reply reached the length limit before the call was complete; send a shorter call "
    "(change a smaller part of the file at a time)"
)
CUT_OFF_FILE = (
    "your reply reached the length limit while it gave {path} whole; change only the lines that need it: "
    "under `FILE: {path}`, blocks of <<<<<<< SEARCH, the lines as they are, =======, "
    "the lines that replace them, >>>>>>> REPLACE"
)
_FENCE = re.compile(r"```[ \t]*([\w.-]*)[ \t]*\n(.*?)(?:```|$)", re.DOTALL)


@dataclass(frozen=True)
class _ToolPatterns:
    """The shapes an attempted call to one of the tools takes, compiled once per set of tool names."""

    named: re.Pattern[str]  # "name": "edit_file"
    keyed: re.Pattern[str]  # {"edit_file": {...}}
    code: re.Pattern[str]  # edit_file(path="a.py", ...) at a line start
    opening: re.Pattern[str]  # {"name": "edit_file" opening a whole call


@lru_cache(maxsize=16)
def _patterns(tool_names: frozenset[str]) -> _ToolPatterns:
    names = "|".join(re.escape(name) for name in sorted(tool_names, key=len, reverse=True))
    return _ToolPatterns(
        named=re.compile(rf'"(?:name|tool|tool_name|function)"\s*:\s*"({names})"'),
        keyed=re.compile(rf'"({names})"\s*:\s*\{{'),
        code=re.compile(rf"^[ \t>`]*({names})\s*\(", re.MULTILINE),
        opening=re.compile(rf'\{{\s*"(?:name|tool)"\s*:\s*"(?:{names})"'),
    )


class ReadReply(BaseModel):
    """The loop's reading of one reply: calls to run, names of calls left unrun, or a problem to correct."""

    calls: list[ToolCall] = Field(default_factory=list)
    not_run: list[str] = Field(default_factory=list)
    problem: str | None = None
    tool: str | None = None  # the tool the failed attempt named, for the correction's example


def read_reply(
    reply: ModelReply,
    state: SessionState,
    tool_names: Collection[str],
    parallel: bool,
    correct_attempts: bool,
    project_file_size: Callable[[str], int | None] | None = None,
    answer_only: bool = False,
) -> ReadReply:
    """Native calls as sent. Otherwise the calls written in the text: in the text protocol any, in native mode
    ones naming a tool (some servers return the model's calls as text), and in both any object with a name
    and arguments, whatever the name; only the first runs unless the model is configured for parallel calls.
    A reply that only repeats keel's own text, or has no call and looks like a failed attempt at one,
    comes back with the problem (with `correct_attempts` off, only unreadable `<tool_call>` tags do). With
    `project_file_size` (a small model; None for a path that is not a project file), `FILE: path` and a
    fenced block replacing a project file is a write_file call, and a search/replace block under a project
    file's name an edit_file call, every one of the reply's; those are all that is read of a reply given
    `answer_only`."""
    if answer_only:  # asked for the answer: whole files still count, calls written in it do not
        if correct_attempts and (echo := echo_of_keel(reply.text, state)):
            return ReadReply(problem=echo)
        writes = file_edits(reply.text, project_file_size)
        calls = [_call(state, n, call) for n, call in enumerate(writes, 1)]
        return ReadReply(calls=calls, problem=None if reply.text.strip() else EMPTY_REPLY)
    if reply.tool_calls and state.tool_protocol == "native":
        return ReadReply(calls=_with_ids(reply.tool_calls, state))
    truncated = reply.finish_reason == "length"
    try:
        parsed = parse_tool_calls(reply.text, complete=truncated)
    except MalformedToolCall as exc:
        return ReadReply(
            problem=CUT_OFF if truncated else str(exc), tool=_named_tool(reply.text, tool_names)
        )
    if state.tool_protocol == "native":
        parsed = [call for call in parsed if call.name in tool_names]
    # a call to a tool that does not exist is still a call: the registry answers it with the tools
    parsed = parsed or calls_in_prose(reply.text, tool_names) or call_shaped(reply.text)
    if parsed:
        run = parsed if parallel else parsed[:1]
        return ReadReply(
            calls=[_call(state, n, call) for n, call in enumerate(run, 1)],
            not_run=[call.name for call in parsed[len(run) :]],
        )
    if correct_attempts and (echo := echo_of_keel(reply.text, state)):
        return ReadReply(problem=echo)  # before whole files: an echo of keel's files is no write
    if writes := file_edits(reply.text, project_file_size):
        return ReadReply(calls=[_call(state, n, call) for n, call in enumerate(writes, 1)])
    if reply.tool_calls:  # a text-protocol session whose server sent native calls anyway
        return ReadReply(calls=_with_ids(reply.tool_calls, state))
    if not reply.text.strip():
        return ReadReply(problem=EMPTY_REPLY)
    if not correct_attempts:
        return ReadReply()
    if truncated and (path := cut_off_file(reply.text, project_file_size)):
        return ReadReply(problem=CUT_OFF_FILE.format(path=path), tool="edit_file")
    attempt = attempted_call(reply.text, tool_names, truncated)
    return ReadReply(problem=attempt, tool=_named_tool(reply.text, tool_names) if attempt else None)


def file_edits(text: str, size_of: Callable[[str], int | None] | None) -> list[ParsedCall]:
    """The project files a reply gives whole, then its search/replace blocks: what a small model answering
    in text changes."""
    return whole_files(text, size_of) + edit_blocks(text, size_of)


def calls_in_prose(text: str, tool_names: Collection[str]) -> list[ParsedCall]:
    """Whole JSON calls naming a tool in the middle of a sentence ("I will call {"name": "find_files", …}."):
    small models write them where a call belongs."""
    if not tool_names:
        return []
    calls: list[ParsedCall] = []
    for found in _patterns(frozenset(tool_names)).opening.finditer(text):
        end = object_end(text, found.start())
        if end is None:
            continue
        try:
            call = as_call(json.loads(text[found.start() : end + 1]))
        except json.JSONDecodeError:
            continue
        if call is not None:
            calls.append(call)
    return calls


def _call(state: SessionState, number: int, parsed: ParsedCall) -> ToolCall:
    return ToolCall(id=state.call_id(number), name=parsed.name, arguments=parsed.arguments)


def _with_ids(calls: list[ToolCall], state: SessionState) -> list[ToolCall]:
    """Calls without an id get one the fold counts (`state.generated_call_ids`)."""
    unnamed, named = 0, []
    for call in calls:
        if not call.id:
            unnamed += 1
            call = call.model_copy(update={"id": state.call_id(unnamed)})
        named.append(call)
    return named


def _named_tool(text: str, tool_names: Collection[str]) -> str | None:
    """The tool a failed attempt names, for the correction's example."""
    if not tool_names:
        return None
    patterns = _patterns(frozenset(tool_names))
    for pattern in (patterns.named, patterns.keyed, patterns.code):
        if found := pattern.search(text):
            return found.group(1)
    return _labelled_fence(text, tool_names)


def _labelled_fence(text: str, tool_names: Collection[str]) -> str | None:
    """A tool's name used as a code block's label (```edit_file)."""
    return next((label for label, _ in _FENCE.findall(text) if label in tool_names), None)


def attempted_call(text: str, tool_names: Collection[str], truncated: bool) -> str | None:
    """What went wrong, when a reply with no readable call still tried to make one: JSON (bare or fenced)
    naming a tool, a fence labelled with a tool's name, a tool written as a function call, or a call the
    length limit cut off. None for a reply that is an answer."""
    opens_call = bool(re.search(r"^\s*[{`<]", text, re.MULTILINE))
    if truncated and opens_call:
        return CUT_OFF
    if text.strip() and not re.sub(r"```\w*|</?tools?(?:_call)?>", "", text).strip():
        return "your reply held an empty code block and no call"
    if not tool_names:
        return None
    patterns = _patterns(frozenset(tool_names))
    named = patterns.named.search(text) or patterns.keyed.search(text)
    if named:
        return f"it looks like a call to {named.group(1)}, but {_json_problem(text, named.start())}"
    if label := _labelled_fence(text, tool_names):
        return f"a code block labelled {label} is not a call to {label}"
    code = patterns.code.search(text)
    if code:
        return f"{code.group(1)}(...) written as code is not a call to {code.group(1)}"
    if announced := announced_step(text):
        return f'you said "{announced}" but sent no tool call to do it'
    return None


def _json_problem(text: str, inside: int) -> str:
    """Why the JSON object around position `inside` cannot be read, in the terms of the mistake."""
    line_starts = [m.start(1) for m in re.finditer(r"^[ \t]*({)", text[: inside + 1], re.MULTILINE)]
    start = line_starts[-1] if line_starts else max(text.rfind("{", 0, inside + 1), 0)
    end = object_end(text, start)
    candidate = text[start:] if end is None else text[start : end + 1]
    hint = ""
    if '"""' in candidate or "'''" in candidate:
        hint = (
            "; JSON has no triple-quoted strings: put the text in one string, with \\n for each "
            'line break and \\" for each quote'
        )
    try:
        value: Any = json.loads(candidate)
    except json.JSONDecodeError as exc:
        return f"it is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}){hint}"
    if isinstance(value, dict) and not isinstance(value.get("arguments", {}), (dict, str)):
        return 'its "arguments" is not a JSON object'
    return 'it is not one object with "name" and "arguments"'


def call_example(name: str, schema: dict[str, Any] | None) -> str:
    """One call to the tool, its required arguments filled with placeholders, as the correction shows it."""
    parameters = (schema or {}).get("function", {}).get("parameters", {})
    properties = parameters.get("properties", {})
    arguments = {
        key: _placeholder(properties.get(key, {})) for key in parameters.get("required", [])
    }
    return json.dumps({"name": name, "arguments": arguments})


def _placeholder(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    return "..."
