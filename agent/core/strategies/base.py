"""The hooks the loop calls for what differs by kind of model: what goes in context before the first call, the
tools offered, how a reply is read, how a failed call is corrected, what a repeated call gets, and what happens
instead of ending a task. The loop (agent/core/loop.py) calls only these; each kind of model has its own file."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from keel.agent.core.approval import Approvals
from keel.agent.core.config import LoopSettings
from keel.agent.core.context.files_that_matter import files_named_by
from keel.agent.core.messages import Message
from keel.agent.core.model.reply import ModelReply
from keel.agent.core.model.sampling import CallSampling
from keel.agent.core.profile import ModelProfile
from keel.agent.core.protocol import AnyEvent, ToolFinished, UserMessage, VerificationCheck
from keel.agent.core.reply_reading import EMPTY_REPLY, ReadReply, call_example, read_reply
from keel.agent.core.state import SessionState
from keel.agent.core.strategies.ending import Ending
from keel.agent.core.strategies.heuristics import asks_for_change
from keel.agent.core.system_prompt import PromptStyle
from keel.agent.core.verification.gate import verification_feedback, verified_ending
from keel.prompts import render
from keel.tools.base import Tool, ToolContext, ToolKind, ToolResult
from keel.tools.registry import ToolRegistry


@dataclass(frozen=True)
class Workspace:
    """What a strategy sees of the session at a hook: its state, its tools and the project."""

    state: SessionState
    registry: ToolRegistry
    tool_context: ToolContext
    files: list[
        str
    ]  # the project's files as the system prompt lists them (empty when it lists none)
    approvals: Approvals
    test_command: str | None  # the project's (`keel setup`'s or the config's)
    window: int  # the model's context window, in tokens

    @property
    def edits_allowed(self) -> bool:
        """The approval policy does not deny edits, and no plan is being made (a plan is the answer then: no
        nudge to make a change)."""
        return (
            self.approvals.verdict("edit_file", ToolKind.EDIT) != "deny"
            and not self.state.plan_mode
        )

    @property
    def commands_allowed(self) -> bool:
        """The approval policy lets commands run without asking (asked only when a strategy needs it)."""
        return self.approvals.verdict("run_command", ToolKind.EXEC) == "allow"


@dataclass(frozen=True)
class Repeat:
    """A strategy's answer to a call made again right after it succeeded."""

    result: ToolResult | None = None  # given instead of running the call (None: the call runs)
    then: UserMessage | None = None  # keel's message after the reply's results


class Strategy(ABC):
    """One kind of model's way through a task; the loop asks the session for the current one every step (a
    session can move its model to another kind, agent/core/profile_switch.py)."""

    name: ClassVar[str]
    prompt_style: ClassVar[PromptStyle]
    nudges_by_default: ClassVar[bool]  # `nudge_without_change = "small-models"` nudges this kind
    verifies_by_default: ClassVar[bool]  # `verify = "small-models"` checks this kind's changes

    def __init__(self, profile: ModelProfile, policy: LoopSettings) -> None:
        self.profile = profile
        self.policy = policy

    @abstractmethod
    def tools(self) -> list[Tool[Any]]:
        """The tools a session with this kind of model starts with (MCP tools are added to them)."""

    async def prepare_task(self, at: Workspace) -> list[AnyEvent]:
        """What to put in context before a task's first model call."""
        return []

    def request_tools(
        self, state: SessionState, offered: list[dict[str, Any]] | None
    ) -> list[dict[str, Any]] | None:
        """The request's tools: none at all ([]) when keel asked for the answer, else those offered."""
        return [] if state.strategy.answer_requested else offered

    def system_template(self, state: SessionState) -> str | None:
        """The system prompt's template for the next call when it is not this kind's usual one (None)."""
        return None

    def request_history(self, state: SessionState) -> list[Message] | None:
        """The messages the next call sends after the system prompt when not the whole history (None)."""
        return None

    def request_sampling(self, state: SessionState) -> CallSampling | None:
        """The next call's temperature or seed when not the model's own (None)."""
        return None

    def read(self, reply: ModelReply, at: Workspace) -> ReadReply:
        """The calls a reply asks for, or what was wrong with its attempt at one."""
        return read_reply(
            reply,
            at.state,
            at.registry.names(),
            self.profile.parallel_calls,
            self.policy.correct_attempted_calls,
            self.project_file_size(at),
            answer_only=at.state.strategy.answer_requested,
        )

    def project_file_size(self, at: Workspace) -> Callable[[str], int | None] | None:
        """How a reply's fenced block is told to be a whole project file; None: blocks are never writes."""
        return None

    def correction(self, problem: str, tool: str | None, at: Workspace) -> str:
        """What the model is told about a reply that tried to call a tool and could not be run."""
        if problem == EMPTY_REPLY:
            return render("empty_reply")
        name = tool or "read_file"
        example = call_example(name, at.registry.schema(name))
        return render("call_correction", problem=problem, example=example)

    def on_repeated_call(
        self, name: str, signature: str, repeats: int, at: Workspace
    ) -> Repeat | None:
        """What a call gets that repeats the last one `repeats` times in a row; None: it runs as any call."""
        return None

    async def after_calls(
        self, reply: ModelReply, results: list[ToolFinished], at: Workspace
    ) -> Ending | None:
        """Whether a reply's calls, run, end the task (None: the model is asked again, as by default)."""
        return None

    async def before_end(self, answer: str, at: Workspace) -> Ending:
        """How a reply without calls ends the task (README: "How a task ends"): the nudge instead, for a task
        that asked for a change and changed nothing; else, when this kind's changes are verified, the answer
        once the changed files pass keel's checks (or the failures, for the model to mend); else the answer."""
        if self.ends_unchanged(at):
            example = _named_first(at.files, at.state.task_prompt, answer) or "path/to/file"
            text = render("no_change_nudge", example_file=example)
            return Ending(None, (UserMessage(text=text, origin="keel", purpose="nudge"),))
        if not self.verifies():
            return Ending(answer)
        return await verified_ending(
            answer,
            at.state,
            self.policy,
            ctx=at.tool_context,
            test_command=at.test_command,
            may_run=at.commands_allowed,
            feedback=lambda failed, left: self.verification_feedback(failed, left, at),
        )

    def verification_feedback(
        self, failed: list[VerificationCheck], left: int, at: Workspace
    ) -> UserMessage:
        """What the model is told when keel's checks of its changes failed (`left`: rounds before the task
        ends anyway): the failures, to mend with its tools."""
        return verification_feedback(failed, left)

    def verifies(self) -> bool:
        """Whether this session's changes are checked before a task ends (LoopSettings.verify)."""
        verify = self.policy.verify
        return verify == "always" or (verify == "small-models" and self.verifies_by_default)

    def ends_unchanged(self, at: Workspace) -> bool:
        """The task asks for a change, no file was changed and no command ran, edits are allowed, and the
        model has not had its nudge yet (by default only small models get one: they announce edits they
        never made; a capable model that changed nothing usually meant to)."""
        state = at.state
        nudges = self.policy.nudge_without_change
        if state.strategy.nudged or nudges == "never":
            return False
        if nudges == "small-models" and not self.nudges_by_default:
            return False
        if not at.edits_allowed or not asks_for_change(state.task_prompt):
            return False
        ran = [at.registry.get(n).kind for n in state.strategy.task_tools_ok if n in at.registry]
        return not state.strategy.task_edited and ToolKind.EXEC not in ran


def _named_first(files: list[str], task: str, answer: str) -> str | None:
    """The file a nudge shows as its example: one the task names by path, else by a word ("Slugs" names
    slug.py), else the first the answer names (the file a model rewrote unchanged, before others it echoed),
    else the project's first (the 1.5B, shown CHANGELOG.md there, wrote a changelog entry instead of the fix)."""
    named = (
        [f for f in files if f in task]
        or files_named_by(files, task)
        or sorted((f for f in files if f in answer), key=answer.index)
    )
    return next(iter(named or files), None)
