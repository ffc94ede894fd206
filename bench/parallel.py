"""Many agents in one process: steps per second against linear scaling, and memory per extra agent.

Each agent is a real Session (real model client, real tools) against a model stand-in that answers
every request after 50 ms of "model latency": STEPS read_file calls, then a final answer. The
stand-in is bench/lean_server.py (the scripted server's wire format, next to no CPU: a real model
runs elsewhere); `--server scripted` uses the tests' ScriptedServer instead. Two modes:
`sessions` (bare sessions, each in its own directory) and `batch` (the `keel batch` local backend:
a git worktree per agent, the agent, commit and cleanup). Each agent count runs in a fresh child
process so its RSS is its own; the server runs in another process so its CPU is not counted.

Where mini-swe-agent is installed (bench/parallel_peer.py says how), its batch workers run the same
work beside keel's, in the same table.

    python bench/parallel.py [--counts 1,8,32,64] [--steps 20] [--modes sessions,batch] [--skip-peer] [--profile N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

GOAL_LINEAR, GOAL_MB = 0.8, 15.0


# ---------------------------------------------------------------- the scripted model (server process)


def serve(steps: int, delay: float, kind: str) -> None:
    """The model stand-in: the lean asyncio server (default), or the tests' ScriptedServer."""
    from keel.agent.harness.testing.scripted_server import (
        ChatRequest,
        Reply,
        ScriptedServer,
        ScriptedToolCall,
    )

    replies = [
        Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": f"f{n}.txt"})])
        for n in range(steps)
    ] + [Reply(text="All files read.")]
    if kind == "lean":
        from lean_server import LeanServer

        asyncio.run(LeanServer(replies, delay).run(lambda url: print(url, flush=True)))
        return

    def responder(request: ChatRequest) -> Reply:
        done = sum(1 for message in request.messages if message.get("role") == "tool")
        return replies[min(done, steps)].model_copy(update={"delay": delay})

    with ScriptedServer(script=responder) as server:
        print(server.url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- agents (child process)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def make_files(directory: Path, steps: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for n in range(steps):
        (directory / f"f{n}.txt").write_text("".join(f"line {i} of file {n}\n" for i in range(40)))


def make_repo(repo: Path, steps: int) -> None:
    make_files(repo, steps)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "files"]):
        subprocess.run([*git, *command], cwd=repo, check=True)


def settings_for(url: str, cwd: Path):
    from keel.agent.core.settings import SessionSettings

    return SessionSettings(
        cwd=cwd,
        model=os.environ.get("BENCH_MODEL", "openai/bench"),
        api_base=url,
        context_window=131_072,
        retries=0,
    )


async def one_session(url: str, cwd: Path) -> int:
    from keel.agent.core.protocol import TaskFinished, UserPrompt
    from keel.agent.core.session import Session

    async with Session(settings_for(url, cwd)) as session:
        session.submit(UserPrompt(text="Read every file."))
        async for event in session.events():
            if isinstance(event, TaskFinished):
                assert event.status == "completed", event
                return event.steps
    return 0


def prepare(mode: str, work: Path, agents: int, steps: int) -> None:
    """The agents' files (or the batch repo), made before the clock starts."""
    if mode == "sessions":
        for n in range(agents):
            make_files(work / f"agent{n}", steps)
    else:
        make_repo(work / "repo", steps)


async def run_sessions(url: str, work: Path, agents: int, steps: int) -> int:
    results = await asyncio.gather(*(one_session(url, work / f"agent{n}") for n in range(agents)))
    return sum(results)


async def run_batch(url: str, work: Path, agents: int, steps: int) -> int:
    from keel.agent.harness.batch.runner import AttemptSpec, run_local
    from keel.agent.harness.batch.tasks import Task

    repo = work / "repo"
    specs = [
        AttemptSpec(
            task=Task(id=f"a{n}", prompt="Read every file.", repo=repo),
            attempt=1,
            settings=settings_for(url, repo),
            out_dir=work / "out",
            worktree_root=work / "trees",
        )
        for n in range(agents)
    ]
    rows = []
    await run_local(specs, agents, rows.append, asyncio.Event())
    assert all(row.status == "completed" for row in rows), [row.reason for row in rows]
    return sum(row.steps for row in rows)


async def measured(mode: str, url: str, work: Path, agents: int, steps: int) -> dict:
    prepare(mode, work, agents, steps)
    peak = rss_mb()

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, rss_mb())
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    cpu, started = time.process_time(), time.perf_counter()
    runner = run_sessions if mode == "sessions" else run_batch
    total = await runner(url, work, agents, steps)
    wall = time.perf_counter() - started
    sampler.cancel()
    return {"steps": total, "wall": wall, "cpu": time.process_time() - cpu, "peak_rss": peak}


def child(mode: str, url: str, agents: int, steps: int, profile: bool) -> None:
    os.environ["KEEL_HOME"] = tempfile.mkdtemp(prefix="keel-bench-home-")
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        prepare("sessions", Path(tmp) / "warmup", 1, 2)
        asyncio.run(
            run_sessions(url, Path(tmp) / "warmup", 1, 2)
        )  # imports, encodings, connection pool
        from keel.agent.core.runtime import tune_gc

        tune_gc()  # as `keel run` and `keel batch` do before their agents start
        baseline = rss_mb()
        if profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.enable()
        result = asyncio.run(measured(mode, url, Path(tmp) / "run", agents, steps))
        if profile:
            profiler.disable()
            profiler.dump_stats(os.environ.get("BENCH_PROFILE_FILE", os.devnull))
            pstats.Stats(profiler, stream=sys.stderr).sort_stats(
                os.environ.get("BENCH_SORT", "tottime")
            ).print_stats(int(os.environ.get("BENCH_TOP", "25")))
    result["baseline_rss"] = baseline
    print(json.dumps(result), flush=True)


# ---------------------------------------------------------------- the report (parent process)


def run_child(mode: str, url: str, agents: int, steps: int, profile: bool = False) -> dict:
    command = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--url",
        url,
        "--agents",
        str(agents),
        "--steps",
        str(steps),
    ] + (["--profile-child"] if profile else [])
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{mode} with {agents} agents failed:\n{out.stderr[-3000:]}")
    if profile:
        print(out.stderr, file=sys.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_run(
    mode: str, url: str, agents: int, steps: int, server_pid: int, repeat: int
) -> tuple[dict, float]:
    """The run with the median rate of `repeat` fresh runs (a shared 2-core machine varies by ±10%),
    and the server's CPU during it."""
    runs = []
    for _ in range(repeat):
        server_cpu = cpu_seconds(server_pid)
        result = run_child(mode, url, agents, steps)
        runs.append((result, cpu_seconds(server_pid) - server_cpu))
    runs.sort(key=lambda run: run[0]["steps"] / run[0]["wall"])
    return runs[len(runs) // 2]


def report(
    mode: str, url: str, counts: list[int], steps: int, server_pid: int, repeat: int
) -> None:
    print(f"\n{mode}: {steps} steps per agent, 50 ms model latency, median of {repeat} runs")
    print(
        f"{'agents':>6} {'steps/s':>8} {'x linear':>9} {'wall s':>7} {'cpu/step ms':>12}"
        f" {'server cpu/step':>16} {'peak RSS MB':>12} {'MB/extra agent':>15}"
    )
    base: dict | None = None
    for agents in counts:
        result, server_cpu = median_run(mode, url, agents, steps, server_pid, repeat)
        rate = result["steps"] / result["wall"]
        base = base or {**result, "rate": rate, "agents": agents}
        linear = rate / (base["rate"] * agents / base["agents"])
        extra = agents - base["agents"]
        per_agent = (result["peak_rss"] - base["peak_rss"]) / extra if extra else 0.0
        requests = result["steps"] + agents  # each agent's last request is its answer
        print(
            f"{agents:>6} {rate:>8.1f} {linear:>9.2f} {result['wall']:>7.2f}"
            f" {1000 * result['cpu'] / result['steps']:>12.2f} {1000 * server_cpu / requests:>16.2f}"
            f" {result['peak_rss']:>12.0f} {per_agent if extra else float('nan'):>15.2f}"
        )
        if agents == 64 and mode == "sessions":
            verdict = "meets" if linear >= GOAL_LINEAR and per_agent <= GOAL_MB else "misses"
            print(
                f"  goal at 64: >= {GOAL_LINEAR}x linear, <= {GOAL_MB:.0f} MB per extra agent: {verdict}"
            )
        elif agents == 64:
            print(
                "  (batch adds per agent a git worktree, whose registration is serialized so git's locks never"
                " collide, a commit, a patch and cleanup: context for the goal, which is about the agents)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,8,32,64")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--modes", default="sessions,batch")
    parser.add_argument(
        "--model",
        default="openai/bench",
        help="litellm model name the agents use (its prefix picks litellm's provider code path)",
    )
    parser.add_argument(
        "--server",
        choices=["lean", "scripted"],
        default="lean",
        help="the model stand-in: a lean asyncio server, or the tests' ScriptedServer",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per agent count (the median is shown)"
    )
    parser.add_argument(
        "--skip-peer", action="store_true", help="leave out mini-swe-agent's workers"
    )
    parser.add_argument(
        "--profile", type=int, metavar="N", help="print a cProfile of N agents (sessions mode)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--profile-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--agents", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        return serve(options.steps, options.delay, options.server)
    os.environ["BENCH_MODEL"] = options.model  # children inherit it
    if options.child:
        return child(
            options.child, options.url, options.agents, options.steps, options.profile_child
        )
    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            "--steps",
            str(options.steps),
            "--delay",
            str(options.delay),
            "--server",
            options.server,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        counts = [int(n) for n in options.counts.split(",")]
        print(
            f"keel bench/parallel: {os.cpu_count()} CPUs; agents in one process; "
            f"max RSS of this parent {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB"
        )
        if options.profile:
            run_child("sessions", url, options.profile, options.steps, profile=True)
            return
        for mode in options.modes.split(","):
            report(mode, url, counts, options.steps, server.pid, options.repeat)
        if not options.skip_peer:
            # mini-swe-agent, where it is installed (its own venv)
            from parallel_peer import peer_table

            print("\n".join(peer_table(counts, options.steps, options.delay) or []))
    finally:
        server.stdin.close()
        server.terminate()  # the lean server does not watch stdin
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
