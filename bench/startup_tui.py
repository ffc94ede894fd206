"""bench/startup_tui: time from launching the TUI to its first paint (goal ≤ 0.4 s), against bare baselines.

Each run is a fresh process that resolves the config like `keel`, builds the app and reports the
wall time from the parent's launch to the main screen's first refresh (headless), and whether the
core's session module, litellm or llama.cpp were loaded by then (they should not be: the UI paints
first). Two launches: with a model configured, and with nothing configured (the README's first
command: the embedded model). Baselines in the same run: `python -c pass`, and a bare Textual app
painting one Static. Where tmux is installed, the real `keel` command is also timed in a terminal,
from launch until its prompt box is on the screen, against the bare app's text in the same way.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import row

REPEAT = 9
GOAL = 0.4
LAUNCHES = {  # the config flags of each launch
    "model configured": {"model": "openai/any", "api_base": "http://127.0.0.1:9/v1"},
    "nothing configured": {},
}

KEEL_PROBE = """
import sys, time
from pathlib import Path
from agent.config import resolve_config
from tui.app import KeelApp, initial_settings
cwd = Path.cwd()
config = resolve_config(cwd, FLAGS)

class Probe(KeelApp):
    def _start_warm_up(self):  # runs once the main screen has painted
        loaded = [name for name in ("agent.session", "litellm", "llama_cpp") if name in sys.modules]
        print(time.time(), ",".join(loaded) or "-", flush=True)
        self.exit()

Probe(initial_settings(config, cwd, []), config).run(headless=True, size=(120, 40))
"""

BARE_PROBE = """
import time
from textual.app import App
from textual.widgets import Static

class Probe(App):
    def compose(self):
        yield Static("hello")

    def on_mount(self):
        self.call_after_refresh(self.painted)

    def painted(self):
        print(time.time(), "-", flush=True)
        self.exit()

Probe().run(headless=True, size=(120, 40))
"""


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
    """Seconds from launching a command in a fresh 120x40 tmux window until `marker` is on its screen."""
    line = shlex.join(["env", *(f"{key}={value}" for key, value in env.items()), *command])
    start = time.perf_counter()
    window = subprocess.run(
        [*TMUX, "new-window", "-d", "-P", "-F", "#{window_id}", "-c", cwd, line],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
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


def terminal_rows(workspace: str, home: str) -> None:
    """The `keel` console script with nothing configured (the embedded model from the user's cache)."""
    keel = Path(sys.executable).with_name("keel")
    if shutil.which("tmux") is None or not keel.exists():
        row("in a terminal: skipped (needs tmux and the keel script)", "")
        return
    env = {"PATH": os.environ["PATH"], "XDG_CONFIG_HOME": home, "TERM": "xterm-256color"}
    # a holder session keeps the server up between windows (it exits with its last session)
    subprocess.run(
        [*TMUX, "new-session", "-d", "-s", "holder", "-x", "120", "-y", "40", "sleep 600"],
        check=True,
    )
    bare_runs, keel_runs = [], []
    try:
        for _ in range(REPEAT):
            bare_runs.append(
                in_terminal(
                    [sys.executable, "-c", TERMINAL_BARE], "bare Textual painted", workspace, env
                )
            )
            keel_runs.append(in_terminal([str(keel)], "Ask keel", workspace, env))
    finally:
        subprocess.run([*TMUX, "kill-server"], check=False, capture_output=True)
    bare, keel_paint = statistics.median(bare_runs), statistics.median(keel_runs)
    verdict = "met" if keel_paint <= GOAL else "MISSED"
    print(f"in a terminal (tmux 120x40, launch until on screen, median of {REPEAT})")
    row("bare Textual app, one Static (baseline)", f"{bare * 1000:.0f} ms", "1.00x")
    row(
        "`keel`, nothing configured",
        f"{keel_paint * 1000:.0f} ms",
        f"{keel_paint / bare:.2f}x baseline   goal ≤ {GOAL * 1000:.0f} ms: {verdict}",
    )


def bare_python() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def config_import(after: str = "") -> float:
    """Seconds to import agent.config, which `keel` does before it hands over to the TUI.

    With `after`, those imports come first: what agent.config adds to what the TUI loads anyway.
    """
    code = (
        f"{after}\n"
        "import time; t = time.perf_counter(); import agent.config; print(time.perf_counter() - t)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    return float(out.stdout)


def main() -> None:
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as home:
        subprocess.run(["git", "init", "-q", workspace], check=True)
        python = statistics.median(bare_python() for _ in range(REPEAT))
        bare_runs: list[float] = []
        keel_runs: dict[str, list[tuple[float, str]]] = {launch: [] for launch in LAUNCHES}
        for _ in range(REPEAT):  # interleaved, so a change in the machine's load hits all alike
            bare_runs.append(first_paint(BARE_PROBE, workspace, home)[0])
            for launch, flags in LAUNCHES.items():
                probe = KEEL_PROBE.replace("FLAGS", repr(flags))
                keel_runs[launch].append(first_paint(probe, workspace, home))
        bare = statistics.median(bare_runs)
        config = statistics.median(config_import() for _ in range(REPEAT))
        config_extra = statistics.median(
            config_import("import textual.app, textual.widgets._static") for _ in range(REPEAT)
        )
    print(f"tui time to first paint (median of {REPEAT}, headless)")
    row("bare python -c pass", f"{python * 1000:.0f} ms", f"{python / bare:.2f}x")
    row("bare Textual app, one Static (baseline)", f"{bare * 1000:.0f} ms", "1.00x")
    loaded: set[str] = set()
    for launch, runs in keel_runs.items():
        keel = statistics.median(seconds for seconds, _ in runs)
        loaded |= {name for _, names in runs for name in names.split(",") if name != "-"}
        verdict = "met" if keel <= GOAL else "MISSED"
        row(
            f"keel TUI main screen, {launch}",
            f"{keel * 1000:.0f} ms",
            f"{keel / bare:.2f}x baseline   goal ≤ {GOAL * 1000:.0f} ms: {verdict}",
        )
    row(
        "  of which: import agent.config (the CLI's)",
        f"{config * 1000:.0f} ms",
        f"{config / bare:.2f}x baseline",
    )
    row(
        "  of which: agent.config past Textual's imports",
        f"{config_extra * 1000:.0f} ms",
        f"{config_extra / bare:.2f}x baseline",
    )
    row("loaded before first paint (want none)", ", ".join(loaded) or "none")
    with tempfile.TemporaryDirectory() as workspace, tempfile.TemporaryDirectory() as home:
        subprocess.run(["git", "init", "-q", workspace], check=True)
        terminal_rows(workspace, home)


if __name__ == "__main__":
    main()
