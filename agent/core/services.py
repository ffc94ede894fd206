"""What a session runs with, assembled in one place: its log, model stack, tools, context, approvals and
checkpoints. The Session holds the result and the loop reads it; nothing else builds these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keel.agent.core.approval import Approvals, AskPerson
from keel.agent.core.config import DEFAULT_CONTEXT_WINDOW, LoopSettings
from keel.agent.core.config_files import keel_home
from keel.agent.core.context.bounds import bound_events
from keel.agent.core.context.manager import ContextManager
from keel.agent.core.context.summarizer import Summarizer
from keel.agent.core.files_seen import recall
from keel.agent.core.fold import fold
from keel.agent.core.git.checkpoints import CheckpointGuard
from keel.agent.core.hooks.session_hooks import Hooks
from keel.agent.core.images.vision import takes_images
from keel.agent.core.leftovers import remove_leftover_temp_files
from keel.agent.core.model.client import ChatModel, ModelClient, context_window_of
from keel.agent.core.model.prompt_chain import PromptChain
from keel.agent.core.model.redact import RedactingModel, Redactor
from keel.agent.core.profile import ModelProfile
from keel.agent.core.profile_switch import as_small
from keel.agent.core.protocol import AnyEvent, SessionStarted
from keel.agent.core.settings import SessionSettings
from keel.agent.core.skills.catalog import Skill, find_skills
from keel.agent.core.state import SessionState
from keel.agent.core.store import SessionLog, claim_new_log, read_events, sessions_dir
from keel.agent.core.strategies.base import Strategy
from keel.agent.core.strategies.choose import strategy_for
from keel.agent.core.subagents import with_subagents
from keel.agent.core.system_prompt import SystemPrompt
from keel.agent.core.workspace_facts import WorkspaceFacts, gather_facts, load_instructions
from keel.tools.base import Tool, ToolContext
from keel.tools.exec.sandbox_mechanism import sandbox_mechanism
from keel.tools.registry import ToolRegistry
from keel.tools.skill import SkillTool

if TYPE_CHECKING:
    from keel.tools.mcp.servers import McpServers


@dataclass(frozen=True)
class SessionCallbacks:
    """What the services call back into their session with: its one way to emit an event, its state now, how it
    asks the person about a call, and where a checkpoint's failure goes."""

    emit: Callable[[AnyEvent], None]
    current: Callable[[], SessionState]
    ask_person: AskPerson
    checkpoint_failed: Callable[[str], None]


@dataclass
class SessionServices:
    """A session's services. `strategy`, `profile` and `registry` change when the session moves to the small
    profile (move_to_small); the rest stay for the session's life."""

    settings: SessionSettings
    callbacks: SessionCallbacks
    id: str
    root: Path
    redactor: Redactor
    log: SessionLog
    window: int
    initial_state: SessionState  # what the resumed log folds to; a new session's is empty
    resumed: bool
    profile: ModelProfile
    strategy: Strategy
    tools_given: bool  # the caller chose the tools: a move to the small profile keeps them
    registry: ToolRegistry
    tool_context: ToolContext
    mcp: McpServers | None
    model: RedactingModel
    context: ContextManager
    approvals: Approvals
    checkpoints: CheckpointGuard | None
    hooks: Hooks  # the commands the user configured for points of the session (agent/core/hooks)
    skills: list[Skill]  # the model loads one's body by name (the skill tool)
    prompts: PromptChain  # the last logged model call: the next logs what its prompt adds

    @property
    def policy(self) -> LoopSettings:
        """The loop's limits and guards."""
        return self.settings.loop

    @property
    def ask_person(self) -> AskPerson | None:
        """How the loop asks the person about a call; None when nobody is there to ask."""
        return self.callbacks.ask_person if self.settings.interactive else None

    def started(self, state: SessionState) -> SessionStarted:
        """session.started: what the session runs with (`state`: its state, resumed or new)."""
        settings = self.settings
        text = settings.tool_protocol == "text" or state.tool_protocol == "text"
        return SessionStarted(
            session_id=self.id,
            model=settings.model,
            cwd=str(self.root),
            context_window=self.window,
            tool_protocol="text" if text else "native",
            approval=settings.approval,
            budget=state.budget if self.resumed else settings.budget,
            resumed=self.resumed,
            sandbox=sandbox_mechanism(settings.sandbox).description,
            profile="small" if self.profile.compact else "full",
            profile_reason=(
                "moved there earlier in this session: its model failed at calls"
                if self.profile.compact and not settings.compact_prompt
                else settings.profile_reason
            ),
        )

    def move_to_small(self) -> None:
        """The small profile from the next model call on: the compact prompt, the small model's tools (tools a
        caller gave, and MCP tools, stay), its temperature and reply limit."""
        self.profile = as_small(self.profile, self.settings.model, self.settings.api_base)
        self.strategy = strategy_for(self.profile, self.settings.loop)
        registry = self.registry
        if not self.tools_given:
            registry = ToolRegistry(self.strategy.tools(), redact=self.redactor.redact)
            registry.add([t for t in self.registry.tools if t.name.startswith("mcp__")])
            registry.add([t for t in self.registry.tools if t.name == "skill"])
        self.context.system_prompt = SystemPrompt(
            facts=workspace_facts(self.settings, self.root, self.strategy),
            instructions=self.context.system_prompt.instructions,
            registry=registry,
            style=self.strategy.prompt_style,
            skills=self.skills,
        )
        self.registry = registry
        client = self.model.inner
        if isinstance(client, ModelClient):
            client.extra.update(request_extra(self.profile, self.settings))


def assemble_services(
    settings: SessionSettings,
    callbacks: SessionCallbacks,
    tools: list[Tool[Any]] | None = None,
    resume: Path | None = None,
    model: ChatModel | None = None,
) -> SessionServices:
    """Build a session's services from its settings (and, to resume, its log); `tools` replace the strategy's,
    `model` the litellm client (an in-process model, e.g. for benchmarks)."""
    root = settings.cwd.resolve()
    path = resume or claim_new_log(sessions_dir())
    session_id = path.stem
    redactor = Redactor.from_environment(extra=settings.secrets)
    # the log first: it locks the session, so no other process appends while this one reads it
    log = SessionLog(path, redactor)
    window = context_window_of(
        settings.model, settings.context_window, DEFAULT_CONTEXT_WINDOW, settings.api_base
    )
    prior = bound_events(read_events(resume), window) if resume else []
    state = fold(prior, SessionState(session_id=session_id, max_steps=settings.max_steps))
    profile = ModelProfile(
        compact=settings.compact_prompt,
        temperature=settings.temperature,
        reply_tokens=settings.reply_tokens,
        parallel_calls=settings.parallel_calls,
    )
    moved = state.small_profile and not settings.profile_chosen  # before the resume
    if moved and not profile.compact:
        profile = as_small(profile, settings.model, settings.api_base)
    strategy = strategy_for(profile, settings.loop)
    ask = callbacks.ask_person if settings.interactive else None
    given = tools if tools is not None else strategy.tools()
    registry = ToolRegistry(
        with_subagents(given, settings, callbacks.emit, callbacks.current, ask),
        redact=redactor.redact,
    )
    skills = find_skills(root)
    if skills and tools is None:  # the model loads a listed skill's body by name
        registry.add([SkillTool()])
    tool_context = ToolContext(
        root=root, scratch=keel_home() / "scratch" / session_id, sandbox=settings.sandbox
    )
    tool_context.takes_images = takes_images(settings.model, settings.images)
    if prior:
        remove_leftover_temp_files(prior, tool_context)
        recall(tool_context, state)
    prompts = PromptChain()
    chat = RedactingModel(
        model or _model_client(settings, profile, callbacks, session_id, prompts), redactor
    )
    prompt = SystemPrompt(
        facts=workspace_facts(settings, root, strategy),
        instructions=load_instructions(root),
        registry=registry,
        style=strategy.prompt_style,
        skills=skills,
    )
    context = ContextManager(
        prompt,
        window,
        settings.context,
        Summarizer(chat, window),
        callbacks.emit,
        callbacks.current,
    )
    context.images = tool_context.takes_images
    return SessionServices(
        settings=settings,
        callbacks=callbacks,
        id=session_id,
        root=root,
        redactor=redactor,
        log=log,
        window=window,
        initial_state=state,
        resumed=bool(prior),
        profile=profile,
        strategy=strategy,
        tools_given=tools is not None,
        registry=registry,
        tool_context=tool_context,
        mcp=_mcp_servers(settings, tool_context),
        model=chat,
        context=context,
        approvals=Approvals(settings.approval, lambda: callbacks.current().allowed_for_session),
        checkpoints=(
            CheckpointGuard(root, session_id, on_error=callbacks.checkpoint_failed)
            if settings.checkpoints
            else None
        ),
        hooks=Hooks(settings.hooks, tool_context, session_id, log.path, callbacks.emit),
        skills=skills,
        prompts=prompts,
    )


def request_extra(profile: ModelProfile, settings: SessionSettings) -> dict[str, Any]:
    """What every request's body adds: the profile's sampling, then the settings' own over it."""
    return {**profile.sampling(), **settings.sampling}


def _model_client(
    settings: SessionSettings,
    profile: ModelProfile,
    callbacks: SessionCallbacks,
    session_id: str,
    prompts: PromptChain,
) -> ModelClient:
    """The litellm client the settings name; its retries and the embedded model's progress are events, and
    every call names the session (keel.agent.core.model.routing)."""
    return ModelClient(
        model=settings.model,
        api_base=settings.api_base,
        retries=settings.retries,
        retry_base_delay=settings.retry_base_delay,
        timeout=settings.request_timeout,
        stall_timeout=settings.stall_timeout,
        on_retry=callbacks.emit,
        on_progress=callbacks.emit,
        context_window=settings.context_window,
        extra=request_extra(profile, settings),
        record_tokens=settings.record_tokens,
        session_id=session_id,
        prompts=prompts,
    )


def _mcp_servers(settings: SessionSettings, tool_context: ToolContext) -> McpServers | None:
    """The configured MCP servers, not yet started; the SDK is imported only when a server is configured."""
    if not settings.mcp_servers:
        return None
    from keel.tools.mcp.servers import McpServers

    return McpServers.for_session(settings.mcp_servers, tool_context)


def workspace_facts(settings: SessionSettings, root: Path, strategy: Strategy) -> WorkspaceFacts:
    """What the system prompt says about the workspace; a small model's lists the files."""
    facts = gather_facts(root, list_files=strategy.prompt_style.lists_files)
    facts.test_command = settings.test_command
    facts.test_command_runs = settings.run_test_command
    if mount := settings.sandbox.workspace_mount:  # the root as the commands see it (/app)
        facts = facts.model_copy(update={"root": mount})
    return facts
