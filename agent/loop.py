"""The agent loop: ask the model, run the tools it calls, feed back the results, until it answers."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from keel.agent.approval import Approvals
from keel.agent.context import ContextManager
from keel.agent.errors import ContextWindowExceeded, ToolsUnsupported
from keel.agent.git.checkpoints import CheckpointGuard
from keel.agent.messages import Message, tool_result, user
from keel.agent.model.client import ChatModel, ModelReply
from keel.agent.protocol import (
    AnyEvent,
    ApprovalDecision,
    AssistantDelta,
    AssistantMessage,
    Error,
    ToolCall,
    ToolFinished,
    ToolStarted,
    UserMessage,
)
from keel.agent.state import LimitExceeded, SessionState
from keel.agent.text_protocol import MalformedToolCall, parse_tool_calls
from keel.prompts import render
from keel.tools.base import Tool, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.registry import ToolRegistry, parse_arguments

AskPerson = Callable[[ToolCall, Tool, dict[str, Any]], Awaitable[ApprovalDecision | None]]
MAX_CONTEXT_RETRIES = 3
LOOP_WARN, LOOP_STOP = 3, 5
EMPTY_REPLY = "Your reply was empty. Continue the task with a tool call, or give your final answer."


class TaskComplete(Exception):
    """The model answered without calling a tool."""

    def __init__(self, final_message: str) -> None:
        super().__init__(final_message)
        self.final_message = final_message


class AgentLoop:
    """Runs steps for one task over a session's state; flow leaves it by TaskComplete or LimitExceeded."""

    def __init__(
        self,
        state: SessionState,
        model: ChatModel,
        registry: ToolRegistry,
        tool_context: ToolContext,
        context: ContextManager,
        approvals: Approvals,
        emit: Callable[[AnyEvent], None],
        ask_person: AskPerson | None,
        checkpoints: CheckpointGuard | None = None,
    ) -> None:
        self.state = state
        self.model = model
        self.registry = registry
        self.tool_context = tool_context
        self.context = context
        self.approvals = approvals
        self.emit = emit
        self.ask_person = ask_person
        self.checkpoints = checkpoints

    async def run(self) -> None:
        while True:
            await self.step()

    async def step(self) -> None:
        """One model call and the tool calls it asked for."""
        self.state.check_limits()
        reply = await self._call_model()
        try:
            calls = self._calls_of(reply)
        except MalformedToolCall as exc:
            calls, correction = [], str(exc)
        else:
            correction = None if calls or reply.text.strip() else EMPTY_REPLY
        assistant = Message(role="assistant", content=reply.text, tool_calls=calls)
        self.state.record(assistant, reply.usage, reply.cost)
        self.emit(
            AssistantMessage(text=reply.text, tool_calls=calls, usage=reply.usage, cost=reply.cost)
        )
        self.context.after_model_call(self.state, reply.usage)
        if correction is not None:
            self.state.record(user(correction))
            self.emit(UserMessage(text=correction, origin="keel"))
        elif not calls:
            raise TaskComplete(reply.text)
        for call in calls:
            result = await self._execute(call)
            self.state.record(tool_result(call, result.output))
        self.state.steps += 1

    async def _call_model(self) -> ModelReply:
        overflows = 0
        while True:
            await self.context.fit(self.state)
            self.state.check_limits()  # summarizing costs tokens too
            request = self.context.build_request(self.state)
            tools = self.registry.schemas() if self.state.tool_protocol == "native" else None
            try:
                return await self.model.complete(request, tools, self._on_delta)
            except ToolsUnsupported as exc:
                if self.state.tool_protocol == "text":
                    raise
                self.state.switch_to_text_protocol()
                self.emit(
                    Error(
                        error_class=exc.error_class,
                        message=f"{exc}; switching to the text tool protocol",
                    )
                )
            except ContextWindowExceeded as exc:
                overflows += 1
                if overflows > MAX_CONTEXT_RETRIES:
                    raise
                self.emit(
                    Error(
                        error_class=exc.error_class,
                        message=f"{exc}; compacting the context and retrying",
                    )
                )
                await self.context.compact(self.state, reason="provider_overflow")

    def _on_delta(self, text: str) -> None:
        self.emit(AssistantDelta(text=text))

    def _calls_of(self, reply: ModelReply) -> list[ToolCall]:
        """Native calls as sent; in the text protocol the calls written in the reply (native ones if none)."""
        if self.state.tool_protocol == "text":
            parsed = parse_tool_calls(reply.text)
            if parsed or not reply.tool_calls:
                return [
                    ToolCall(id=self.state.next_call_id(), name=p.name, arguments=p.arguments)
                    for p in parsed
                ]
        return [
            c if c.id else c.model_copy(update={"id": self.state.next_call_id()})
            for c in reply.tool_calls
        ]

    async def _execute(self, call: ToolCall) -> ToolResult:
        started = time.monotonic()
        shown_args = _arguments_for_display(call.arguments)
        repeats = self.state.note_call(_signature(call.name, shown_args))
        if repeats >= LOOP_STOP:
            raise LimitExceeded(
                "loop_detected",
                f"the model made the same {call.name} call {repeats} times in a row",
            )
        self.emit(ToolStarted(call_id=call.id, name=call.name, arguments=shown_args))
        try:
            result = await self._validated_run(call, shown_args)
        except ToolError as exc:
            result = ToolResult(output=f"Error: {exc}", ok=False)
        if repeats >= LOOP_WARN:
            warning = render("loop_warning", name=call.name, count=repeats, limit=LOOP_STOP)
            result = result.model_copy(update={"output": f"{result.output}\n\n{warning}"})
        self.emit(
            ToolFinished(
                call_id=call.id,
                name=call.name,
                ok=result.ok,
                output=result.output,
                diff=result.diff,
                duration_ms=int((time.monotonic() - started) * 1000),
            )
        )
        return result

    async def _validated_run(self, call: ToolCall, shown_args: dict[str, Any]) -> ToolResult:
        parsed = call.arguments if "_raw" in shown_args else shown_args  # decoded once, for display
        tool, args = self.registry.validate(call.name, parsed)
        refusal = await self._refusal(call, tool, shown_args)
        if refusal is not None:
            return ToolResult(output=refusal, ok=False)
        if self.checkpoints is not None and tool.kind is not ToolKind.READ:
            await self.checkpoints.before_change(self.state.task_prompt)
        return await self.registry.run(tool, args, self.tool_context)

    async def _refusal(self, call: ToolCall, tool: Tool, shown_args: dict[str, Any]) -> str | None:
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


def _signature(name: str, arguments: dict[str, Any]) -> str:
    return name + json.dumps(arguments, sort_keys=True)


def _arguments_for_display(raw: str) -> dict[str, Any]:
    """The call's arguments as an object for events; malformed JSON is shown raw."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"_raw": raw}
