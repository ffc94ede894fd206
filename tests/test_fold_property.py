"""The session is a fold of its events: over generated scripted sessions, the live final state equals the state
rebuilt from the session log (usage, steps, budget, history, summaries, tool protocol, the tools a person
allowed for the session, the files read and changed), and a resumed session's tools know what the live ones did.

Each example runs a real Session against the scripted server over HTTP: tool calls, malformed calls, empty
replies, summaries (small windows and `Compact`), masking, the switch to the text tool protocol, budget stops,
interrupts, writes and commands a person approves or denies, then folds the logged events into a fresh state
and compares. Each example has a fresh repository and model, so a replay of an example is the same run.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from keel_cli import git_repo

from keel.agent.core.fold import fold
from keel.agent.core.protocol import (
    AnyEvent,
    ApprovalDecided,
    ApprovalDecision,
    ApprovalRequested,
    Approve,
    Compact,
    ContextSummarized,
    Error,
    Interrupt,
    SetBudget,
    TaskFinished,
    TokenUsage,
    ToolStarted,
    UserMessage,
    UserPrompt,
)
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings
from keel.agent.core.state import SessionState
from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import (
    ChatRequest,
    RecordedRequest,
    Reply,
    ScriptedServer,
    ScriptedToolCall,
)
from keel.agent.harness.testing.scripted_wire import estimate_completion_tokens
from keel.tools.base import FileStamp, ToolKind

EXAMPLES = int(os.environ.get("FOLD_EXAMPLES", "50"))
SUMMARY_MARK = "You are summarizing your own work"
FILES = 6

# what the scripted model does on one step of a task
ACTIONS = ["read", "read", "read", "bad_json", "unknown_tool", "empty", "malformed", "switch"]
ACTIONS += ["write", "run"]
DECISIONS: list[ApprovalDecision] = ["allow_once", "allow_session", "deny"]


@dataclass
class Prompt:
    actions: list[str]
    interrupt: bool = False
    decision: ApprovalDecision = "allow_session"  # a person's answer to each approval the task asks


@dataclass
class Plan:
    window: int
    protocol: str
    ops: list[Prompt | Compact | SetBudget]
    approval: str = "full-auto"


def plans() -> st.SearchStrategy[Plan]:
    prompt = st.builds(
        Prompt,
        st.lists(st.sampled_from(ACTIONS), max_size=7),
        st.booleans().map(lambda b: b),
        st.sampled_from(DECISIONS),
    )
    op = st.one_of(
        prompt,
        prompt,
        prompt,
        st.builds(Compact),
        st.builds(SetBudget, budget=st.one_of(st.none(), st.integers(3_000, 12_000))),
    )
    return st.builds(
        Plan,
        window=st.sampled_from([4_500, 6_000, 9_000, 32_768]),
        protocol=st.sampled_from(["auto", "auto", "text"]),
        ops=st.lists(op, min_size=1, max_size=5),
        approval=st.sampled_from(["full-auto", "auto-edit"]),
    )


def call(name: str, arguments: dict[str, Any] | str) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments)


class Model:
    """The scripted model: plays the current task's actions in order, writes summaries when asked."""

    def __init__(self) -> None:
        self.actions: list[str] = []
        self.reads = 0
        self.writes = 0
        self.summaries = 0

    def start(self, actions: list[str], interrupt: bool) -> None:
        self.actions = list(actions) + (["sleep"] if interrupt else [])

    def __call__(self, request: ChatRequest) -> Reply:
        if request.messages and SUMMARY_MARK in str(request.messages[0].get("content")):
            self.summaries += 1
            return Reply(text=f"## Done\nread {self.reads} files (summary {self.summaries})")
        native = bool(request.tools)
        while self.actions:
            action = self.actions.pop(0)
            if action == "switch":
                if native:
                    return Reply(error=400, error_message="this model does not support tools")
                continue
            return self._reply(action, native)
        return Reply(text="All done.")

    def _reply(self, action: str, native: bool) -> Reply:
        if action == "read":
            self.reads += 1
            args = {"path": f"mod{self.reads % FILES}.py", "limit": 20 + self.reads * 17 % 90}
            return self._call("read_file", args, native)
        if action == "bad_json":
            return self._call("read_file", '{"path": "mod1.py", ', native)
        if action == "unknown_tool":
            return self._call("no_such_tool", {"x": 1}, native)
        if action == "sleep":
            return self._call("run_command", {"command": "sleep 30"}, native)
        if action == "write":  # a file it read (or one it did not: refused), or a new one
            self.writes += 1
            path = f"mod{self.reads % FILES}.py" if self.writes % 2 else f"new{self.writes}.txt"
            return self._call("write_file", {"path": path, "content": f"v{self.writes}\n"}, native)
        if action == "run":  # asks a person under auto-edit
            return self._call("run_command", {"command": "true"}, native)
        if action == "malformed":
            return Reply(text="<tool_call>not json at all</tool_call>" if not native else "")
        return Reply(text="")  # empty: keel asks again

    @staticmethod
    def _call(name: str, arguments: dict[str, Any] | str, native: bool) -> Reply:
        if native:
            return Reply(tool_calls=[call(name, arguments)])
        text = arguments if isinstance(arguments, str) else __import__("json").dumps(arguments)
        return Reply(text=f'<tool_call>{{"name": "{name}", "arguments": {text}}}</tool_call>')


@dataclass
class Run:
    live: SessionState
    log: Path
    config: SessionSettings
    stamps: dict[Path, FileStamp]  # the live tools' knowledge of files
    changed: set[Path]


async def until(session: Session, done: type | tuple[type, ...], on_event: Any = None) -> None:
    async for seen in session.events():
        if on_event is not None:
            on_event(seen)
        if isinstance(seen, done):
            return
    raise AssertionError("the session closed early")


async def drive(plan: Plan, model: Model, server: ScriptedServer, repo: Path) -> Run:
    config = SessionSettings(
        cwd=repo,
        model="openai/any",
        api_base=server.url,
        context_window=plan.window,
        tool_protocol=plan.protocol,  # type: ignore[arg-type]
        retry_base_delay=0.01,
        checkpoints=False,
        max_steps=12,
        approval=plan.approval,  # type: ignore[arg-type]
        interactive=True,
    )
    async with Session(config) as session:
        for op in plan.ops:
            if isinstance(op, Prompt):
                model.start(op.actions, op.interrupt)

                def interrupt(event: AnyEvent, decision: ApprovalDecision = op.decision) -> None:
                    if (
                        isinstance(event, ToolStarted)
                        and event.arguments.get("command") == "sleep 30"
                    ):
                        session.submit(Interrupt())
                    elif isinstance(event, ApprovalRequested):
                        session.submit(Approve(call_id=event.call_id, decision=decision))

                session.submit(UserPrompt(text=f"task with {len(op.actions)} steps"))
                await until(session, TaskFinished, interrupt)
            elif isinstance(op, Compact):
                session.submit(op)
                await until(session, (ContextSummarized, Error))
            else:
                session.submit(op)
        live = session.state
        stamps, changed = (
            dict(session.tool_context.read_stamps),
            set(session.tool_context.changed_files),
        )
    return Run(live, session.log.path, config, stamps, changed)


def resumed_session(run: Run) -> Session:
    """The session `keel run --resume` starts from: a Session built on the log (not started)."""

    async def build() -> Session:
        session = Session(run.config, resume=run.log)
        await session.close()
        return session

    return asyncio.run(build())


def resumed_state(run: Run) -> SessionState:
    return resumed_session(run).state


def served_usage(requests: list[RecordedRequest]) -> TokenUsage:
    """What the server billed for the replies it served: the oracle the session's totals must match."""
    total = TokenUsage()
    for request in requests:
        if request.answered and request.reply is not None and request.reply.error is None:
            completion = estimate_completion_tokens(request.reply)
            total += TokenUsage(
                prompt_tokens=request.prompt_tokens,
                completion_tokens=completion,
                total_tokens=request.prompt_tokens + completion,
            )
    return total


def snapshot(state: SessionState) -> dict[str, Any]:
    """Every field of the state; messages and usage as their data (not the token counts cached on them)."""
    return {
        name: [m.model_dump() for m in value]
        if name == "history"
        else value.model_dump()
        if isinstance(value, TokenUsage)
        else value
        for name, value in vars(state).items()
    }


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_server: Any) -> Any:
    """The scripted model (playing each example's model in turn), its server, and a fresh repository per
    example: hypothesis runs the examples with one fixture, and a replay must see what the first run saw."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    lines = "".join(f"def f{j}(x):\n    return x * {j}  # filler line\n" for j in range(60))
    repos = iter(range(1_000_000))

    def fresh_repo() -> Path:
        files = {f"mod{i}.py": lines for i in range(FILES)}
        return git_repo(tmp_path / f"repo{next(repos)}", files)

    box: list[Model] = [Model()]
    return box, scripted_server(lambda request: box[0](request)), fresh_repo


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@example(  # a command allowed for the session (the next is not asked), a write of a file read, a denial
    plan=Plan(
        window=32_768,
        protocol="auto",
        approval="auto-edit",
        ops=[
            Prompt(["read", "run", "write", "write", "run"]),
            Prompt(["run", "read", "write"], decision="deny"),
        ],
    )
)
@example(  # a read longer than a resume keeps of one text, near keel's "Your reply was empty"
    plan=Plan(
        window=4_500,
        protocol="auto",
        ops=[Prompt(["read", "empty", "empty", "read"]), Prompt(["read"])],
    )
)
@example(  # masking, then summaries at the threshold
    plan=Plan(window=4_500, protocol="auto", ops=[Prompt(["read"] * 7), Prompt(["read"] * 7)])
)
@example(  # calls written in the text to tools that do not exist, until the task stops, then another task
    plan=Plan(window=32_768, protocol="text", ops=[Prompt(["unknown_tool"] * 5), Prompt(["read"])])
)
@example(  # the switch to text, a malformed call, an interrupt, then /compact and a budget stop
    plan=Plan(
        window=32_768,
        protocol="auto",
        ops=[
            Prompt(["read", "switch", "malformed", "empty", "read"], interrupt=True),
            Compact(),
            SetBudget(budget=3_000),
            Prompt(["read", "bad_json", "unknown_tool", "read"]),
        ],
    )
)
@given(plan=plans())
def test_live_state_equals_the_state_folded_from_the_log(world: Any, plan: Plan) -> None:
    box, server, fresh_repo = world
    model = box[0] = Model()
    served = len(server.requests)
    run = asyncio.run(drive(plan, model, server, fresh_repo()))
    events = read_events(run.log)
    initial = SessionState(session_id=run.live.session_id, max_steps=run.live.max_steps)
    assert snapshot(fold(events, initial)) == snapshot(run.live)
    resumed = resumed_session(run)
    assert snapshot(resumed.state) == snapshot(run.live)
    assert run.live.usage == served_usage(server.requests[served:])
    # what the tools knew and a person allowed, given back to the resumed session
    assert resumed.tool_context.read_stamps == run.stamps
    assert resumed.tool_context.changed_files == run.changed
    for name in ("run_command", "write_file"):
        allowed = name in run.live.allowed_for_session
        assert (resumed.approvals.verdict(name, ToolKind.EXEC) == "allow") == (
            allowed or plan.approval == "full-auto"
        )
    for logged in events:  # what the examples exercised: pytest --hypothesis-show-statistics
        if isinstance(logged, ContextSummarized):
            event(f"summarized ({logged.reason})")
        elif isinstance(logged, TaskFinished):
            event(f"finished {logged.status}")
        elif isinstance(logged, UserMessage) and logged.origin == "keel":
            event("correction")
        elif logged.type in ("context.masked", "tool_protocol.changed", "turn.aborted"):
            event(logged.type)
        elif isinstance(logged, ApprovalDecided):
            event(f"approval {logged.decision}")
