"""The agent loop, the same for every model: limits, the model call, the strategy's reading of the reply, the
tools it calls, the end. What differs by kind of model is the strategy's (agent/core/strategies/)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from keel.agent.core.errors import ContextWindowExceeded, ToolsUnsupported
from keel.agent.core.files_seen import Seen, seen_since, snapshot
from keel.agent.core.images.attach import attached
from keel.agent.core.loop_guard import (
    LOOP_STOP,
    LOOP_WARN,
    stop_after_corrections,
    stop_after_unknown_calls,
    stop_repeats,
)
from keel.agent.core.model.client import ChatModel, ModelReply
from keel.agent.core.planning.mode import plan_mode_refusal
from keel.agent.core.planning.todo_events import todo_update
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantDelta,
    AssistantMessage,
    Error,
    ImageAttached,
    ToolCall,
    ToolFinished,
    ToolProtocolChanged,
    ToolStarted,
    ToolStatus,
    UserMessage,
    error_class_of,
)
from keel.agent.core.state import SessionState, call_signature
from keel.agent.core.strategies.base import Strategy, Workspace
from keel.agent.core.strategies.ending import Ending
from keel.prompts import render
from keel.tools.base import ToolError, ToolKind, ToolResult
from keel.tools.registry import ToolRegistry, parse_arguments

if TYPE_CHECKING:
    from keel.agent.core.services import SessionServices

MAX_CONTEXT_RETRIES = 3


class FinalAnswer(Exception):
    """The model answered without calling a tool: the task ends with that answer (flow, not an error)."""

    def __init__(self, final_message: str) -> None:
        super().__init__(final_message)
        self.final_message = final_message


class AgentLoop:
    """Runs steps for one task; it reads the session's state and changes it only by emitting events. Flow
    leaves it by FinalAnswer or LimitExceeded."""

    def __init__(self, services: SessionServices) -> None:
        """The session's services; their strategy and registry change when the session moves its model."""
        self.services = services
        self.current = services.callbacks.current
        self.emit = services.callbacks.emit
        self.model: ChatModel = services.model
        self.tool_context = services.tool_context
        self.context = services.context
        self.approvals = services.approvals
        self.ask_person = services.ask_person
        self.checkpoints = services.checkpoints
        self.policy = services.policy
        self.hooks = services.hooks

    @property
    def registry(self) -> ToolRegistry:
        return self.services.registry

    def strategy(self) -> Strategy:
        """The session's strategy now (the loop asks at every step)."""
        return self.services.strategy

    @property
    def state(self) -> SessionState:
        return self.current()

    def workspace(self) -> Workspace:
        """What the strategy sees now."""
        facts = self.context.system_prompt.facts
        return Workspace(
            state=self.state,
            registry=self.registry,
            tool_context=self.tool_context,
            files=facts.files,
            approvals=self.approvals,
            test_command=facts.test_command if facts.test_command_runs else None,
            window=self.context.window,
        )

    async def run(self) -> None:
        before = snapshot(self.tool_context)
        prepared = await self.strategy().prepare_task(self.workspace())
        self._emit_seen(prepared, before)
        while True:
            await self.step()

    async def step(self) -> None:
        """Limits, one model call, the strategy's reading of the reply, the calls it asked for; a reply
        without a call ends the task unless it was a failed attempt at one or the strategy has something to
        say first (README: "How a task ends")."""
        self.state.check_limits()
        strategy = self.strategy()
        reply = await self._call_model(strategy)
        read = strategy.read(reply, self.workspace())
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
            stop_after_corrections(self.state, self.policy, read.problem)
            correction = strategy.correction(read.problem, read.tool, self.workspace())
            self.emit(UserMessage(text=correction, origin="keel", purpose="correction"))
            return
        if not read.calls:
            before = snapshot(self.tool_context)
            await self._end(await strategy.before_end(reply.text, self.workspace()), before)
            return
        then: list[UserMessage] = []
        results: list[ToolFinished] = []
        images: list[ImageAttached] = []
        for number, call in enumerate(read.calls):
            unrun = read.not_run if number == 0 else []
            note = render("calls_not_run", names=unrun) if unrun else ""
            finished, said = await self._execute(strategy, call, note, images)
            results.append(finished)
            then += said
        for image in images:  # after every result: a tool result must follow its call's message
            self.emit(image)
        # after their results: no call is left unanswered
        stop_after_unknown_calls(self.state, self.policy, self.registry.names(), read.calls)
        if then:
            self.emit(then[0])
            return
        before = snapshot(self.tool_context)
        await self._end(await strategy.after_calls(reply, results, self.workspace()), before)

    def _emit_seen(self, events: Sequence[AnyEvent], before: Seen) -> None:
        """A strategy's events; the files it gave the model since `before`, marked read, go on its first
        message (with the task, or again after failed checks), so a resume knows them too."""
        seen = seen_since(self.tool_context, before)
        for event in events:
            if seen and isinstance(event, UserMessage):
                event, seen = event.model_copy(update={"seen": seen}), []
            self.emit(event)

    async def _end(self, ending: Ending | None, before: Seen) -> None:
        """keel's events of a strategy's ending, then the task's end when it gives the final answer, unless a
        Stop hook blocks it (the model is told why and goes on)."""
        if ending is None:
            return
        self._emit_seen(ending.events, before)
        go_on = None if ending.answer is None else await self.hooks.stop(ending.answer)
        if go_on is not None:
            self.emit(UserMessage(text=go_on, origin="keel"))
        elif ending.answer is not None:
            raise FinalAnswer(ending.answer)

    async def _call_model(self, strategy: Strategy) -> ModelReply:
        overflows = 0
        while True:
            await self.context.fit()
            self.state.check_limits()  # summarizing costs tokens too
            request = self.context.build_request(
                self.state,
                strategy.system_template(self.state),
                strategy.request_history(self.state),
            )
            # None leaves the tools to the text protocol; [] offers none at all
            offered = self.context.tool_schemas(self.state.tool_protocol)
            tools = strategy.request_tools(self.state, offered)
            sampling = strategy.request_sampling(self.state)
            try:
                return await self.model.complete(request, tools, self._on_delta, sampling=sampling)
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

    async def _execute(
        self, strategy: Strategy, call: ToolCall, note: str, images: list[ImageAttached]
    ) -> tuple[ToolFinished, list[UserMessage]]:
        """Run one call and log its result; `note` is appended to the result (calls of the reply not run),
        an image it read to `images`. Returns the result's event and what the strategy has to say after the
        reply's results."""
        started = time.monotonic()
        shown_args = _arguments_for_display(call.arguments)
        signature = call_signature(call.name, shown_args)
        repeats = self.state.repeats_of(signature)
        stop_repeats(call.name, repeats)
        repeat = strategy.on_repeated_call(call.name, signature, repeats, self.workspace())
        self.emit(ToolStarted(call_id=call.id, name=call.name, arguments=shown_args))
        before = snapshot(self.tool_context)
        status: ToolStatus = "ok"
        if repeat is not None and repeat.result is not None:
            result = repeat.result
        else:
            try:
                result, status = await self._validated_run(call, shown_args)
            except ToolError as exc:
                result, status = ToolResult(output=f"Error: {exc}", ok=False), "error"
            if status in ("ok", "unchanged"):  # what PostToolUse hooks say goes with the result
                said = await self.hooks.after_tool(
                    call.id, call.name, shown_args, result.output, True
                )
                note = "\n\n".join(filter(None, [said, note]))
        if repeats >= LOOP_WARN and repeat is None:  # the strategy's answer replaces the warning
            warning = render("loop_warning", name=call.name, count=repeats, limit=LOOP_STOP)
            note = f"{warning}\n\n{note}" if note else warning
        if note:
            result = result.model_copy(update={"output": f"{result.output}\n\n{note}"})
        finished = ToolFinished(
            call_id=call.id,
            name=call.name,
            status=status,
            output=result.output,
            diff=result.diff,
            duration_ms=int((time.monotonic() - started) * 1000),
            seen=seen_since(self.tool_context, before),
        )
        self.emit(finished)
        if status == "ok" and (update := todo_update(call.name, shown_args, call.id)):
            self.emit(update)
        if result.image is not None:
            images.append(attached(result.image, "tool", call.id))
        return finished, [repeat.then] if repeat is not None and repeat.then is not None else []

    async def _validated_run(
        self, call: ToolCall, shown_args: dict[str, Any]
    ) -> tuple[ToolResult, ToolStatus]:
        parsed = call.arguments if "_raw" in shown_args else shown_args  # decoded once, for display
        tool, args = self.registry.validate(call.name, parsed)
        if self.state.plan_mode and (refused := plan_mode_refusal(tool.name)) is not None:
            return ToolResult(output=refused, ok=False), "denied"
        if (blocked := await self.hooks.before_tool(call.id, call.name, shown_args)) is not None:
            return ToolResult(output=render("hook_blocked", reason=blocked), ok=False), "denied"
        refusal = await self.approvals.refusal(call, tool, shown_args, self.ask_person)
        if refusal is not None:
            return ToolResult(output=refusal, ok=False), "denied"
        if self.checkpoints is not None and tool.kind is not ToolKind.READ:
            await self.checkpoints.before_change(self.state.task_prompt)
        result = await self.registry.run(tool, args, self.tool_context)
        return result, ("unchanged" if result.unchanged else "ok") if result.ok else "error"


def _arguments_for_display(raw: str) -> dict[str, Any]:
    """The call's arguments as an object for events; malformed JSON is shown raw."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"_raw": raw}
