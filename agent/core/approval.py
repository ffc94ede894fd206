"""The approval policy: per tool call, allow it, ask a person, or deny it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal

from keel.agent.core.config import ApprovalPolicy
from keel.agent.core.protocol import ApprovalDecision, ToolCall
from keel.prompts import render
from keel.tools.base import Tool, ToolKind

Verdict = Literal["allow", "ask", "deny"]
AskPerson = Callable[[ToolCall, Tool[Any], dict[str, Any]], Awaitable[ApprovalDecision | None]]

_RULES: dict[ApprovalPolicy, dict[ToolKind, Verdict]] = {
    "read-only": {ToolKind.READ: "allow", ToolKind.EDIT: "deny", ToolKind.EXEC: "deny"},
    "auto-edit": {ToolKind.READ: "allow", ToolKind.EDIT: "allow", ToolKind.EXEC: "ask"},
    "full-auto": {ToolKind.READ: "allow", ToolKind.EDIT: "allow", ToolKind.EXEC: "allow"},
}


def _none_allowed() -> Collection[str]:
    return ()


@dataclass
class Approvals:
    """A session's policy plus the tools a person allowed for the rest of the session: `allowed_for_session`
    reads them from the session's state, where each person's answer (approval.decided) is folded."""

    policy: ApprovalPolicy
    allowed_for_session: Callable[[], Collection[str]] = _none_allowed

    def verdict(self, tool_name: str, kind: ToolKind) -> Verdict:
        if tool_name in self.allowed_for_session():
            return "allow"
        return _RULES[self.policy][kind]

    def denial(self, tool_name: str, kind: ToolKind) -> str:
        """What the model is told when the policy refuses a call outright."""
        return render(
            "approval_denied", why="policy", policy=self.policy, kind=kind.value, tool=tool_name
        )

    @staticmethod
    def unattended(tool_name: str) -> str:
        """What the model is told when a call needs a person and nobody is there to answer."""
        return render("approval_denied", why="headless", tool=tool_name)

    async def refusal(
        self,
        call: ToolCall,
        tool: Tool[Any],
        shown_args: dict[str, Any],
        ask_person: AskPerson | None,
    ) -> str | None:
        """None when the call may run; otherwise what the model is told instead (a person is asked when
        the policy says so and one is there)."""
        verdict = self.verdict(tool.name, tool.kind)
        if verdict == "allow":
            return None
        if verdict == "deny":
            return self.denial(tool.name, tool.kind)
        if ask_person is None:
            return self.unattended(tool.name)
        decision = await ask_person(call, tool, shown_args)
        if decision in ("allow_once", "allow_session"):
            return None
        return render("approval_denied", why="person", tool=tool.name)
