"""A session log as ATIF v1.8 trajectories: one per segment between self-summaries, linked in a chain.

Built from the log alone, by folding its events as a resume does: each segment after a summary starts
from the summary block the model saw, then the messages the summary kept (marked as copied context).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from atif import (
    Agent,
    ContentPart,
    ImageSource,
    Observation,
    ObservationResult,
    Step,
    SubagentTrajectoryRef,
    Trajectory,
)
from atif import ToolCall as AtifToolCall

from keel import __version__
from keel.agent.core.api.sessions import (
    INTERRUPTED_NOTE,
    UNFINISHED_RESULT,
    Message,
    SessionState,
    apply,
    read_events,
    summary_block,
    unanswered_calls,
)
from keel.agent.core.errors import UsageError
from keel.agent.core.protocol import (
    AnyEvent,
    AssistantMessage,
    ContextSummarized,
    Error,
    ImageAttached,
    PlanModeChanged,
    SessionStarted,
    SubagentFinished,
    TaskFinished,
    TodoUpdated,
    ToolCall,
    ToolFinished,
    TurnAborted,
    UserMessage,
)
from keel.agent.harness.rollouts.atif_metrics import call_metrics, final_metrics
from keel.agent.harness.rollouts.call_tokens import PromptRebuilder
from keel.prompts import render

SCHEMA_VERSION = "ATIF-v1.8"
NOTES = (
    "Exported by keel from its session log. keel's system prompt and the status line it appends to each "
    "request are not in the log, so not here. A segment ends where keel summarized its context: its last "
    "agent step is the summary the model wrote (extra.keel_event = context.summarized, its own request); "
    "the continuation starts with the summary block the model saw next, then the messages the summary "
    "kept (is_copied_context)."
)


def segment_name(first: str, index: int) -> str:
    """The file name of segment `index` of a chain whose first file is `first`: out.json, out.cont-1.json…"""
    if index == 0:
        return first
    stem, dot, suffix = first.rpartition(".") if first.endswith(".json") else (first, "", "")
    return f"{stem}.cont-{index}{dot}{suffix}"


def _timestamp(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def _arguments(call: ToolCall) -> AtifToolCall:
    """ATIF wants an object; arguments that are not one keep their raw text in `extra`."""
    try:
        parsed = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict):
        return AtifToolCall(tool_call_id=call.id, function_name=call.name, arguments=parsed)
    return AtifToolCall(
        tool_call_id=call.id,
        function_name=call.name,
        arguments={},
        extra={"raw_arguments": call.arguments},
    )


class _Builder:
    """Walks the events once, folding the state beside them, and cuts a segment at each summary."""

    def __init__(self, first: str) -> None:
        self.first = first
        self.state = SessionState(session_id="")
        self.session_id = ""
        self.agent_model: str | None = None
        self.model: str | None = None
        self.window = 32_768
        self.status = "unfinished"
        self.segments: list[list[Step]] = [[]]
        self.by_call: dict[str, Step] = {}
        self.child: SubagentFinished | None = None  # the subagent whose task call ends next
        self.prompts = PromptRebuilder()  # each call's whole prompt ids, from what the log holds

    @property
    def steps(self) -> list[Step]:
        return self.segments[-1]

    def add(self, event: AnyEvent) -> None:
        before, self.state = self.state, apply(self.state, event)
        extra: dict[str, Any] | None = None
        match event:
            case SessionStarted():
                self.prompts.reset()
                self.session_id = self.session_id or event.session_id
                self.agent_model = self.agent_model or event.model
                self.model, self.window = event.model, event.context_window
            case UserMessage():
                if event.origin == "keel":
                    extra = {"origin": "keel", "purpose": event.purpose}
                self._step(event.ts, source="user", message=event.text, extra=extra)
            case AssistantMessage():
                self._agent(event)
            case ToolFinished():
                extra = {"status": event.status, "duration_ms": event.duration_ms}
                if event.diff:
                    extra["diff"] = event.diff
                child, self.child = self.child, None
                self._result(event.call_id, event.output, extra, _child_ref(child))
            case SubagentFinished():
                self.child = event
            case ContextSummarized():
                self._summarized(event)
            case TurnAborted():
                for call in unanswered_calls(before.history):
                    self._result(call.id, UNFINISHED_RESULT, {"status": "unfinished"})
                if before.task_open and event.reason == "interrupted":
                    extra = {"origin": "keel", "purpose": "interrupted"}
                    self._step(event.ts, source="user", message=INTERRUPTED_NOTE, extra=extra)
            case Error():
                extra = {
                    "keel_event": "error",
                    "error_class": event.error_class,
                    "fatal": event.fatal,
                }
                self._step(event.ts, source="system", message=event.message, extra=extra)
            case TodoUpdated():  # the model's checklist, as its todo call left it
                items = [item.model_dump() for item in event.items]
                extra = {"keel_event": "todo.updated", "call_id": event.call_id, "items": items}
                message = render("todo_list", items=event.items)
                self._step(event.ts, source="system", message=message, extra=extra)
            case PlanModeChanged() if before.plan_mode != event.active:  # the model is told
                extra = {
                    "origin": "keel",
                    "keel_event": "plan_mode.changed",
                    "active": event.active,
                }
                message = render("plan_mode", active=event.active)
                self._step(event.ts, source="user", message=message, extra=extra)
            case ImageAttached():
                self._image(event)
            case TaskFinished():
                self.status = event.status

    def _step(self, ts: float | None, **fields: Any) -> Step:
        step = Step(
            step_id=len(self.steps) + 1,
            timestamp=_timestamp(ts) if ts is not None else None,
            **fields,
        )
        self.steps.append(step)
        return step

    def _model_name(self) -> str | None:
        return self.model if self.model != self.agent_model else None

    def _agent(self, event: AssistantMessage) -> None:
        step = self._step(
            event.ts,
            source="agent",
            model_name=self._model_name(),
            message=event.text,
            tool_calls=[_arguments(call) for call in event.tool_calls] or None,
            metrics=call_metrics(
                event.usage, event.cost, event.tokens, self.prompts.whole(event.tokens)
            ),
            llm_call_count=1,
        )
        self.by_call.update({call.id: step for call in event.tool_calls})

    def _result(
        self,
        call_id: str,
        content: str,
        extra: dict[str, Any] | None,
        child: list[SubagentTrajectoryRef] | None = None,
    ) -> None:
        step = self.by_call.get(call_id)
        if step is None:
            return
        result = ObservationResult(
            source_call_id=call_id, content=content, extra=extra, subagent_trajectory_ref=child
        )
        if step.observation is None:
            step.observation = Observation(results=[result])
        else:
            step.observation.results.append(result)

    def _image(self, event: ImageAttached) -> None:
        """An image joins what it came with: the prompt's user step, or read_file's observation."""
        part = _image_part(event)
        if event.origin == "user":
            users = [step for step in self.steps if step.source == "user"]
            if users:
                users[-1].message = [*_parts(users[-1].message), part]
            return
        step = self.by_call.get(event.call_id)
        for result in step.observation.results if step and step.observation else []:
            if result.source_call_id == event.call_id:
                result.content = [*_parts(result.content or ""), part]

    def _summarized(self, event: ContextSummarized) -> None:
        """The summary closes the segment; the next opens with what the model saw after it."""
        self._step(
            event.ts,
            source="agent",
            model_name=self._model_name(),
            message=event.summary,
            metrics=call_metrics(
                event.usage, event.cost, event.tokens, self.prompts.whole(event.tokens)
            ),
            llm_call_count=1,
            extra={
                "keel_event": "context.summarized",
                "reason": event.reason,
                "tokens_before": event.tokens_before,
                "tokens_after": event.tokens_after,
                "kept_messages": event.kept_messages,
            },
        )
        self.segments.append([])
        self.by_call = {}
        block = summary_block(self.state, self.window)
        self._step(event.ts, source="user", message=block, extra={"keel": "summary_block"})
        for message in self.state.history:
            self._copied(message)

    def _copied(self, message: Message) -> None:
        if message.role == "tool":
            self._result(message.tool_call_id or "", message.content, None)
        elif message.role == "assistant":
            step = self._step(
                None,
                source="agent",
                message=message.content,
                tool_calls=[_arguments(call) for call in message.tool_calls] or None,
                is_copied_context=True,
            )
            self.by_call.update({call.id: step for call in message.tool_calls})
        elif message.role == "user":
            images = [
                ContentPart(type="image", source=_image_source(image.media_type, image.data))
                for image in message.images
            ]
            text: str | list[ContentPart] = (
                [*_parts(message.content), *images] if images else message.content
            )
            self._step(None, source="user", message=text, is_copied_context=True)

    def trajectories(self, extra: dict[str, Any] | None) -> list[Trajectory]:
        count = len(self.segments)
        agent = Agent(name="keel", version=__version__, model_name=self.agent_model)
        return [
            Trajectory(
                schema_version=SCHEMA_VERSION,
                session_id=self.session_id,
                trajectory_id=self.session_id if index == 0 else f"{self.session_id}.cont-{index}",
                agent=agent,
                steps=steps,
                notes=NOTES,
                final_metrics=final_metrics(steps),
                continued_trajectory_ref=(
                    segment_name(self.first, index + 1) if index + 1 < count else None
                ),
                extra={
                    "keel": {"segment": index, "segments": count, "status": self.status},
                    **(extra or {}),
                },
            )
            for index, steps in enumerate(self.segments)
        ]


def _parts(content: str | list[ContentPart]) -> list[ContentPart]:
    """A message or result as ATIF content parts (text becomes one text part)."""
    if isinstance(content, str):
        return [ContentPart(type="text", text=content)] if content else []
    return content


def _image_source(media_type: str, data: str) -> ImageSource:
    """The image inline, as a data: URL (ATIF's `path` takes a URL), so the trajectory stands alone."""
    return ImageSource.model_validate(
        {"media_type": media_type, "path": f"data:{media_type};base64,{data}"}
    )


def _image_part(event: ImageAttached) -> ContentPart:
    """The image as a content part; one that was not sent as the note the model read instead."""
    if not event.data:
        return ContentPart(type="text", text=render("image_attached", event=event))
    return ContentPart(type="image", source=_image_source(event.media_type, event.data))


def _child_ref(child: SubagentFinished | None) -> list[SubagentTrajectoryRef] | None:
    """A `task` call's link to its child session's trajectory: the file `keel export` writes for it."""
    if child is None:
        return None
    usage = child.usage.model_dump()
    extra = {"agent": child.agent, "status": child.status, "usage": usage}
    return [
        SubagentTrajectoryRef(
            trajectory_path=f"{child.child_session_id}.json",
            session_id=child.child_session_id,
            extra=extra,
        )
    ]


def session_trajectories(
    events: Sequence[AnyEvent], first: str, extra: dict[str, Any] | None = None
) -> list[Trajectory]:
    """The session's trajectories in chain order; `first` is the first one's file name (the links name
    the others after it), `extra` goes into each one's root `extra` (a reward, say)."""
    builder = _Builder(first)
    for event in events:
        builder.add(event)
    if not builder.session_id:
        raise UsageError("the session log has no session.started event; it is not a keel session")
    return builder.trajectories(extra)


def log_trajectories(
    log: Path, first: str | None = None, extra: dict[str, Any] | None = None
) -> list[Trajectory]:
    """The trajectories of a session log file (the first named after the session when `first` is None)."""
    return session_trajectories(read_events(log), first or f"{log.stem}.json", extra)


def write_trajectories(trajectories: Sequence[Trajectory], first: Path) -> list[Path]:
    """Write a chain as `first` and its siblings (segment_name); returns the paths in chain order."""
    first.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for index, trajectory in enumerate(trajectories):
        path = first.with_name(segment_name(first.name, index))
        path.write_text(json.dumps(trajectory.to_json_dict(), indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
