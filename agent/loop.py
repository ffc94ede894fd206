"""The agent loop: ask the model, run the tools it calls, feed back the results, until it answers."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from keel.agent.approval import Approvals
from keel.agent.context.manager import ContextManager
from keel.agent.errors import ContextWindowExceeded, ToolsUnsupported
from keel.agent.git.checkpoints import CheckpointGuard
from keel.agent.model.client import ChatModel, ModelReply
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
from keel.agent.state import LimitExceeded, SessionState, call_signature
from keel.agent.text_protocol import MalformedToolCall, parse_tool_calls
from keel.prompts import render
from keel.tools.base import Tool, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.registry import ToolRegistry, parse_arguments

AskPerson = Callable[[ToolCall, Tool[Any], dict[str, Any]], Awaitable[ApprovalDecision | None]]
MAX_CONTEXT_RETRIES = 3
LOOP_WARN, LOOP_STOP = 3, 5
EMPTY_REPLY = "Your reply was empty. Continue the task with a tool call, or give your final answer."


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

    @property
    def state(self) -> SessionState:
        return self.current()

    async def run(self) -> None:
        while True:
            await self.step()

    async def step(self) -> None:
        """One model call and the tool calls it asked for."""
        self.state.check_limits()
        reply = await self._call_model()
        correction: str | None
        try:
            calls = self._calls_of(reply)
        except MalformedToolCall as exc:
            calls, correction = [], str(exc)
        else:
            correction = None if calls or reply.text.strip() else EMPTY_REPLY
        self.emit(
            AssistantMessage(text=reply.text, tool_calls=calls, usage=reply.usage, cost=reply.cost)
        )
        self.context.after_model_call(reply.usage)
        if correction is not None:
            self.emit(UserMessage(text=correction, origin="keel"))
        elif not calls:
            raise TaskComplete(reply.text)
        for call in calls:
            await self._execute(call)

    async def _call_model(self) -> ModelReply:
        overflows = 0
        while True:
            await self.context.fit()
            self.state.check_limits()  # summarizing costs tokens too
            request = self.context.build_request(self.state)
            tools = self.registry.schemas() if self.state.tool_protocol == "native" else None
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

    def _calls_of(self, reply: ModelReply) -> list[ToolCall]:
        """Native calls as sent; in the text protocol the calls written in the reply (native ones if none).
        Calls without an id get one the fold counts (`state.calls`)."""
        state = self.state
        if state.tool_protocol == "text":
            parsed = parse_tool_calls(reply.text)
            if parsed or not reply.tool_calls:
                return [
                    ToolCall(id=state.call_id(n), name=p.name, arguments=p.arguments)
                    for n, p in enumerate(parsed, 1)
                ]
        unnamed = 0
        calls = []
        for call in reply.tool_calls:
            if not call.id:
                unnamed += 1
                call = call.model_copy(update={"id": state.call_id(unnamed)})
            calls.append(call)
        return calls

    async def _execute(self, call: ToolCall) -> None:
        started = time.monotonic()
        shown_args = _arguments_for_display(call.arguments)
        repeats = self.state.repeats_of(call_signature(call.name, shown_args))
        if repeats >= LOOP_STOP:
            raise LimitExceeded(
                "loop_detected",
                f"the model made the same {call.name} call {repeats} times in a row",
            )
        self.emit(ToolStarted(call_id=call.id, name=call.name, arguments=shown_args))
        try:
            result, status = await self._validated_run(call, shown_args)
        except ToolError as exc:
            result, status = ToolResult(output=f"Error: {exc}", ok=False), "error"
        if repeats >= LOOP_WARN:
            warning = render("loop_warning", name=call.name, count=repeats, limit=LOOP_STOP)
            result = result.model_copy(update={"output": f"{result.output}\n\n{warning}"})
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
        return result, "ok" if result.ok else "error"

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
