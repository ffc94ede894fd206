"""`keel` with no arguments in a real terminal (tmux), typed at like a person, read off the screen."""

from __future__ import annotations

import shutil

import pytest
from keel_cli import KEEL, git_repo, keel_env
from tmux_terminal import RESTORED, Terminal

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]


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
        screen = terminal.wait_for(
            "│ done"
        )  # the answer streams in before the status turns to done
        assert "The notes say remember the milk." in screen
        assert "› what do the notes say?" in screen
        assert "read_file  notes.txt" in screen
        terminal.keys("C-q")
        assert "KEEL-EXIT=0" in terminal.wait_for("KEEL-EXIT=", timeout=20)
        assert terminal.modes() == RESTORED and "TTY=same" in terminal.wait_for("TTY=")
        assert "keel:" not in terminal.screen(joined=True)  # a quit is not worth a word
    finally:
        terminal.close()
    assert "remember the milk" in str(server.requests[-1].messages)


def test_keel_debug_prints_an_internal_errors_traceback_once_the_ui_is_gone(
    scripted_server, tmp_path
):
    """The UI shows the internal error; --debug's traceback waits for the terminal, then prints."""
    server = scripted_server(["a reply keel will fail to handle"])
    repo = git_repo(tmp_path / "repo", {"notes.txt": "remember the milk\n"})
    env = keel_env(
        tmp_path / "home",
        TERM="xterm-256color",
        PATH="/usr/bin:/bin",
        HOME=str(tmp_path),
        KEEL_TEST_FAULT="model.reply",
    )
    command = [KEEL, "--debug", "--model", "openai/any", "--api-base", server.url]
    terminal = Terminal(command, repo, env)
    try:
        terminal.wait_for("Ask keel")
        terminal.keys("hello", literal=True)
        terminal.keys("Enter")
        shown = terminal.wait_for("internal error")
        assert "Traceback" not in shown, "the traceback must not be drawn over the UI"
        terminal.keys("C-q")
        after = terminal.wait_for("KEEL-EXIT=", timeout=20)
        assert "Traceback (most recent call last)" in after
        assert "InjectedFault: a fault injected at model.reply" in after
        assert terminal.modes() == RESTORED
    finally:
        terminal.close()
    [log] = (tmp_path / "home" / "logs").glob("*.log")
    assert "InjectedFault" in log.read_text()


def test_a_prompt_typed_while_keel_starts_is_kept_and_sent(scripted_server, tmp_path):
    """Typed (and Enter pressed) before the UI is up: the keys wait for the prompt box, and Enter sends."""
    server = scripted_server([Reply(text="Typed early, answered all the same.")])
    repo = git_repo(tmp_path / "repo", {"notes.txt": "remember the milk\n"})
    env = keel_env(
        tmp_path / "home", TERM="xterm-256color", PATH="/usr/bin:/bin", HOME=str(tmp_path)
    )
    terminal = Terminal([KEEL, "--model", "openai/any", "--api-base", server.url], repo, env)
    try:
        terminal.keys("what do the notes say?", literal=True)  # keel has not even started yet
        terminal.keys("Enter")
        screen = terminal.wait_for("Typed early, answered all the same.", timeout=90)
        assert "› what do the notes say?" in screen
        terminal.keys("then this", literal=True)  # typed into the box, not sent
        assert "then this" in terminal.wait_for("then this")
        terminal.keys("C-q")
        assert "KEEL-EXIT=0" in terminal.wait_for("KEEL-EXIT=", timeout=20)
    finally:
        terminal.close()
    assert "what do the notes say?" in str(server.requests[-1].messages)
