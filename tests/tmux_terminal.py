"""A real terminal for the TUI's tests: a tmux session running a command, its screen, its modes, its processes."""

from __future__ import annotations

import shlex
import subprocess
import time
import uuid

# what the pane's terminal has switched on: the alternate screen, any mouse mode, SGR mouse
# reports, a visible cursor; "0 0 0 1" is a terminal as a shell expects it
MODES = "#{alternate_on} #{mouse_any_flag} #{mouse_sgr_flag} #{cursor_flag}"
RESTORED = "0 0 0 1"
IN_THE_UI = "1 1 1 0"


class Terminal:
    """One tmux session running a command at a fixed size.

    After the command the pane says `KEEL-EXIT=<code>` and whether the tty's settings
    (`stty -g`) are what they were before it: `TTY=same` or `TTY=changed`.
    """

    def __init__(self, command: list[str], cwd, env: dict[str, str]) -> None:
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        self._start(
            f"saved=$(stty -g); env -i {exports} {shlex.join(command)}; echo KEEL-EXIT=$?; "
            '[ "$(stty -g)" = "$saved" ] && echo TTY=same || echo TTY=changed; sleep 120',
            cwd,
        )

    @classmethod
    def exec(cls, command: list[str], cwd) -> Terminal:
        """The command as the pane's only process (its session leader), as `tmux new-window CMD` runs it."""
        terminal = cls.__new__(cls)
        terminal._start(f"exec {shlex.join(command)}", cwd)
        return terminal

    def _start(self, shell: str, cwd) -> None:
        self.name = f"keel-test-{uuid.uuid4().hex[:8]}"
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

    def screen(self, joined: bool = False) -> str:
        """The visible screen; `joined`: lines the terminal wrapped are one line again."""
        return subprocess.run(
            ["tmux", "capture-pane", "-p", *(["-J"] if joined else []), "-t", self.name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def display(self, fmt: str) -> str:
        return subprocess.run(
            ["tmux", "display", "-p", "-t", self.name, fmt],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    def modes(self) -> str:
        return self.display(MODES)

    def keys(self, *keys: str, literal: bool = False) -> None:
        subprocess.run(
            ["tmux", "send-keys", "-t", self.name, *(["-l"] if literal else []), *keys], check=True
        )

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen(joined=True)
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")

    def wait_for_prompt(self, prompt: str, timeout: float = 60) -> None:
        """Until the shell's prompt is the screen's last line: it has taken the terminal back and reads again
        (keys typed before that may be flushed with the shell's terminal settings)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = [line for line in self.screen().splitlines() if line.strip()]
            if lines and lines[-1].strip() == prompt.strip():
                return
            time.sleep(0.2)
        raise AssertionError(
            f"the prompt {prompt!r} never came back; the screen shows:\n{self.screen()}"
        )

    def wait_for_modes(self, modes: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while self.modes() != modes:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the terminal's modes stayed {self.modes()!r}, not {modes!r}:\n{self.screen()}"
                )
            time.sleep(0.2)

    def keel_processes(self) -> tuple[int, int]:
        """(the first `keel` process, the one running the UI) under the pane: one process or two."""
        chain, parent = [], int(self.display("#{pane_pid}"))
        while True:  # down the tree: the shell, keel, its UI (if it has one of its own)
            keel = [pid for pid, comm in processes_under(parent) if comm.startswith("keel")]
            if not keel:
                break
            chain.append(keel[0])
            parent = keel[0]
        assert chain, "no keel process runs in the pane"
        return chain[0], chain[-1]

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True, check=False)


def processes_under(parent: int) -> list[tuple[int, str]]:
    """(pid, name) of the parent's child processes."""
    table = subprocess.run(
        ["ps", "-e", "-o", "pid=,ppid=,comm="], capture_output=True, text=True, check=True
    ).stdout
    rows = [line.split(None, 2) for line in table.splitlines()]
    return [(int(pid), comm.strip()) for pid, ppid, comm in rows if int(ppid) == parent]


def wait_until_gone(pid: int, timeout: float = 30) -> None:
    """Until the process has ended (a zombie waiting for its parent counts as ended)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rpartition(")")[2].split()[0] in ("Z", "X"):
                    return
        except FileNotFoundError:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} is still running")
        time.sleep(0.2)
