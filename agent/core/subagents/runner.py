"""Child sessions for the `task` tool: each with its own context, log, tools and a share of the parent
task's budget; its tokens are counted in the parent's (subagent.finished), its answer is the call's result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keel.agent.core.approval import AskPerson
from keel.agent.core.protocol import (
    AnyEvent,
    ApprovalRequested,
    Approve,
    FinishStatus,
    SubagentFinished,
    SubagentStarted,
    TaskFinished,
    TokenUsage,
    ToolCall,
    UserPrompt,
)
from keel.agent.core.subagents.definitions import AgentDefinition, find_definitions
from keel.agent.core.subagents.tool_grant import Grant, grant_tools
from keel.prompts import render
from keel.tools.base import ToolError, ToolResult
from keel.tools.exec.sandbox_policy import SandboxMode
from keel.tools.task import TaskArgs

if TYPE_CHECKING:
    from keel.agent.core.git.worktrees import Worktree
    from keel.agent.core.session import Session
    from keel.agent.core.settings import SessionSettings
    from keel.agent.core.state import SessionState

MIN_SHARE = 2_000  # below this a child could not read a file and answer
MAX_ANSWER_CHARS = 30_000
CLAUDE_CODE_MODELS = frozenset(
    {"", "inherit", "sonnet", "opus", "haiku"}
)  # aliases: the parent's model


class SubagentRunner:
    """Runs the `task` calls of one parent session; the definitions are read once, when it starts."""

    def __init__(
        self,
        settings: SessionSettings,
        emit: Callable[[AnyEvent], None],
        current: Callable[[], SessionState],
        tool_names: Callable[[], list[str]],
        ask: AskPerson | None = None,
    ) -> None:
        """`ask` asks the parent's person about a call (None: nobody is there, a child's call that needs
        approval is denied as in any headless run)."""
        from keel.agent.core.trust import is_trusted

        self.settings = settings
        self.emit = emit
        self.current = current
        self.tool_names = tool_names
        self.ask = ask
        self.repo = _repo_top(settings.cwd.resolve())
        self.definitions, self.problems = find_definitions(self.repo)
        self.repo_trusted = is_trusted(self.repo)

    def agents_text(self) -> str:
        """The agents the model may name, for the task tool's description ("" when there are none)."""
        agents = sorted(self.definitions.values(), key=lambda d: d.name)
        return render("task_agents", agents=agents) if agents else ""

    def definition(self, name: str | None) -> AgentDefinition | None:
        if not name:
            return None
        if found := self.definitions.get(name):
            return found
        known = ", ".join(sorted(self.definitions)) or "none are defined"
        broken = [p for p in self.problems if p.path.stem == name]
        why = f" ({broken[0].path} could not be read: {broken[0].problem})" if broken else ""
        raise ToolError(
            f"there is no agent named {name!r}{why}; the agents are: {known}. "
            "Omit `agent` for a general read-only helper."
        )

    def share(self) -> int | None:
        """The child's budget: half of what the parent task has left (None: the task has no budget)."""
        state = self.current()
        if state.budget is None:
            return None
        left = state.budget - state.task_tokens
        if left // 2 < MIN_SHARE:
            raise ToolError(
                f"the task's budget has {max(left, 0)} tokens left, too few to share with a subagent; "
                "do the work yourself, or finish"
            )
        return left // 2

    async def run(self, args: TaskArgs) -> ToolResult:
        """One child session from start to end; its result, or a ToolError the model can act on."""
        definition = self.definition(args.agent)
        may_widen = definition is None or definition.origin == "user" or self.repo_trusted
        grant = grant_tools(definition, self.tool_names(), may_widen)
        if not grant.tools:
            raise ToolError(f"agent {args.agent!r} would get no tool this session has")
        budget = self.share()
        worktree = await self._worktree(definition, grant)
        settings = self._child_settings(definition, grant, budget, worktree)
        return await self._supervise(args, definition, grant, settings, worktree)

    async def _worktree(self, definition: AgentDefinition | None, grant: Grant) -> Worktree | None:
        """A fresh git worktree when the definition asks for one and the child may change files."""
        if definition is None or definition.isolation != "worktree" or not grant.writes:
            return None
        from keel.agent.core.errors import KeelError
        from keel.agent.core.git.worktrees import create_worktree

        try:
            return await create_worktree(self.settings.cwd, f"subagent-{definition.name}")
        except KeelError as exc:
            raise ToolError(
                f"could not give agent {definition.name!r} its own git worktree: {exc}"
            ) from None

    def _child_settings(
        self,
        definition: AgentDefinition | None,
        grant: Grant,
        budget: int | None,
        worktree: Worktree | None,
    ) -> SessionSettings:
        parent = self.settings
        update: dict[str, Any] = {
            "cwd": worktree.path if worktree is not None else parent.cwd,
            "interactive": self.ask is not None,
            "budget": budget,
            "auto_budget": False,
            "mcp_servers": {},
            "notices": [],
            "checkpoints": parent.checkpoints and grant.writes and worktree is None,
        }
        if definition is not None and definition.max_turns:
            update["max_steps"] = definition.max_turns
        if definition is not None and definition.model not in CLAUDE_CODE_MODELS:
            provider = parent.model.partition("/")[0]
            same_server = definition.model.partition("/")[0] == provider
            update["model"] = definition.model
            update["api_base"] = parent.api_base if same_server else None
            update["context_window"] = None
        if not grant.writes:  # whatever runs anyway (a linter) writes nothing either
            update["sandbox"] = parent.sandbox.model_copy(
                update={"mode": SandboxMode.READ_ONLY, "fallback": "refuse"}
            )
        return parent.model_copy(update=update)

    async def _supervise(
        self,
        args: TaskArgs,
        definition: AgentDefinition | None,
        grant: Grant,
        settings: SessionSettings,
        worktree: Worktree | None,
    ) -> ToolResult:
        """Start the child, wait for its end, and account for it in the parent whatever happens."""
        from keel.agent.core.session import Session
        from keel.tools import default_tools

        tools = [tool for tool in default_tools() if tool.name in grant.tools]
        child = Session(settings, tools=tools)
        name = definition.name if definition is not None else ""
        self.emit(
            SubagentStarted(
                child_session_id=child.id,
                agent=name,
                description=args.description,
                tools=grant.tools,
                worktree=str(worktree.path) if worktree is not None else "",
            )
        )
        end: TaskFinished | None = None
        branch, patch = "", None
        try:
            end = await self._run_child(child, args, definition, grant)
        finally:
            await child.close()
            state = child.state
            status: FinishStatus = end.status if end is not None else "interrupted"
            if worktree is not None:
                branch, patch = await _keep_changes(worktree)
            self.emit(
                SubagentFinished(
                    child_session_id=child.id,
                    agent=name,
                    status=status,
                    final_message=end.final_message if end is not None else "",
                    usage=state.usage,
                    cost=state.cost,
                    branch=branch,
                )
            )
        return _result(child.id, end, state.usage, grant, branch, patch)

    async def _run_child(
        self, child: Session, args: TaskArgs, definition: AgentDefinition | None, grant: Grant
    ) -> TaskFinished:
        """The child's one task, to its session.finished; its calls that need the person are asked here."""
        child.start()
        text = render(
            "subagent_task",
            role=definition.prompt if definition is not None else "",
            description=args.description,
            prompt=args.prompt,
            tools=grant.tools,
            writes=grant.writes,
        )
        child.submit(UserPrompt(text=text))
        relays: set[asyncio.Task[None]] = set()
        try:
            async for event in child.events():
                if isinstance(event, ApprovalRequested):
                    relay = asyncio.create_task(self._relay(child, event))
                    relays.add(relay)
                    relay.add_done_callback(relays.discard)
                elif isinstance(event, TaskFinished):
                    return event
        finally:
            for relay in relays:
                relay.cancel()
        raise ToolError("the subagent's session closed before its task ended")

    async def _relay(self, child: Session, request: ApprovalRequested) -> None:
        """Ask the parent's person about a child's call (its id prefixed by the child's session id, so the
        answer finds it), and hand the answer to the child."""
        assert self.ask is not None
        call = ToolCall(
            id=f"{child.id}/{request.call_id}",
            name=request.name,
            arguments=json.dumps(request.arguments),
        )
        decision = await self.ask(call, child.registry.get(request.name), request.arguments)
        child.submit(Approve(call_id=request.call_id, decision=decision or "deny"))


def _repo_top(cwd: Path) -> Path:
    """The nearest folder holding `.git` (the repository's top), else cwd: found without starting git, since
    every session looks for its agent definitions when it is made."""
    return next((folder for folder in (cwd, *cwd.parents) if (folder / ".git").exists()), cwd)


async def _keep_changes(worktree: Worktree) -> tuple[str, Path | None]:
    """Commit the child's changes on its branch and remove its worktree; a branch with none is deleted."""
    from keel.agent.core.git.worktrees import delete_branch_at, finish_worktree

    patch = await finish_worktree(worktree, message="keel: subagent changes")
    if patch is None:
        await delete_branch_at(worktree, worktree.base)
        return "", None
    return worktree.branch, patch


def _result(
    child: str,
    end: TaskFinished | None,
    usage: TokenUsage,
    grant: Grant,
    branch: str,
    patch: Path | None,
) -> ToolResult:
    answer = end.final_message if end is not None else ""
    if len(answer) > MAX_ANSWER_CHARS:
        answer = answer[:MAX_ANSWER_CHARS] + "\n[… the rest of the answer was cut]"
    text = render(
        "subagent_result",
        status=end.status if end is not None else "interrupted",
        reason=end.reason if end is not None else "",
        answer=answer,
        branch=branch,
        patch=str(patch) if patch else "",
        withheld=grant.withheld,
        unknown=grant.unknown,
        child=child,
        tokens=usage.total_tokens,
    )
    return ToolResult(output=text, ok=end is not None and end.status == "completed")
