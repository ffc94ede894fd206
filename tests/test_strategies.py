"""What differs by kind of model is a strategy (agent/core/strategies/): chosen from the profile, switched when the
session moves its model, its state folded from events so that a resume rebuilds it, and its end-of-task hook
able to send a message instead of ending. Sessions against the scripted server over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import git_repo
from session_support import until_finished
from small_model_support import CALC, CAPABLE, FIX, call, keel_messages, served_settings

from keel.agent.core.config import LoopSettings
from keel.agent.core.profile import ModelProfile
from keel.agent.core.protocol import ToolFinished, UserMessage, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.strategies.base import Workspace
from keel.agent.core.strategies.capable import Capable
from keel.agent.core.strategies.choose import strategy_for
from keel.agent.core.strategies.ending import Ending
from keel.agent.core.strategies.small import SmallModel
from keel.agent.core.strategies.state import StrategyState
from keel.agent.harness.testing.scripted_server import Reply

BROKEN = Reply(text='{"name": "read_file", "arguments": {"path": calc.py}}')  # not JSON: corrected


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", CALC)


def test_the_profile_chooses_the_strategy():
    policy = LoopSettings()
    small = strategy_for(ModelProfile(compact=True), policy)
    capable = strategy_for(ModelProfile(), policy)
    assert isinstance(small, SmallModel) and isinstance(capable, Capable)
    assert small.prompt_style.template == "system_compact" and small.prompt_style.short_schemas
    assert capable.prompt_style.template == "system" and capable.prompt_style.bare_status_line
    assert {t.name for t in small.tools()} < {t.name for t in capable.tools()}


async def test_a_resume_rebuilds_the_strategys_part_of_the_state(scripted_server, workspace):
    read = call("read_file", path="calc.py")
    server = scripted_server([read, read, Reply(text="Done."), Reply(text="No change is needed.")])
    settings = served_settings(server, workspace)  # a small model
    async with Session(settings) as session:
        session.submit(UserPrompt(text="fix add"))
        events = await until_finished(session)
        live = session.state.strategy
        path = session.log.path
    assert len(keel_messages(events, "nudge")) == 1
    assert live == StrategyState(
        nudged=True, task_tools_ok=frozenset({"read_file"}), last_ran_ok=True
    )
    async with Session(settings, resume=path) as resumed:
        assert resumed.state.strategy == live


async def test_a_move_to_the_small_profile_switches_the_strategy_mid_task(
    scripted_server, workspace
):
    read = call("read_file", path="calc.py")
    server = scripted_server(
        [BROKEN, BROKEN, read, read, call("edit_file", **FIX), Reply(text="ok")]
    )
    async with Session(served_settings(server, workspace, CAPABLE)) as session:
        assert isinstance(session.strategy, Capable)
        session.submit(UserPrompt(text="fix add"))
        events = await until_finished(session)
        assert isinstance(session.strategy, SmallModel)
    results = [e for e in events if isinstance(e, ToolFinished)]
    # the small model's strategy answers the repeated read with a pointer, not the file again
    assert "return a - b" in results[0].output and results[1].output.startswith("Not run again")
    assert (
        events[-1].status == "completed" and "return a + b" in (workspace / "calc.py").read_text()
    )


class CheckedOnce(Capable):
    """A strategy whose task ends only after it has said something once (as verification will)."""

    async def before_end(self, answer: str, at: Workspace) -> Ending:
        if any(m.content == "Check your work." for m in at.state.history):
            return await super().before_end(answer, at)
        return Ending(None, (UserMessage(text="Check your work.", origin="keel", purpose="nudge"),))


async def test_a_strategy_can_send_a_message_instead_of_ending(scripted_server, workspace):
    server = scripted_server([Reply(text="Done."), Reply(text="Checked: done.")])
    settings = served_settings(server, workspace, CAPABLE)
    async with Session(settings) as session:
        session.strategy = CheckedOnce(session.profile, settings.loop)
        session.submit(UserPrompt(text="fix add"))
        events = await until_finished(session)
    assert keel_messages(events, "nudge") == ["Check your work."]
    assert "Check your work." in str(server.requests[1].messages)
    assert events[-1].status == "completed" and events[-1].final_message == "Checked: done."
