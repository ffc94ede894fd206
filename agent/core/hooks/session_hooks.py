"""The one handle the loop and the session hold on hooks: each point of a session runs the commands
configured for it, logs each run as a `hook.ran` event and says what they decided, in Claude Code's terms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keel.agent.core.hooks.config import HookEvent, HookGroup, HooksTable
from keel.agent.core.hooks.runner import HookRun, run_hook
from keel.agent.core.hooks.tool_input import (
    CLAUDE_NAMES,
    claude_tool_input,
    tool_names,
    tool_response,
)
from keel.agent.core.protocol import AnyEvent, HookRan
from keel.tools.base import ToolContext

BLOCKED = 2  # the exit code that blocks, as in Claude Code


@dataclass
class Verdict:
    """What the commands of one point decided together: blocked (and why), context to add."""

    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        return "\n".join(self.reasons)


def _verdict(event: HookEvent, run: HookRun) -> Verdict:
    """One run read as Claude Code reads it: exit 2 blocks with stderr as the reason; exit 0 may print JSON
    (`decision: "block"`, `hookSpecificOutput.permissionDecision: "deny"`, `additionalContext`) or, at
    SessionStart and UserPromptSubmit, plain text that becomes context."""
    if run.exit_code == BLOCKED and event != "SessionStart":  # a session's start cannot be blocked
        reason = run.stderr.strip() or f"a {event} hook blocked it (exit code 2) without saying why"
        return Verdict(blocked=True, reasons=[reason])
    if run.exit_code != 0:  # a failed hook: its stderr is in hook.ran for the person
        return Verdict()
    answer = run.answer()
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    verdict = Verdict()
    if context := specific.get("additionalContext"):
        verdict.context.append(str(context))
    elif not answer and event in ("SessionStart", "UserPromptSubmit") and run.stdout.strip():
        verdict.context.append(run.stdout.strip())
    reason = str(specific.get("permissionDecisionReason") or answer.get("reason") or "")
    if (
        event == "PreToolUse"
        and specific.get("permissionDecision") == "deny"
        or answer.get("decision") in ("block", "deny")
    ):
        verdict.blocked = True
    elif answer.get("continue") is False:
        verdict.blocked, reason = True, str(answer.get("stopReason") or reason)
    if verdict.blocked:
        verdict.reasons.append(reason or f"a {event} hook blocked it without saying why")
    return verdict


class Hooks:
    """Runs the configured commands of each point; with none configured every method returns at once."""

    def __init__(
        self,
        table: HooksTable,
        ctx: ToolContext | None = None,
        session_id: str = "",
        transcript: Path | None = None,
        emit: Callable[[AnyEvent], None] | None = None,
    ) -> None:
        self.table = table
        self.ctx = ctx
        self.session_id = session_id
        self.transcript = transcript
        self.emit = emit
        self._context: list[str] = []  # SessionStart's context, given with the next prompt
        self._stop_active = False  # the task goes on because a Stop hook blocked its end

    async def session_start(self, source: str) -> None:
        """SessionStart (`source`: startup or resume); what it prints goes with the next prompt."""
        verdict = await self._run("SessionStart", {"source": source})
        self._context += verdict.context

    async def prompt_submitted(self, prompt: str) -> tuple[str, str | None]:
        """UserPromptSubmit: the prompt with the context hooks added, and why it is blocked (None: it is not)."""
        self._stop_active = False
        verdict = await self._run("UserPromptSubmit", {"prompt": prompt})
        if verdict.blocked:
            return prompt, verdict.reason
        context, self._context = [*self._context, *verdict.context], []
        return "\n\n".join([prompt, *context]), None

    async def before_tool(self, call_id: str, name: str, arguments: dict[str, Any]) -> str | None:
        """PreToolUse: why the call must not run, or None."""
        verdict = await self._run("PreToolUse", {}, call_id, name, arguments)
        return verdict.reason if verdict.blocked else None

    async def after_tool(
        self, call_id: str, name: str, arguments: dict[str, Any], output: str, ok: bool
    ) -> str:
        """PostToolUse: what the hooks tell the model about the call's result ("" for nothing)."""
        if not self.table.get("PostToolUse"):
            return ""  # the common case: no hook, and no copy of the result made for one
        response = {"tool_response": tool_response(name, arguments, output, ok)}
        verdict = await self._run("PostToolUse", response, call_id, name, arguments)
        return "\n".join([*verdict.reasons, *verdict.context])

    async def stop(self, final_message: str) -> str | None:
        """Stop: why the agent must go on (the model is told), or None to let it end."""
        payload = {"stop_hook_active": self._stop_active, "last_assistant_message": final_message}
        verdict = await self._run("Stop", payload)
        self._stop_active = verdict.blocked
        return verdict.reason if verdict.blocked else None

    async def _run(
        self,
        event: HookEvent,
        fields: dict[str, Any],
        call_id: str = "",
        tool: str = "",
        arguments: dict[str, Any] | None = None,
    ) -> Verdict:
        groups = [g for g in self.table.get(event, []) if not tool or g.matches(tool_names(tool))]
        together = Verdict()
        if not groups or self.ctx is None:
            return together
        for group in groups:
            payload = self._payload(event, group, fields, call_id, tool, arguments or {})
            for command in group.commands():
                run = await run_hook(command.command, payload, command.timeout or 60, self.ctx)
                verdict = _verdict(event, run)
                together.blocked |= verdict.blocked
                together.reasons += verdict.reasons
                together.context += verdict.context
                self._ran(event, command.command, tool, call_id, run, verdict)
        return together

    def _payload(
        self,
        event: HookEvent,
        group: HookGroup,
        fields: dict[str, Any],
        call_id: str,
        tool: str,
        arguments: dict[str, Any],
    ) -> dict[str, Any]:
        """The JSON a command reads on stdin, with Claude Code's field names."""
        assert self.ctx is not None
        payload: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript or ""),
            "cwd": str(self.ctx.root),
            "permission_mode": "default",
            "hook_event_name": event,
        }
        if tool:
            claude = group.tool_names == "claude"
            payload["tool_name"] = CLAUDE_NAMES.get(tool, tool) if claude else tool
            payload["tool_input"] = (
                claude_tool_input(tool, arguments, self.ctx.root) if claude else arguments
            )
            payload["tool_use_id"] = call_id
        return payload | fields

    def _ran(
        self,
        event: HookEvent,
        command: str,
        tool: str,
        call_id: str,
        run: HookRun,
        verdict: Verdict,
    ) -> None:
        if self.emit is None:
            return
        said = verdict.reason if verdict.blocked else run.problem or run.stderr.strip()
        self.emit(
            HookRan(
                hook_event=event,
                command=command,
                tool_name=tool,
                call_id=call_id,
                exit_code=run.exit_code,
                blocked=verdict.blocked,
                reason=said if run.exit_code != 0 or verdict.blocked else "",
                duration_ms=run.duration_ms,
            )
        )
