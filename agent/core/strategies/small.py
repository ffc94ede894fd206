"""The strategy for small models (0.5B–4B): the compact prompt listing the project's files, fewer tools with
short schemas, a small project's files given with a change task, whole files in a reply taken as writes, a read
repeated right after it succeeded answered with a pointer and then with a request for the answer, and a nudge
when a task that asks for a change ends with nothing changed."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from collections.abc import Callable
from typing import Any

from keel.agent.core.context.budget import is_status_line
from keel.agent.core.context.files_that_matter import (
    files_that_matter,
    read_up_to,
    share_of_window,
)
from keel.agent.core.context.small_project import ProjectFile, small_project
from keel.agent.core.generic_failures import echo_of_keel
from keel.agent.core.messages import Message
from keel.agent.core.model.reply import ModelReply
from keel.agent.core.model.sampling import CallSampling
from keel.agent.core.protocol import (
    AnyEvent,
    ToolCall,
    ToolFinished,
    UserMessage,
    VerificationCheck,
)
from keel.agent.core.reply_reading import ReadReply
from keel.agent.core.state import SessionState
from keel.agent.core.strategies.base import Repeat, Strategy, Workspace
from keel.agent.core.strategies.ending import Ending
from keel.agent.core.strategies.focused_definition import (
    FocusedDefinition,
    focused_definition,
    named_definition,
    shown_function,
)
from keel.agent.core.strategies.heuristics import asks_for_change, prose_of
from keel.agent.core.strategies.python_reading import (
    fragment_merged,
    rewrites_unchanged,
    snippet_edits,
    widened_edit,
)
from keel.agent.core.system_prompt import PromptStyle
from keel.agent.core.verification.changes import changed_paths
from keel.agent.core.verification.checks import PYTEST, check_tests
from keel.agent.core.verification.related_tests import is_test_file
from keel.prompts import render
from keel.tools import small_model_tools
from keel.tools.base import Tool, ToolContext, ToolError, ToolKind, ToolResult

# a change task's reply of given files, unchanged, before anything changed: a copy, not an answer, whatever
# words come with it (the nudged 1.5B sent slug.py back with a sentence restating the task)
UNCHANGED_COPY = (
    "your reply gave {files} back exactly as given, which changes nothing and is not an answer; "
    "change the lines the task needs, or, if nothing needs to change, say why in words alone, "
    "without the file"
)
UNCHANGED_COPY_OPENING = UNCHANGED_COPY.split("{", 1)[0]
# the third identical read in a row (the second, for a question): its answer is asked for
ASK_ANSWER_AT = 3
TESTS_UP_FRONT_TIMEOUT = 60  # seconds: the tests of a project small enough to paste
RETRY_TEMPERATURE = (
    0.7  # an answer asked for again (at 0.7 stop 45's wrong_default was mended in 1 of 3 tries)
)
_PATH = re.compile(r"[\w./-]+\.\w+")  # a file a check's output names ("report.py:3 imports …")


class SmallModel(Strategy):
    """What keel does for a model that copies what it does not need and re-reads instead of acting."""

    name = "small"
    prompt_style = PromptStyle(
        template="system_compact", short_schemas=True, lists_files=True, bare_status_line=False
    )
    nudges_by_default = True
    verifies_by_default = True

    def tools(self) -> list[Tool[Any]]:
        return small_model_tools()

    async def prepare_task(self, at: Workspace) -> list[AnyEvent]:
        """A change task just given comes with the project's files, marked read; when the project is too large,
        with the function its words point at in the file that matters most, else the files that matter."""
        state = at.state
        task_just_given = bool(state.history) and state.history[-1].content == state.task_prompt
        if state.steps or not task_just_given:
            return []
        if not asks_for_change(state.task_prompt):
            return []  # a question is answered from what the tools show; the file list is in the prompt
        root = at.tool_context.root
        files = small_project(root, at.files)
        partial = not files
        if partial:
            limit = share_of_window(at.window)
            files = await asyncio.to_thread(files_that_matter, root, state.task_prompt, limit)
        if not files:
            return []
        focus = focused_definition(files[0], state.task_prompt) if partial else None
        if focus is not None:
            at.tool_context.note_read(root / focus.path)
            text = render("focused_definition", focus=focus, task=state.task_prompt)
            return [UserMessage(text=text, origin="keel", purpose="context")]
        for file in files:
            at.tool_context.note_read(root / file.path)
        failing = await self.failing_tests(files, at) if self.verifies() else None
        text = render(
            "project_files", files=files, task=state.task_prompt, partial=partial, failing=failing
        )
        return [UserMessage(text=text, origin="keel", purpose="context")]

    @staticmethod
    async def failing_tests(files: list[ProjectFile], at: Workspace) -> VerificationCheck | None:
        """The given test files run as verification runs them, when they fail: a small model told "make the
        test pass" sees which test and how, as it would after its first edit (None when they pass or cannot
        run)."""
        tests = [file.path for file in files if is_test_file(file.path)]
        if not tests or not at.commands_allowed:
            return None
        command = f"{PYTEST} {shlex.join(tests)}"
        check = await check_tests(at.tool_context, command, True, TESTS_UP_FRONT_TIMEOUT)
        return check if check.status == "failed" else None

    def request_tools(
        self, state: SessionState, offered: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]] | None:
        """Edit first: the call that follows the project's files (and the one that asks for its answer again)
        offers no tools, so the model answers with the files it changes, as it would in one call (its tool
        calls are where a small model fails most); the tools come back for the rest of the task (a nudge)."""
        return [] if state.strategy.files_call else super().request_tools(state, offered)

    def system_template(self, state: SessionState) -> str | None:
        """Edit first: the call that follows the project's files is spoken to as one call would be, with a
        system prompt that says nothing of tools (told it cannot change a file without a tool, a small model
        given no tools copies the files back unchanged)."""
        return "system_edit_first" if state.strategy.files_call else None

    def request_history(self, state: SessionState) -> list[Message] | None:
        """Edit first: that call is one call, the project's files with the task as keel last gave them and
        nothing before them (the 0.5B, given the task before the files or its last answer before the failed
        checks, sends that answer back; given the files message alone, it makes the change). An answer that
        could not be used is asked for again as that same call, with what was wrong after the files and the
        failed answer left out: shown its copy of people.py, the 1.5B sent the same copy three times more
        (bench/small_model: none_input); asked anew, it made the change in 5 of 9 tries."""
        if not state.strategy.files_call:
            return None
        said = [m for m in state.history if m.role == "user" and not is_status_line(m.content)]
        if state.strategy.files_just_given:
            return said[-1:] or None
        # keel's messages since the files: a correction of each failed answer; the last one says what was wrong
        corrected = state.strategy.answers_corrected
        if len(said) <= corrected:  # the files were summarized away: the history as it is
            return None
        files, correction = said[-1 - corrected], said[-1]
        return [files.with_content(f"{files.content}\n\n{correction.content}")]

    def request_sampling(self, state: SessionState) -> CallSampling | None:
        """Edit first: an answer asked for again is the same request as the call it repeats (the failed answer
        is left out, the correction is the same), so it is sampled anew, seeded by the session's count of
        corrections: no two retries of a session share a seed (the files given again after failed checks start
        a new run of retries), and a run still repeats. Under greedy or one-seed sampling the 1.5B sent
        ledger_comment's same 1,211-token copy three times (bench/small_model, medium set)."""
        if not state.strategy.files_asked_again:
            return None
        return CallSampling(temperature=RETRY_TEMPERATURE, seed=state.failed_replies)

    def read(self, reply: ModelReply, at: Workspace) -> ReadReply:
        """As any reply is read, and then as a small model means its Python edits (strategies/python_edits):
        a reply of definitions in a fenced block with no file named puts them into their file, a whole file
        of new definitions only adds them, and an edit_file replacing a definition's first line with a whole
        definition replaces the definition."""
        read = super().read(reply, at)
        # code it gave counts before a step it announced; an echo of keel's own files never does
        if not read.calls and not echo_of_keel(reply.text, at.state):
            edits = snippet_edits(reply.text, at)
            calls = [ToolCall(id=at.state.call_id(n), **w) for n, w in enumerate(edits.writes, 1)]
            if calls:
                return ReadReply(calls=calls)
            return unchanged_answer(edits.copied, reply, at) or read  # functions sent back as shown
        if (
            read.calls
            and not reply.tool_calls
            and all(rewrites_unchanged(c, at) for c in read.calls)
        ):
            paths = [str(json.loads(call.arguments).get("path")) for call in read.calls]
            return unchanged_answer(paths, reply, at) or read  # whole files, exactly as they are
        meant = [fragment_merged(widened_edit(call, at), at) for call in read.calls]
        return read.model_copy(update={"calls": meant})

    async def after_calls(
        self, reply: ModelReply, results: list[ToolFinished], at: Workspace
    ) -> Ending | None:
        """Edit first, as in one call: the files of its answer to the project's files, written, end the task
        once they pass keel's checks (their failures go back instead), with no call to ask it what it did."""
        state = at.state
        if not state.strategy.answered_files or reply.tool_calls or not state.strategy.task_edited:
            return None
        if any(result.status not in ("ok", "unchanged") for result in results):
            return None
        written = sorted(frozenset().union(*(changed_paths(r.diff) for r in results)))
        answer = render("edit_first_answer", prose=prose_of(reply.text), files=written)
        return await self.before_end(answer, at)

    def verification_feedback(
        self, failed: list[VerificationCheck], left: int, at: Workspace
    ) -> UserMessage:
        """Edit first, again, when its answer to the project's files failed keel's checks: the files it changed
        and those the failures name come back as they are now, with the failures, and the next call (offering
        no tools) asks for the files it changes, as one call given the errors would. Told to mend report.py's
        import with a tool call, the 0.5B pasted the error into edit_file's old_string (bench/small_model:
        rename_across_files)."""
        state = at.state
        if not state.strategy.answered_files:
            return super().verification_feedback(failed, left, at)
        ctx = at.tool_context
        if focus := focus_again(sorted(state.strategy.task_changed), failed, at):
            ctx.note_read(ctx.root / focus.path)
            text = render(
                "focused_definition", focus=focus, task=state.task_prompt, failed=failed, left=left
            )
            return UserMessage(text=text, origin="keel", purpose="context")
        paths = [*sorted(state.strategy.task_changed), *files_named(failed, ctx)]
        files = read_up_to(ctx.root, paths, share_of_window(at.window))
        if not files:
            return super().verification_feedback(failed, left, at)
        for file in files:  # the loop puts them on the message as seen
            ctx.note_read(ctx.root / file.path)
        text = render(
            "project_files",
            files=files,
            task=state.task_prompt,
            partial=False,
            failing=None,
            failed=failed,
            left=left,
        )
        return UserMessage(text=text, origin="keel", purpose="context")

    def project_file_size(self, at: Workspace) -> Callable[[str], int | None] | None:
        """A listed project file's length now (None for any other path): a fenced block about as long that
        names it is the whole file, written."""

        def size(path: str) -> int | None:
            if path not in at.files:
                return None
            try:
                return (at.tool_context.root / path).stat().st_size
            except OSError:
                return None

        return size

    def correction(self, problem: str, tool: str | None, at: Workspace) -> str:
        """A reply that gave given files back unchanged, in its text, is told so in the form it wrote them in,
        whole files, not with a tool call's example: the 1.5B, shown both, sent a fenced block with no file
        named, or (asked again with tools offered) that example's sentence. So is any answer to the project's
        files that could not be used, empty ones too: it is asked for again in that call, which offers no
        tools. Other problems get the tool call's form."""
        asked_again = at.state.strategy.answered_files
        if asked_again or problem.startswith(UNCHANGED_COPY_OPENING):
            return render("edit_first_correction", problem=problem, asked_again=asked_again)
        return super().correction(problem, tool, at)

    def on_repeated_call(
        self, name: str, signature: str, repeats: int, at: Workspace
    ) -> Repeat | None:
        """The same read as the last call, which succeeded, gets a pointer to the result the model has
        instead of the same output again; once too often, it runs and the answer is asked for."""
        state = at.state
        if signature != state.repeated_call or not state.strategy.last_ran_ok:
            return None
        if name not in at.registry:
            return None
        tool = at.registry.get(name)
        if tool.kind is not ToolKind.READ or not tool.same_result_again:
            return None
        if repeats >= ASK_ANSWER_AT - (not asks_for_change(state.task_prompt)):
            request = render("answer_request", name=name)
            return Repeat(then=UserMessage(text=request, origin="keel", purpose="answer"))
        return Repeat(result=ToolResult(output=render("repeated_call", name=name)))


def unchanged_answer(copied: list[str], reply: ModelReply, at: Workspace) -> ReadReply | None:
    """How a reply that gave these files (whole, or their functions) back exactly as they are is read: as the
    answer once the task's files were changed or when it answers a question beside them, else as a copy,
    corrected. None when it copied nothing."""
    if not copied:
        return None
    if at.state.strategy.task_edited:
        return ReadReply()  # its own files again: the answer
    if prose_of(reply.text) and not asks_for_change(at.state.task_prompt):
        return ReadReply()  # a question answered beside the file it is about
    problem = UNCHANGED_COPY.format(files=", ".join(dict.fromkeys(copied)))
    return ReadReply(problem=problem, tool="edit_file")


def focus_again(
    changed: list[str], failed: list[VerificationCheck], at: Workspace
) -> FocusedDefinition | None:
    """The function keel showed the model alone in this task (a project too large to give whole), as the changed
    file that has it has it now: failed checks come back with that function, as the task came, not with the
    whole file the model was never shown. None when a failure names a line of that file outside the function
    (the answer broke the file elsewhere: the 1.5B asked for `currency` rewrote class Currency); a frame pytest
    shows a failure passing through (`ledger/journal.py:129: in read_text`, the caller) is no such line: with
    it, parse_posting's IndexError brought journal.py back whole, and the 1.5B's answers ran into the length
    limit until the task ended in error (bench/small_model --set medium, embedded: ledger_comment)."""
    said = [m.content for m in at.state.history if m.role == "user"]
    task_at = max((n for n, text in enumerate(said) if text == at.state.task_prompt), default=0)
    name = shown_function(said[task_at:])  # in this task
    if name is None:
        return None
    files = read_up_to(at.tool_context.root, changed, share_of_window(at.window))
    focus = next((found for file in files if (found := named_definition(file, name))), None)
    if focus is None:
        return None
    first, last = focus.lines
    named = re.compile(rf"{re.escape(focus.path)}(?::|\", line )(\d+)(?!\d|: in )")
    outside = (not first <= int(line) <= last for c in failed for line in named.findall(c.output))
    return None if any(outside) else focus


def files_named(checks: list[VerificationCheck], ctx: ToolContext) -> list[str]:
    """The workspace's files the checks' outputs name, each once, in order (none outside the workspace)."""
    found: dict[str, None] = {}
    for check in checks:
        for name in _PATH.findall(check.output):
            try:
                path = ctx.resolve(name)
            except ToolError:
                continue
            if path.is_file():
                found[path.relative_to(ctx.root).as_posix()] = None
    return list(found)
