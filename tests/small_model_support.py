"""A Session against the scripted server as a small (or a capable) served model: settings resolved from a
config the way a user's are, one task run, its events and its log read back."""

from __future__ import annotations

from pathlib import Path

from session_support import until_finished

from keel.agent.core.config import KeelConfig
from keel.agent.core.protocol import AnyEvent, UserMessage, UserPrompt
from keel.agent.core.session import Session
from keel.agent.core.settings import SessionSettings, settings_from_config
from keel.agent.core.store import read_events
from keel.agent.harness.testing.scripted_server import Reply, ScriptedServer, ScriptedToolCall

SMALL = "openai/qwen2.5-coder-1.5b-instruct"  # small by its name, served from 127.0.0.1
CAPABLE = "openai/any"
CALC = {"calc.py": "def add(a, b):\n    return a - b\n"}
FIX = {"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}


def served_settings(
    server: ScriptedServer, workspace: Path, model: str = SMALL, **config: object
) -> SessionSettings:
    chosen = KeelConfig.model_validate(
        {"model": model, "api_base": server.url, "retry_base_delay": 0.01, **config}
    )
    return settings_from_config(chosen, workspace, interactive=False)


def call(name: str, **arguments: object) -> Reply:
    return Reply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


async def run_task(settings: SessionSettings, prompt: str) -> tuple[list[AnyEvent], list[AnyEvent]]:
    """The task's events, and the session's log read back from disk (which must hold each of them)."""
    async with Session(settings) as session:
        session.submit(UserPrompt(text=prompt))
        events = await until_finished(session)
        log = read_events(session.log.path)
    published = [e.type for e in events if e.type != "assistant.delta"]
    assert [e.type for e in log if e.type != "assistant.delta"] == published
    return events, log


def model_answer(final_message: str) -> str:
    """A final message without the line keel adds after a small model's answer, saying what it verified."""
    answer, _, _ = final_message.partition("\n\nVerified by keel:")
    return answer


def keel_messages(events: list[AnyEvent], purpose: str) -> list[str]:
    return [e.text for e in events if isinstance(e, UserMessage) and e.purpose == purpose]
