"""However `keel`'s UI ends, the terminal is left as the shell had it: read off a real terminal (tmux)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal

import pytest
from keel_cli import KEEL, git_repo, keel_env
from tmux_terminal import IN_THE_UI, RESTORED, Terminal, processes_under, wait_until_gone

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"
    ),
]


@pytest.fixture
def keel_in_tmux(scripted_server, tmp_path):
    """Start `keel` on a scripted model in a tmux session; yields it once its prompt box is up."""
    server = scripted_server(["hello"])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    env = keel_env(
        tmp_path / "home", TERM="xterm-256color", PATH="/usr/bin:/bin", HOME=str(tmp_path)
    )
    terminals: list[Terminal] = []

    def start() -> Terminal:
        command = [KEEL, "--model", "openai/any", "--api-base", server.url]
        terminal = Terminal(command, repo, env)
        terminals.append(terminal)
        terminal.wait_for("Ask keel")
        assert terminal.modes() == IN_THE_UI
        return terminal

    yield start
    for terminal in terminals:
        terminal.close()


@pytest.mark.parametrize("name", ["SIGSEGV", "SIGKILL"])
def test_a_ui_that_dies_leaves_the_terminal_restored_and_says_so(keel_in_tmux, tmp_path, name):
    """A crash in native code (or SIGKILL) ends the UI's process at once; the terminal is reset anyway."""
    terminal = keel_in_tmux()
    number = signal.Signals[name].value
    os.kill(terminal.keel_processes()[1], number)
    screen = terminal.wait_for("TTY=")
    assert terminal.modes() == RESTORED
    assert f"KEEL-EXIT={128 + number}" in screen and "TTY=same" in screen
    said = [line for line in screen.splitlines() if line.startswith("keel:")]
    assert len(said) == 1, screen
    assert f"the UI died ({name})" in said[0] and "terminal was restored" in said[0]
    assert str(tmp_path / "home" / "sessions") in said[0] and "keel resume" in said[0]


@pytest.mark.parametrize(
    ("name", "target"),
    [("SIGTERM", "ui"), ("SIGTERM", "keel"), ("SIGHUP", "keel"), ("SIGINT", "keel")],
)
def test_sigterm_sighup_or_sigint_closes_the_ui_cleanly(keel_in_tmux, name, target):
    """To the UI or to the `keel` process the shell started (which passes it on)."""
    terminal = keel_in_tmux()
    keel, ui = terminal.keel_processes()
    number = signal.Signals[name].value
    os.kill(ui if target == "ui" else keel, number)
    screen = terminal.wait_for("TTY=")
    assert terminal.modes() == RESTORED
    assert f"KEEL-EXIT={128 + number}" in screen and "TTY=same" in screen
    said = [line for line in screen.splitlines() if line.startswith("keel:")]
    assert len(said) == 1 and f"stopped by {name}" in said[0], screen


def test_the_ui_closes_and_restores_the_terminal_when_keel_is_killed(keel_in_tmux):
    """SIGKILL to the process the shell started: the UI notices it is gone and closes too."""
    terminal = keel_in_tmux()
    os.kill(terminal.keel_processes()[0], signal.SIGKILL)
    terminal.wait_for_modes(RESTORED)
    # the shell's own lines went to the alternate screen the UI still had, and went with it
    terminal.wait_for("keel: the keel process guarding the UI died, so the UI closed")


def test_ctrl_z_suspends_to_the_shell_and_fg_brings_the_ui_back(scripted_server, tmp_path):
    """Job control in an interactive shell: Ctrl-Z stops keel, the shell takes the terminal, `fg` resumes."""
    server = scripted_server(["hello"])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    env = keel_env(
        tmp_path / "home", TERM="xterm-256color", PATH="/usr/bin:/bin", HOME=str(tmp_path)
    )
    terminal = Terminal(["bash", "--norc", "--noprofile", "-i"], repo, {**env, "PS1": "shell$ "})
    try:
        terminal.wait_for("shell$")
        terminal.keys(f"{KEEL} --model openai/any --api-base {server.url}", literal=True)
        terminal.keys("Enter")
        terminal.wait_for("Ask keel")
        terminal.keys("C-z")
        terminal.wait_for("Stopped")
        assert terminal.modes() == RESTORED
        terminal.wait_for_prompt("shell$")
        terminal.keys("fg", "Enter")
        terminal.wait_for_modes(IN_THE_UI)
        terminal.wait_for("Ask keel")
        terminal.keys("C-q")
        terminal.wait_for_modes(RESTORED)
        terminal.wait_for_prompt("shell$")
        terminal.keys("echo KEEL-EXIT=$?", "Enter")
        assert "KEEL-EXIT=0" in terminal.wait_for("KEEL-EXIT=")
    finally:
        terminal.close()


def test_closing_the_terminal_ends_keel_and_its_ui(scripted_server, tmp_path):
    """A hangup signals only the session leader, here keel itself (as in `tmux new-window keel`)."""
    server = scripted_server(["hello"])
    repo = git_repo(tmp_path / "repo", {"a.txt": "a\n"})
    env = keel_env(
        tmp_path / "home", TERM="xterm-256color", PATH="/usr/bin:/bin", HOME=str(tmp_path)
    )
    command = ["env", "-i", *(f"{k}={v}" for k, v in env.items()), KEEL]
    terminal = Terminal.exec([*command, "--model", "openai/any", "--api-base", server.url], repo)
    try:
        terminal.wait_for("Ask keel")
        keel = int(terminal.display("#{pane_pid}"))
        ui = [pid for pid, _ in processes_under(keel)]
    finally:
        terminal.close()
    try:
        for pid in [keel, *ui]:
            wait_until_gone(pid)
    except AssertionError:  # left running: end them here, not leave them to spin on a dead terminal
        for pid in [keel, *ui]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise
