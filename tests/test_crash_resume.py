"""Crash safety: `keel run` killed with SIGKILL at 50 random points of a scripted session, then resumed.

Every killed session must resume (`keel run --resume ID`) and finish; at the kill, every file must
hold one of its versions (old or new, never torn), and at the end its final version. The scripted
model is stateless across processes: it picks the next step from the conversation it is sent, so a
resumed session goes on where the log says it stopped (redoing a step the kill interrupted).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from keel_cli import KEEL, git_repo, keel_env, run_keel
from scripted_server import ChatRequest, Reply, ScriptedToolCall

KILLS = int(os.environ.get("CRASH_KILLS", "50"))
PARALLEL = 4
SEED = 20250807
INTERRUPTED = "Interrupted before it finished."  # what agent.replay answers an unfinished call with
FINAL = "All twelve steps are done."


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
    [call("read_file", path="base1.txt"), call("edit_file", path="base1.txt", old_string="TOKEN_01", new_string="DONE_01")],
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


def steps_done(request: ChatRequest) -> int:
    """Tool-calling turns whose every call has a real result (an interrupted one is redone)."""
    results = {m.get("tool_call_id"): str(m.get("content")) for m in request.messages if m.get("role") == "tool"}
    done = 0
    for message in request.messages:
        ids = [c["id"] for c in message.get("tool_calls") or []]
        if ids and all(i in results and not results[i].startswith(INTERRUPTED) for i in ids):
            done += 1
    return done


def twelve_steps(request: ChatRequest) -> Reply:
    done = steps_done(request)
    return Reply(text=FINAL) if done >= len(STEPS) else Reply(tool_calls=STEPS[done])


def read_state(repo: Path) -> dict[str, str | None]:
    state: dict[str, str | None] = {}
    for name in versions():
        path = repo / name
        state[name] = path.read_bytes().decode() if path.exists() else None
    return state


def stray_temp_files(repo: Path) -> list[str]:
    return [str(p.relative_to(repo)) for p in repo.rglob(".*.tmp")]


@dataclass
class Case:
    number: int
    kill_after_lines: int
    extra_delay: float
    lines_read: int = 0
    session_id: str = ""
    torn_files: list[str] = field(default_factory=list)
    torn_log_tail: bool = False
    stray_temps: list[str] = field(default_factory=list)
    resume_code: int | None = None
    resume_status: str = ""
    wrong_final: list[str] = field(default_factory=list)
    error: str = ""


def common_flags(url: str) -> list[str]:
    return ["--model", "openai/any", "--api-base", url, "--output-format", "stream-json", "--context-window", "200000"]


def run_case(case: Case, url: str, root: Path) -> Case:
    repo = git_repo(root / f"repo{case.number}", BASE)
    home = root / f"home{case.number}"
    allowed = versions()
    with open(root / f"stderr{case.number}", "w") as err:
        proc = subprocess.Popen(
            [KEEL, "run", *common_flags(url), "do the twelve steps"],
            cwd=repo, env=keel_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=err, start_new_session=True,
        )
        assert proc.stdout is not None
        while case.lines_read < case.kill_after_lines:
            line = proc.stdout.readline()
            if not line:
                break
            case.lines_read += 1
            if case.lines_read == 1:
                case.session_id = json.loads(line)["session_id"]
        time.sleep(case.extra_delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    state = read_state(repo)
    case.torn_files = [name for name, text in state.items() if text not in allowed[name]]
    case.stray_temps = stray_temp_files(repo)
    logs = list((home / "sessions").glob("*.jsonl"))
    case.torn_log_tail = bool(logs) and not logs[0].read_bytes().endswith(b"\n")
    if not case.session_id:
        case.error = "killed before session.started"
        return case
    resumed = run_keel("run", *common_flags(url), "--resume", case.session_id, cwd=repo, home=home, timeout=120)
    case.resume_code = resumed.returncode
    try:
        case.resume_status = resumed.events[-1].get("status", "")
    except (ValueError, IndexError):
        case.error = resumed.stderr[-1000:]
    final = read_state(repo)
    case.wrong_final = [name for name, text in final.items() if text != allowed[name][-1]]
    if resumed.returncode != 0 and not case.error:
        case.error = resumed.stderr[-1000:]
    return case


def test_killed_runs_resume_and_finish_with_no_torn_files(scripted_server, tmp_path):
    server = scripted_server(twelve_steps, args_chunk_chars=4096)
    baseline_repo = git_repo(tmp_path / "baseline", BASE)
    baseline = run_keel("run", *common_flags(server.url), "do the twelve steps", cwd=baseline_repo, home=tmp_path / "h0")
    assert baseline.returncode == 0, baseline.stderr[-2000:]
    assert baseline.events[-1]["final_message"] == FINAL
    assert read_state(baseline_repo) == {name: v[-1] for name, v in versions().items()}
    total_lines = len(baseline.events)

    rng = random.Random(SEED)
    cases = [Case(n, rng.randint(2, total_lines), rng.choice([0.0, 0.0, rng.uniform(0, 0.05)])) for n in range(KILLS)]
    with ThreadPoolExecutor(PARALLEL) as pool:
        done = list(pool.map(lambda case: run_case(case, server.url, tmp_path), cases))

    finished = [c for c in done if c.resume_code == 0 and c.resume_status == "completed" and not c.wrong_final]
    torn = [c for c in done if c.torn_files]
    print(
        f"\nkills: {len(done)}, resumed and finished: {len(finished)}, torn files: {sum(len(c.torn_files) for c in torn)}"
    )
    print(
        f"kill points (event lines read): {sorted(c.lines_read for c in done)} of {total_lines}; "
        f"torn log tails repaired: {sum(c.torn_log_tail for c in done)}; "
        f"stray temp files: {sum(len(c.stray_temps) for c in done)}"
    )
    for case in done:
        if case not in finished or case.torn_files:
            print(f"  case {case.number} (after {case.lines_read} lines): {case}")
    assert torn == []
    assert len(finished) == KILLS
