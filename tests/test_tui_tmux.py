"""`keel` with no arguments in a real terminal (tmux), typed at like a person, read off the screen."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid

import pytest
from keel_cli import KEEL, git_repo, keel_env
from scripted_server import Reply, ScriptedToolCall

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]


class Terminal:
    """One tmux session running a command at a fixed size."""

    def __init__(self, command: list[str], cwd, env: dict[str, str]) -> None:
        self.name = f"keel-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        shell = f"env -i {exports} {shlex.join(command)}; echo KEEL-EXIT=$?; sleep 30"
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                "120",
                "-y",
                "36",
                "-c",
                str(cwd),
                shell,
            ],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(
            ["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True
        )

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)


def test_keel_in_tmux_answers_a_typed_prompt(scripted_server, tmp_path):
    server = scripted_server(
        [
            Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": "notes.txt"})]),
            Reply(text="The notes say **remember the milk**.", chunk_delay=0.02),
        ]
    )
    repo = git_repo(tmp_path / "repo", {"notes.txt": "remember the milk\n"})
    env = keel_env(
        tmp_path / "home", TERM="xterm-256color", PATH="/usr/bin:/bin", HOME=str(tmp_path)
    )
    terminal = Terminal([KEEL, "--model", "openai/any", "--api-base", server.url], repo, env)
    try:
        terminal.wait_for("Ask keel")
        terminal.keys("what do the notes say?", literal=True)
        terminal.keys("Enter")
        terminal.wait_for("The notes say remember the milk.")
        screen = terminal.wait_for("│ done")  # the answer streams in before the status turns to done
        assert "The notes say remember the milk." in screen
        assert "› what do the notes say?" in screen
        assert "read_file  notes.txt" in screen
        terminal.keys("C-q")
        assert "KEEL-EXIT=0" in terminal.wait_for("KEEL-EXIT=", timeout=20)
    finally:
        terminal.close()
    assert "remember the milk" in str(server.requests[-1].messages)
