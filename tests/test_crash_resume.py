"""Crash safety: `keel run` killed with SIGKILL at 50 random points of a scripted session, then resumed.

After every kill the session is resumed (`keel run --resume ID`); a resumed run may itself be killed
again (a crash while recovering), and every session must finally finish. At each kill every file
holds one of its versions (old or new, never torn); at the end, its final version. Chaining kills in
a session keeps the number of processes (each pays litellm's import) near 60 rather than 100.
The scripted model is stateless across processes: it picks the next step from the conversation it
is sent, so a resumed session goes on where its log says it stopped (redoing an interrupted step).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from keel_cli import KEEL, git_repo, keel_env, run_keel

from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall
from keel.tools.editing.fileio import TEMP_SUFFIX

KILLS = int(os.environ.get("CRASH_KILLS", "50"))
PARALLEL = 4
KILLS_PER_SESSION = 5
SEED = 20250807
INTERRUPTED = (
    "Interrupted before it finished."  # what keel.agent.core.fold answers an unfinished call with
)
FINAL = "All twelve steps are done."
# keel.tools.editing.edit_support's refusal of an edit to a file changed since it was read
STALE = "changed on disk since you last read or wrote it"


def body(tag: str, lines: int) -> str:
    return "".join(f"{tag} line {i:04d} " + "x" * 60 + "\n" for i in range(lines))


BASE = {
    "base1.txt": "start\nTOKEN_01\nmiddle\nTOKEN_04\nmore\nTOKEN_10\nend\n",
    "base2.txt": body("b2", 100) + "TOKEN_03\n" + body("b2b", 50) + "TOKEN_09\n" + body("b2c", 50),
    "base3.txt": "windows\r\nTOKEN_07\r\nfile\r\n",
}
A1, A2, B, BIG = body("a1", 40), body("a2", 60), body("b", 30), body("big", 500)


def patch(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def call(name: str, **arguments: object) -> ScriptedToolCall:
    return ScriptedToolCall(name=name, arguments=arguments)


# Each step is one reply (one or two calls). Redoing a step whose change already landed fails
# harmlessly (the file exists, the old text is gone), so no step can apply twice.
STEPS: list[list[ScriptedToolCall]] = [
    [call("write_file", path="notes/a.txt", content=A1)],
    [
        call("read_file", path="base1.txt"),
        call("edit_file", path="base1.txt", old_string="TOKEN_01", new_string="DONE_01"),
    ],
    [call("write_file", path="notes/b.txt", content=B)],
    [call("apply_patch", patch=patch("base2.txt", "TOKEN_03", "DONE_03"))],
    [call("edit_file", path="base1.txt", old_string="TOKEN_04", new_string="DONE_04")],
    [call("write_file", path="big.txt", content=BIG)],
    [call("edit_file", path="base3.txt", old_string="TOKEN_07", new_string="DONE_07")],
    [call("read_file", path="notes/a.txt"), call("write_file", path="notes/a.txt", content=A2)],
    [call("apply_patch", patch=patch("base2.txt", "TOKEN_09", "DONE_09"))],
    [call("apply_patch", patch="*** Begin Patch\n*** Delete File: notes/b.txt\n*** End Patch\n")],
    [call("edit_file", path="base1.txt", old_string="TOKEN_10", new_string="DONE_10")],
    [call("apply_patch", patch=patch("big.txt", "big line 0480 " + "x" * 60, "BIG LINE 480"))],
]


def versions() -> dict[str, list[str | None]]:
    """Every content each file may hold, in order: None for absent."""
    states: dict[str, list[str | None]] = {name: [text] for name, text in BASE.items()}
    states.update({"notes/a.txt": [None], "notes/b.txt": [None], "big.txt": [None]})

    def change(name: str, new: str | None) -> None:
        states[name].append(new)

    def current(name: str) -> str:
        text = states[name][-1]
        assert text is not None
        return text

    change("notes/a.txt", A1)
    change("base1.txt", current("base1.txt").replace("TOKEN_01", "DONE_01"))
    change("notes/b.txt", B)
    change("base2.txt", current("base2.txt").replace("TOKEN_03", "DONE_03"))
    change("base1.txt", current("base1.txt").replace("TOKEN_04", "DONE_04"))
    change("big.txt", BIG)
    change("base3.txt", current("base3.txt").replace("TOKEN_07", "DONE_07"))
    change("notes/a.txt", A2)
    change("base2.txt", current("base2.txt").replace("TOKEN_09", "DONE_09"))
    change("notes/b.txt", None)
    change("base1.txt", current("base1.txt").replace("TOKEN_10", "DONE_10"))
    change("big.txt", current("big.txt").replace("big line 0480 " + "x" * 60, "BIG LINE 480"))
    return states


def step_paths(step: list[ScriptedToolCall]) -> list[str]:
    """The files a step's calls name."""
    paths = []
    for c in step:
        if isinstance(path := c.arguments.get("path"), str):
            paths.append(path)
        for line in str(c.arguments.get("patch", "")).splitlines():
            if line.startswith(("*** Update File: ", "*** Delete File: ")):
                paths.append(line.split(": ", 1)[1])
    return paths


def steps_done(request: ChatRequest) -> tuple[int, bool]:
    """Tool-calling turns whose every call has a real result (an interrupted one is redone), and whether
    the last turn was told a file changed on disk since it was read (a kill after a write landed, before
    its result was logged): as a model would, the step is redone after reading its files again."""
    results = {
        m.get("tool_call_id"): str(m.get("content"))
        for m in request.messages
        if m.get("role") == "tool"
    }
    done, stale = 0, False
    for message in request.messages:
        ids = [c["id"] for c in message.get("tool_calls") or []]
        if ids and all(i in results and not results[i].startswith(INTERRUPTED) for i in ids):
            stale = any(STALE in results[i] for i in ids)
            done += not stale
    return done, stale


def twelve_steps(request: ChatRequest) -> Reply:
    done, stale = steps_done(request)
    if done >= len(STEPS):
        return Reply(text=FINAL)
    reads = [call("read_file", path=path) for path in step_paths(STEPS[done])] if stale else []
    return Reply(tool_calls=[*reads, *STEPS[done]])


def read_state(repo: Path) -> dict[str, str | None]:
    state: dict[str, str | None] = {}
    for name in versions():
        path = repo / name
        state[name] = path.read_bytes().decode() if path.exists() else None
    return state


def stray_temp_files(repo: Path) -> list[str]:
    return [str(p.relative_to(repo)) for p in repo.rglob(f".*{TEMP_SUFFIX}")]


def common_flags(url: str) -> list[str]:
    return [
        "--model",
        "openai/any",
        "--api-base",
        url,
        "--output-format",
        "stream-json",
        "--context-window",
        "200000",
    ]


def logged_steps_done(log: Path) -> int:
    """What the scripted model will count as done when the session resumes from this log."""
    events = [json.loads(line) for line in log.read_bytes().splitlines() if line.endswith(b"}")]
    finished = {e["call_id"]: e["output"] for e in events if e["type"] == "tool.finished"}
    return sum(
        1
        for e in events
        if e["type"] == "assistant.message"
        and e["tool_calls"]
        and all(c["id"] in finished for c in e["tool_calls"])
        and not any(STALE in finished[c["id"]] for c in e["tool_calls"])
    )


@dataclass
class Kill:
    session: int
    process: int  # 0: the first run; n: the n-th resume
    after_lines: int
    steps_done: int = 0  # of the session, as its log says after the kill
    lines_read: int = 0
    torn_files: list[str] = field(default_factory=list)
    stray_temps: list[str] = field(default_factory=list)
    torn_log_tail: bool = False


@dataclass
class SessionRun:
    number: int
    kills: list[Kill] = field(default_factory=list)
    resume_codes: list[int] = field(default_factory=list)
    status: str = ""
    wrong_final: list[str] = field(default_factory=list)
    temps_left: list[str] = field(
        default_factory=list
    )  # after the last resume: a killed write's leftovers
    error: str = ""

    @property
    def finished(self) -> bool:
        return (
            self.status == "completed"
            and not self.wrong_final
            and not self.temps_left
            and set(self.resume_codes) <= {0, -9}
        )


class KillBudget:
    """The kills left to make, claimed one at a time by the parallel sessions."""

    def __init__(self, kills: int) -> None:
        self.left = kills
        self.lock = threading.Lock()
        self.sessions = 0

    def claim(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True

    def next_session(self) -> int | None:
        with self.lock:
            if self.left <= 0:
                return None
            self.sessions += 1
            return self.sessions - 1


def kill_after(argv: list[str], repo: Path, home: Path, kill: Kill, delay: float, err: Path) -> str:
    """Run keel, SIGKILL it after reading `kill.after_lines` event lines (and `delay`); its session id."""
    session_id = ""
    with open(err, "a") as stderr:
        proc = subprocess.Popen(
            argv,
            cwd=repo,
            env=keel_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
        )
        assert proc.stdout is not None
        while kill.lines_read < kill.after_lines:
            line = proc.stdout.readline()
            if not line:
                break
            kill.lines_read += 1
            if kill.lines_read == 1:
                session_id = json.loads(line)["session_id"]
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    return session_id


def run_session(
    number: int, url: str, root: Path, budget: KillBudget, step_lines: list[int]
) -> SessionRun:
    """One session: killed at random points (run, resume, kill again...) until the budget says stop."""
    run = SessionRun(number)
    rng = random.Random(SEED * 1000 + number)
    repo = git_repo(root / f"repo{number}", BASE)
    home = root / f"home{number}"
    allowed = versions()
    argv = [KEEL, "run", *common_flags(url), "do the twelve steps"]
    session_id, done = "", 0
    while True:
        # event lines the next process would print: session.started (+ user.message), the steps left, the end
        lines = (2 if not session_id else 1) + step_lines[-1] - step_lines[done]
        if done >= len(STEPS) or len(run.kills) >= KILLS_PER_SESSION or not budget.claim():
            break
        kill = Kill(number, len(run.kills), rng.randint(2, lines - 1))
        found = kill_after(
            argv,
            repo,
            home,
            kill,
            rng.choice([0.0, 0.0, rng.uniform(0, 0.05)]),
            root / f"err{number}",
        )
        session_id = session_id or found
        run.kills.append(kill)
        state = read_state(repo)
        kill.torn_files = [name for name, text in state.items() if text not in allowed[name]]
        kill.stray_temps = stray_temp_files(repo)
        log = home / "sessions" / f"{session_id}.jsonl"
        kill.torn_log_tail = log.exists() and not log.read_bytes().endswith(b"\n")
        if not session_id:
            run.error = "killed before session.started"
            return run
        done = kill.steps_done = logged_steps_done(log)
        argv = [KEEL, "run", *common_flags(url), "--resume", session_id]
    if not session_id:
        return run
    resumed = run_keel(*argv[1:], cwd=repo, home=home, timeout=180)
    run.resume_codes.append(resumed.returncode)
    try:
        run.status = resumed.events[-1].get("status", "")
    except (ValueError, IndexError):
        run.error = resumed.stderr[-1000:]
    run.wrong_final = [name for name, text in read_state(repo).items() if text != allowed[name][-1]]
    run.temps_left = stray_temp_files(repo)
    if resumed.returncode != 0 and not run.error:
        run.error = resumed.stderr[-1000:]
    return run


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_runs_resume_and_finish_with_no_torn_files(scripted_server, tmp_path):
    server = scripted_server(twelve_steps, args_chunk_chars=4096)
    baseline_repo = git_repo(tmp_path / "baseline", BASE)
    baseline = run_keel(
        "run",
        *common_flags(server.url),
        "do the twelve steps",
        cwd=baseline_repo,
        home=tmp_path / "h0",
    )
    assert baseline.returncode == 0, baseline.stderr[-2000:]
    assert baseline.events[-1]["final_message"] == FINAL
    assert read_state(baseline_repo) == {name: v[-1] for name, v in versions().items()}
    types = baseline.types()
    # step_lines[d]: event lines after session.started and user.message before step d begins
    starts = [i for i, t in enumerate(types) if t == "assistant.message"]
    step_lines = [i - 2 for i in starts] + [len(types) - 2]

    budget = KillBudget(KILLS)

    def worker(_: int) -> list[SessionRun]:
        runs = []
        while (number := budget.next_session()) is not None:
            runs.append(run_session(number, server.url, tmp_path, budget, step_lines))
        return runs

    with ThreadPoolExecutor(PARALLEL) as pool:
        runs = sorted(
            (r for rs in pool.map(worker, range(PARALLEL)) for r in rs), key=lambda r: r.number
        )
    kills = [k for r in runs for k in r.kills]
    resumed_and_finished = sum(len(r.kills) for r in runs if r.finished)
    torn = sum(len(k.torn_files) for k in kills)
    print(
        f"\nkills: {len(kills)}, resumed and finished: {resumed_and_finished}, torn files: {torn}"
    )
    print(
        f"sessions: {len(runs)}; kills in resumed runs: {sum(k.process > 0 for k in kills)}; "
        f"steps done at the kills: {sorted(k.steps_done for k in kills)}; "
        f"torn log tails repaired: {sum(k.torn_log_tail for k in kills)}; "
        f"stray temp files left by killed writes: {len({t for k in kills for t in k.stray_temps})}, "
        f"left after the final resume: {sum(len(r.temps_left) for r in runs)}"
    )
    for run in runs:
        if not run.finished or any(k.torn_files for k in run.kills):
            print(f"  session {run.number}: {run}")
    assert len(kills) == KILLS
    assert torn == 0
    assert resumed_and_finished == KILLS


def test_resume_removes_the_temp_files_of_writes_the_session_made(scripted_server, tmp_path):
    """What a write killed mid-way leaves (its temp file) is removed on resume; nothing else is."""
    write = call("write_file", path="notes/c.txt", content="new\n")
    server = scripted_server([Reply(tool_calls=[write]), "written", "resumed"])
    repo = git_repo(tmp_path / "repo", {"notes/a.txt": "old\n", "b.txt": "b\n"})
    first = run_keel("run", *common_flags(server.url), "write a", cwd=repo, home=tmp_path / "home")
    assert first.returncode == 0, first.stderr[-2000:]
    leftover = (
        repo / "notes" / f".c.txt.k1x9{TEMP_SUFFIX}"
    )  # as a SIGKILL during the write leaves it
    others = [repo / f".b.txt.k2y8{TEMP_SUFFIX}", repo / "notes" / ".c.txt.mine.tmp"]
    for path in [leftover, *others]:
        path.write_text("partial")
    session_id = first.events[0]["session_id"]
    resumed = run_keel(
        "run", *common_flags(server.url), "--resume", session_id, cwd=repo, home=tmp_path / "home"
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert not leftover.exists()
    assert all(path.exists() for path in others)  # b.txt was never written; the other is not keel's
    assert (repo / "notes" / "c.txt").read_text() == "new\n"
