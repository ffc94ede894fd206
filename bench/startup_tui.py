"""bench/startup_tui: time from launching the TUI to its first paint (goal ≤ 0.4 s), against bare baselines.

Each headless run is a fresh process that builds the app the way `keel` does (keel.tui.launch.build_app)
and reports the wall time from the parent's launch to the main screen's first frame, and whether
pydantic, the core's session module, litellm or llama.cpp were loaded by then (none should be: the
UI paints first). Two launches: with a model configured, and with nothing configured (the README's
first command: the embedded model). Baselines in the same run: `python -c pass`, and a bare Textual
app painting one Static. Where tmux is installed, the real `keel` command is also timed in a
terminal, from launch until its prompt box is on the screen, with and without its terminal guard,
against the bare app's text in the same way. Terminal runs get a clean environment (`env -i`), so
an inherited PYTHONDONTWRITEBYTECODE does not make keel compile its modules on every launch, and
each command is launched once untimed first.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import row

REPEAT = 9
GOAL = 0.4
LAUNCHES = {  # the config flags and the repository's .keel/config.toml of each launch
    "model configured": ({"model": "openai/any", "api_base": "http://127.0.0.1:9/v1"}, None),
    "nothing configured": ({}, None),
    "a config file": ({}, 'model = "openai/any"\napi_base = "http://127.0.0.1:9/v1"\n'),
}

FIRST_FRAME = """
import time
from textual.app import App

_display = App._display

def on_first_frame(self, screen, renderable):
    _display(self, screen, renderable)
    if renderable is not None and not getattr(self, "_framed", False):
        self._framed = True
        painted(self)

App._display = on_first_frame
"""

KEEL_PROBE = (
    FIRST_FRAME
    + """
import sys
from pathlib import Path
from keel.agent.core.config_files import ConfigSources
from keel.tui.launch import build_app

def painted(app):
    loaded = ("pydantic", "keel.agent.core.session", "litellm", "llama_cpp")
    print(time.time(), ",".join(name for name in loaded if name in sys.modules) or "-", flush=True)
    app.exit()

cwd = Path.cwd()
build_app(ConfigSources.find(cwd, FLAGS), cwd).run(headless=True, size=(120, 40))
"""
)

BARE_PROBE = (
    FIRST_FRAME
    + """
from textual.widgets import Static

def painted(app):
    print(time.time(), "-", flush=True)
    app.exit()

class Probe(App):
    def compose(self):
        yield Static("hello")

Probe().run(headless=True, size=(120, 40))
"""
)


def first_paint(code: str, cwd: str, home: str) -> tuple[float, str]:
    start = time.time()
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={
            "PATH": "/usr/bin:/bin",
            "KEEL_HOME": home,
            "XDG_CONFIG_HOME": home,
            "PYTHONPATH": str(ROOT),
        },
    ).stdout.split()
    return float(out[0]) - start, out[1]


TERMINAL_BARE = """
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("bare Textual painted")

Bare().run()
"""


TMUX = ["tmux", "-L", f"keel-bench-{os.getpid()}"]  # a server of its own, not the person's


def in_terminal(command: list[str], marker: str, cwd: str, env: dict[str, str]) -> float:
    """Seconds from launching a command in a fresh 120x40 tmux window until `marker` is on its screen.

    The window is closed after, and its process waited for: what it does on the hangup (keel
    closes its sessions) must not run during the next launch.
    """
    line = shlex.join(["env", "-i", *(f"{key}={value}" for key, value in env.items()), *command])
    start = time.perf_counter()
    window, pid = subprocess.run(
        [*TMUX, "new-window", "-d", "-P", "-F", "#{window_id} #{pane_pid}", "-c", cwd, line],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    try:
        while time.perf_counter() - start < 30:
            screen = subprocess.run(
                [*TMUX, "capture-pane", "-p", "-t", window],
                check=False,
                capture_output=True,
                text=True,
            ).stdout
            if marker in screen:
                return time.perf_counter() - start
        raise RuntimeError(f"{command[0]} did not show {marker!r} within 30 s:\n{screen}")
    finally:
        subprocess.run([*TMUX, "kill-window", "-t", window], check=False, capture_output=True)
        ended = time.perf_counter() + 30
        while Path(f"/proc/{pid}").exists() and time.perf_counter() < ended:
            time.sleep(0.01)


def terminal_rows(workspace: str, home: str) -> None:
    """The `keel` console script with nothing configured (the embedded model from the user's cache)."""
    keel = Path(sys.executable).with_name("keel")
    if shutil.which("tmux") is None or not keel.exists():
        row("in a terminal: skipped (needs tmux and the keel script)", "")
        return
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", home),
        "XDG_CONFIG_HOME": home,
        "TERM": "xterm-256color",
    }
    launches = {  # label: (command, marker, extra environment)
        "bare Textual app, one Static (baseline)": (
            [sys.executable, "-c", TERMINAL_BARE],
            "bare Textual painted",
            {},
        ),
        "`keel`, nothing configured": ([str(keel)], "Ask keel", {}),
        "`keel`, terminal guard off": ([str(keel)], "Ask keel", {"KEEL_NO_TERMINAL_GUARD": "1"}),
    }
    # a holder session keeps the server up between windows (it exits with its last session)
    subprocess.run(
        [*TMUX, "new-session", "-d", "-s", "holder", "-x", "120", "-y", "40", "sleep 600"],
        check=True,
    )
    runs: dict[str, list[float]] = {label: [] for label in launches}
    try:
        for rounds in range(
            REPEAT + 1
        ):  # the first round is not timed: it writes keel's .pyc files
            for label, (command, marker, extra) in launches.items():
                seconds = in_terminal(command, marker, workspace, {**env, **extra})
                if rounds:
                    runs[label].append(seconds)
    finally:
        subprocess.run([*TMUX, "kill-server"], check=False, capture_output=True)
    medians = {label: statistics.median(times) for label, times in runs.items()}
    bare = medians.pop("bare Textual app, one Static (baseline)")
    print(f"in a terminal (tmux 120x40, launch until on screen, median of {REPEAT})")
    row("bare Textual app, one Static (baseline)", f"{bare * 1000:.0f} ms", "1.00x")
    for label, seconds in medians.items():
        verdict = "met" if seconds <= GOAL else "MISSED"
        row(
            label,
            f"{seconds * 1000:.0f} ms",
            f"{seconds / bare:.2f}x baseline   goal ≤ {GOAL * 1000:.0f} ms: {verdict}",
        )


def bare_python() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def workspace_for(base: str, label: str, config: str | None) -> str:
    """A git repository per launch, with its .keel/config.toml when it has one."""
    path = Path(base, label.replace(" ", "-"))
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if config is not None:
        (path / ".keel").mkdir()
        (path / ".keel" / "config.toml").write_text(config)
    return str(path)


def trust(workspaces: Iterable[str], home: str) -> None:
    """The person trusts the launches' repositories (`keel trust`), so their config applies in full."""
    record = Path(home, "keel", "trusted_folders.json")
    record.parent.mkdir(parents=True, exist_ok=True)
    folders = [os.path.realpath(path) for path in workspaces]
    record.write_text(json.dumps({"folders": folders, "declined": []}))


def main() -> None:
    with tempfile.TemporaryDirectory() as base, tempfile.TemporaryDirectory() as home:
        workspaces = {label: workspace_for(base, label, c) for label, (_, c) in LAUNCHES.items()}
        trust(workspaces.values(), home)
        bare_space = workspaces["nothing configured"]
        first_paint(BARE_PROBE, bare_space, home)  # untimed: writes .pyc files, warms the caches
        first_paint(KEEL_PROBE.replace("FLAGS", "{}"), bare_space, home)
        python = statistics.median(bare_python() for _ in range(REPEAT))
        bare_runs: list[float] = []
        keel_runs: dict[str, list[tuple[float, str]]] = {launch: [] for launch in LAUNCHES}
        for _ in range(REPEAT):  # interleaved, so a change in the machine's load hits all alike
            bare_runs.append(first_paint(BARE_PROBE, bare_space, home)[0])
            for launch, (flags, _) in LAUNCHES.items():
                probe = KEEL_PROBE.replace("FLAGS", repr(flags))
                keel_runs[launch].append(first_paint(probe, workspaces[launch], home))
        bare = statistics.median(bare_runs)
    print(f"tui time to first frame (median of {REPEAT}, headless)")
    row("bare python -c pass", f"{python * 1000:.0f} ms", f"{python / bare:.2f}x")
    row("bare Textual app, one Static (baseline)", f"{bare * 1000:.0f} ms", "1.00x")
    for launch, runs in keel_runs.items():
        keel = statistics.median(seconds for seconds, _ in runs)
        loaded = sorted({name for _, names in runs for name in names.split(",") if name != "-"})
        verdict = "met" if keel <= GOAL else "MISSED"
        row(
            f"keel TUI main screen, {launch}",
            f"{keel * 1000:.0f} ms",
            f"{keel / bare:.2f}x baseline   goal ≤ {GOAL * 1000:.0f} ms: {verdict}"
            f"   loaded by then: {', '.join(loaded) or 'none'}",
        )
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as home:
        subprocess.run(["git", "init", "-q", workspace], check=True)
        terminal_rows(workspace, home)


if __name__ == "__main__":
    main()
