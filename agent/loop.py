"""The agent loop: ask the model, run the tools it calls, feed back the results, until it answers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from keel.agent.approval import Approvals
from keel.agent.config import LoopSettings
from keel.agent.context.files_that_matter import files_that_matter, share_of_window
from keel.agent.context.manager import ContextManager
from keel.agent.context.small_project import small_project
from keel.agent.errors import ContextWindowExceeded, ToolsUnsupported
from keel.agent.generic_failures import unknown_call_streak
from keel.agent.git.checkpoints import CheckpointGuard
from keel.agent.model.client import ChatModel, ModelReply
from keel.agent.profile import ModelProfile
from keel.agent.protocol import (
    AnyEvent,
    ApprovalDecision,
    AssistantDelta,
    AssistantMessage,
    Error,
    ToolCall,
    ToolFinished,
    ToolProtocolChanged,
    ToolStarted,
    ToolStatus,
    UserMessage,
    error_class_of,
)
from keel.agent.reply_reading import EMPTY_REPLY, call_example, read_reply
from keel.agent.state import LimitExceeded, SessionState, call_signature
from keel.agent.task_intent import asks_for_change
from keel.agent.verification.gate import verified_ending
from keel.prompts import render
from keel.tools.base import Tool, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.registry import ToolRegistry, parse_arguments

AskPerson = Callable[[ToolCall, Tool[Any], dict[str, Any]], Awaitable[ApprovalDecision | None]]
MAX_CONTEXT_RETRIES = 3
LOOP_WARN, LOOP_STOP = 3, 5
# a small model's third identical read in a row (its second, for a question): its answer is asked for
ASK_ANSWER_AT = 3
EMPTY_REPLY_CORRECTION = (
    "Your reply was empty. Continue the task with a tool call, or give your final answer."
)


class TaskComplete(Exception):
    """The model answered without calling a tool."""

    def __init__(self, final_message: str) -> None:
        super().__init__(final_message)
        self.final_message = final_message


class AgentLoop:
    """Runs steps for one task; it reads the session's state and changes it only by emitting events. Flow
    leaves it by TaskComplete or LimitExceeded."""

    def __init__(
        self,
        current: Callable[[], SessionState],
        model: ChatModel,
        registry: ToolRegistry,
        tool_context: ToolContext,
        context: ContextManager,
        approvals: Approvals,
        emit: Callable[[AnyEvent], None],
        ask_person: AskPerson | None,
        checkpoints: CheckpointGuard | None = None,
        policy: LoopSettings | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        self.current = current
        self.model = model
        self.registry = registry
        self.tool_context = tool_context
        self.context = context
        self.approvals = approvals
        self.emit = emit
        self.ask_person = ask_person
        self.checkpoints = checkpoints
        self.policy = policy or LoopSettings()
        self.profile = profile or ModelProfile()

    @property
    def state(self) -> SessionState:
        return self.current()

    async def run(self) -> None:
        await self._give_small_project()
        while True:
            await self.step()

    async def _give_small_project(self) -> None:
        """A small model starting a change task gets the project's files with it (the files that matter for
        the task, when they are too many), marked read."""
        state = self.state
        task_just_given = bool(state.history) and state.history[-1].content == state.task_prompt
        if not self.profile.compact or state.steps or not task_just_given:
            return
        if not asks_for_change(state.task_prompt):
            return  # a question is answered from what the tools show; the file list is in the prompt
        root = self.tool_context.root
        files = small_project(root, self.context.system_prompt.facts.files)
        partial = not files
        if partial:
            limit = share_of_window(self.context.window)
            files = await asyncio.to_thread(files_that_matter, root, state.task_prompt, limit)
        if not files:
            return
        self.emit(
            UserMessage(
                text=render("project_files", files=files, task=state.task_prompt, partial=partial),
                origin="keel",
                purpose="context",
            )
        )
        for file in files:
            self.tool_context.note_read(root / file.path)

    async def step(self) -> None:
        """One model call and the tool calls it asked for; a reply without a call ends the task only when
        it is not a failed attempt at one and, for a task that asks for a change, something was changed or
        the model was asked once (README: "How a task ends")."""
        self.state.check_limits()
        reply = await self._call_model()
        read = read_reply(
            reply,
            self.state,
            self.registry.names(),
            self.profile.parallel_calls,
            self.policy.correct_attempted_calls,
            self._project_file_size if self.profile.compact else None,
            answer_only=self.state.answer_requested,
        )
        self.emit(
            AssistantMessage(
                text=reply.text,
                tool_calls=read.calls,
                usage=reply.usage,
                cost=reply.cost,
                tokens=reply.tokens,
            )
        )
        self.context.after_model_call(reply.usage)
        if read.problem is not None:
            self._correct(read.problem, read.tool)
            return
        if not read.calls:
            if self._ends_unchanged():
                nudge = self._nudge(reply.text)
                self.emit(UserMessage(text=nudge, origin="keel", purpose="nudge"))
                return
            final = await verified_ending(
                reply.text,
                self.state,
                self.policy,
                compact=self.profile.compact,
                ctx=self.tool_context,
                test_command=self.context.system_prompt.facts.test_command,
                approvals=self.approvals,
                emit=self.emit,
            )
            if final is None:
                return  # the failures went back to the model
            raise TaskComplete(final)
        repeated_reads = []
        for number, call in enumerate(read.calls):
            unrun = read.not_run if number == 0 else []
            if await self._execute(call, render("calls_not_run", names=unrun) if unrun else ""):
                repeated_reads.append(call.name)
        self._stop_unknown_calls(read.calls)  # after their results: no call is left unanswered
        if repeated_reads:
            answer = render("answer_request", name=repeated_reads[0])
            self.emit(UserMessage(text=answer, origin="keel", purpose="answer"))

    def _correct(self, problem: str, tool: str | None) -> None:
        """Tell the model what was wrong with its attempt and how to send it; after `max_corrections` in a
        row the task stops (the model is not going to get there)."""
        if self.state.corrections >= self.policy.max_corrections:
            raise LimitExceeded(
                "error",
                f"the model's last {self.state.corrections + 1} replies could not be run; the last: "
                f"{problem}",
            )
        if problem == EMPTY_REPLY:
            text = EMPTY_REPLY_CORRECTION
        else:
            name = tool or "read_file"
            example = call_example(name, self.registry.schema(name))
            text = render("call_correction", problem=problem, example=example)
        self.emit(UserMessage(text=text, origin="keel", purpose="correction"))

    def _stop_unknown_calls(self, calls: list[ToolCall]) -> None:
        """After more than `max_corrections` replies in a row whose text called only tools that do not exist
        (each answered with the list of tools), the task stops: the model is not going to get there."""
        streak = unknown_call_streak(self.state, self.registry.names())
        if streak > self.policy.max_corrections:
            names = ", ".join(sorted({call.name for call in calls}))
            raise LimitExceeded(
                "error",
                f"the model's last {streak} replies called only tools that do not exist; the last: "
                f"{names}",
            )

    def _ends_unchanged(self) -> bool:
        """The task asks for a change, no file was changed and no command ran, edits are allowed, and
        the model has not had its nudge yet (by default only small models get one: they announce edits they
        never made; a capable model that changed nothing usually meant to)."""
        state = self.state
        nudges = self.policy.nudge_without_change
        if (
            state.nudged
            or nudges == "never"
            or (nudges == "small-models" and not self.profile.compact)
        ):
            return False
        if self.approvals.verdict("edit_file", ToolKind.EDIT) == "deny":
            return False
        if not asks_for_change(state.task_prompt):
            return False
        ran = [
            self.registry.get(name).kind for name in state.task_tools_ok if name in self.registry
        ]
        return not state.task_edited and ToolKind.EXEC not in ran

    def _project_file_size(self, path: str) -> int | None:
        """A listed project file's length now (None for any other path), for telling a whole file given in a
        reply from a snippet."""
        if path not in self.context.system_prompt.facts.files:
            return None
        try:
            return (self.tool_context.root / path).stat().st_size
        except OSError:
            return None

    def _nudge(self, reply: str) -> str:
        """The nudge, with the file the task or the reply names (the project's first file otherwise)."""
        files = self.context.system_prompt.facts.files or ["path/to/file"]
        named = [f for f in files if f in self.state.task_prompt or f in reply]
        return render("no_change_nudge", example_file=(named or files)[0])

    async def _call_model(self) -> ModelReply:
        overflows = 0
        while True:
            await self.context.fit()
            self.state.check_limits()  # summarizing costs tokens too
            request = self.context.build_request(self.state)
            # [] offers no tool at all (an answer was asked for); None leaves them to the text protocol
            tools = (
                []
                if self.state.answer_requested
                else self.context.tool_schemas(self.state.tool_protocol)
            )
            try:
                return await self.model.complete(request, tools, self._on_delta)
            except ToolsUnsupported as exc:
                if self.state.tool_protocol == "text":
                    raise
                self.emit(
                    Error(
                        error_class=error_class_of(exc.error_class),
                        message=f"{exc}; switching to the text tool protocol",
                    )
                )
                self.emit(ToolProtocolChanged(tool_protocol="text", reason=str(exc)))
            except ContextWindowExceeded as exc:
                overflows += 1
                if overflows > MAX_CONTEXT_RETRIES:
                    raise
                self.emit(
                    Error(
                        error_class=error_class_of(exc.error_class),
                        message=f"{exc}; compacting the context and retrying",
                    )
                )
                await self.context.compact(reason="provider_overflow")

    def _on_delta(self, text: str) -> None:
        self.emit(AssistantDelta(text=text))

    async def _execute(self, call: ToolCall, note: str = "") -> bool:
        """Run one call and log its result; `note` is appended to the result (calls of the reply not run).
        True when it was a small model's read, repeated once too often, whose answer is to be asked for."""
        started = time.monotonic()
        shown_args = _arguments_for_display(call.arguments)
        signature = call_signature(call.name, shown_args)
        repeats = self.state.repeats_of(signature)
        if repeats >= LOOP_STOP:
            raise LimitExceeded(
                "loop_detected",
                f"the model made the same {call.name} call {repeats} times in a row",
            )
        again = self._already_answered(call.name, signature)
        asked_at = ASK_ANSWER_AT - (not asks_for_change(self.state.task_prompt))
        ask_answer = again and repeats >= asked_at
        self.emit(ToolStarted(call_id=call.id, name=call.name, arguments=shown_args))
        status: ToolStatus
        # when the answer is asked for, the result comes again, plainly, before the request
        if again and not ask_answer:
            result, status = ToolResult(output=render("repeated_call", name=call.name)), "ok"
        else:
            try:
                result, status = await self._validated_run(call, shown_args)
            except ToolError as exc:
                result, status = ToolResult(output=f"Error: {exc}", ok=False), "error"
        if repeats >= LOOP_WARN and not again:  # a repeated read gets the answer request instead
            warning = render("loop_warning", name=call.name, count=repeats, limit=LOOP_STOP)
            note = f"{warning}\n\n{note}" if note else warning
        if note:
            result = result.model_copy(update={"output": f"{result.output}\n\n{note}"})
        self.emit(
            ToolFinished(
                call_id=call.id,
                name=call.name,
                status=status,
                output=result.output,
                diff=result.diff,
                duration_ms=int((time.monotonic() - started) * 1000),
            )
        )
        return ask_answer

    def _already_answered(self, name: str, signature: str) -> bool:
        """For a small model: the same read as its last call, which succeeded, is answered with a pointer
        to the result it has instead of the same output again (it re-reads instead of acting)."""
        state = self.state
        if not self.profile.compact or signature != state.repeated_call or not state.last_ran_ok:
            return False
        if name not in self.registry:
            return False
        tool = self.registry.get(name)
        return tool.kind is ToolKind.READ and tool.same_result_again

    async def _validated_run(
        self, call: ToolCall, shown_args: dict[str, Any]
    ) -> tuple[ToolResult, ToolStatus]:
        parsed = call.arguments if "_raw" in shown_args else shown_args  # decoded once, for display
        tool, args = self.registry.validate(call.name, parsed)
        refusal = await self._refusal(call, tool, shown_args)
        if refusal is not None:
            return ToolResult(output=refusal, ok=False), "denied"
        if self.checkpoints is not None and tool.kind is not ToolKind.READ:
            await self.checkpoints.before_change(self.state.task_prompt)
        result = await self.registry.run(tool, args, self.tool_context)
        return result, ("unchanged" if result.unchanged else "ok") if result.ok else "error"

    async def _refusal(
        self, call: ToolCall, tool: Tool[Any], shown_args: dict[str, Any]
    ) -> str | None:
        """None when the call may run; otherwise what the model is told instead."""
        verdict = self.approvals.verdict(tool.name, tool.kind)
        if verdict == "allow":
            return None
        if verdict == "deny":
            return self.approvals.denial(tool.name, tool.kind)
        if self.ask_person is None:
            return self.approvals.unattended(tool.name)
        decision = await self.ask_person(call, tool, shown_args)
        if decision == "allow_session":
            self.approvals.allowed_for_session.add(tool.name)
        if decision in ("allow_once", "allow_session"):
            return None
        return (
            f"Denied: the user did not approve this {tool.name} call. Ask them or try another way."
        )


def _arguments_for_display(raw: str) -> dict[str, Any]:
    """The call's arguments as an object for events; malformed JSON is shown raw."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"_raw": raw}
