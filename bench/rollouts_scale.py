"""Rollouts at scale: N concurrent sessions in one process against a model with 1 s latency.

Issue 18's goal: one process holds >= 1,000 concurrent rollouts at >= 0.8x linear step throughput
(N x the rate of one rollout alone) and <= 1 MB of memory per extra rollout. Each rollout is a real
Session (real model client over HTTP, real tools, its session log) in its own small workspace: STEPS
read_file calls, then a final answer. The model stand-in is bench/lean_server.py in its own process,
answering every request after DELAY seconds; with --tokens it sends vLLM-shaped token ids and logprobs
and the sessions run with `record_tokens` (issue 32: the same goal with them). Its prompt ids are a prefix
of one fixed sequence, so each prompt holds the previous one whole but not its completion, as a real
request's holds the previous one up to keel's status line: the log keeps what each prompt adds. Each count
runs in a fresh child process, so its RSS is its own; the child is warmed up (imports, templates,
encodings) against an in-process server first. Each row gives the machine's load average beside its ratio
(on a shared machine the ratio is only as good as the CPU left to the rollouts), the CPU time of a fixed
pure-Python workload run in the child just before and after the rollouts (a virtual machine's host may run it
twice as fast at one hour as at another: at 1,000 rollouts the ratio follows it) and the session logs' size.

    python bench/rollouts_scale.py [--counts 1,100,500,1000] [--steps 20] [--delay 1.0] [--tokens]
        [--repeat 1] [--profile N] [--py-spy N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from parallel import cpu_seconds, make_files, rss_mb

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

GOAL_LINEAR, GOAL_MB, GOAL_COUNT = 0.8, 1.0, 1000
REFERENCE = [{"n": n, "text": f"line {n} of a file", "ids": [n, n + 1, n + 2]} for n in range(2000)]


def reference_ms() -> float:
    """CPU milliseconds of a fixed workload (JSON both ways, as a step's events and requests are): the
    machine's speed at the moment, beside a ratio that depends on it."""
    started = time.process_time()
    for _ in range(10):
        json.loads(json.dumps(REFERENCE))
    return 1000 * (time.process_time() - started)


def replies(steps: int) -> list:
    from keel.agent.harness.testing.scripted_wire import Reply, ScriptedToolCall

    calls = [
        Reply(tool_calls=[ScriptedToolCall(name="read_file", arguments={"path": f"f{n}.txt"})])
        for n in range(steps)
    ]
    return [*calls, Reply(text="All files read.")]


def serve(steps: int, delay: float, tokens: bool) -> None:
    """The model stand-in's process: prints its URL, then serves until terminated."""
    from lean_server import LeanServer

    raise_fd_limit()
    server = LeanServer(replies(steps), delay, tokens=tokens)
    asyncio.run(server.run(lambda url: print(url, flush=True)))


def raise_fd_limit() -> int:
    """Each rollout holds a connection and its log open: allow as many descriptors as the system lets us."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# ---------------------------------------------------------------- rollouts (child process)


def settings_for(url: str, cwd: Path, tokens: bool):
    from keel.agent.core.settings import SessionSettings

    return SessionSettings(
        cwd=cwd,
        model="openai/bench",
        api_base=url,
        context_window=131_072,
        retries=0,
        record_tokens=tokens,
        auto_budget=False,  # the stand-in counts a prompt's ids as its tokens: an estimate would stop it
    )


async def rollout(url: str, cwd: Path, tokens: bool) -> int:
    """One rollout to its end; its number of steps."""
    from keel.agent.core.protocol import TaskFinished, UserPrompt
    from keel.agent.core.session import Session

    async with Session(settings_for(url, cwd, tokens)) as session:
        session.submit(UserPrompt(text="Read every file."))
        async for event in session.events():
            if isinstance(event, TaskFinished):
                assert event.status == "completed", event
                return event.steps
    return 0


async def rollouts(url: str, work: Path, count: int, tokens: bool) -> int:
    done = await asyncio.gather(*(rollout(url, work / f"r{n}", tokens) for n in range(count)))
    return sum(done)


async def warm_up(work: Path, steps: int, tokens: bool) -> None:
    """One rollout against an in-process server with no latency: imports, templates, encodings."""
    from lean_server import LeanServer

    make_files(work, steps)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(LeanServer(replies(steps), 0.0, tokens).run(ready.set_result))
    await rollouts(await ready, work.parent, 1, tokens)
    server.cancel()


async def measured(
    url: str, work: Path, count: int, steps: int, tokens: bool, warm_logs: int
) -> dict:
    """The rollouts' steps, wall and CPU seconds, peak RSS, the machine's load and their logs' size
    (`warm_logs`: the bytes the warm-up logged, not counted)."""
    for n in range(count):
        make_files(work / f"r{n}", steps)
    peak = rss_mb()

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, rss_mb())
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    cpu, started = time.process_time(), time.perf_counter()
    total = await rollouts(url, work, count, tokens)
    wall = time.perf_counter() - started
    sampler.cancel()
    logs = Path(os.environ["KEEL_HOME"]) / "sessions"
    log_bytes = sum(log.stat().st_size for log in logs.glob("*.jsonl")) - warm_logs
    return {
        "steps": total,
        "wall": wall,
        "cpu": time.process_time() - cpu,
        "peak_rss": peak,
        "load": os.getloadavg()[0],  # the machine's, over the last minute of the run
        "log_bytes": log_bytes,
    }


def child(url: str, count: int, steps: int, tokens: bool, profile: bool) -> None:
    raise_fd_limit()
    os.environ["KEEL_HOME"] = tempfile.mkdtemp(prefix="keel-scale-home-")
    try:
        with tempfile.TemporaryDirectory(prefix="keel-scale-") as tmp:
            asyncio.run(warm_up(Path(tmp) / "warm" / "r0", steps, tokens))
            from keel.agent.core.runtime import tune_gc

            tune_gc()  # as `keel run` and `keel batch` do before their agents start
            baseline = rss_mb()
            profiler = None
            if profile:
                import cProfile

                profiler = cProfile.Profile(time.process_time)  # CPU, not wall: a shared machine
                profiler.enable()
            logs = Path(os.environ["KEEL_HOME"]) / "sessions"
            warm_logs = sum(log.stat().st_size for log in logs.glob("*.jsonl"))
            before = reference_ms()
            result = asyncio.run(measured(url, Path(tmp) / "run", count, steps, tokens, warm_logs))
            result["reference_ms"] = (before + reference_ms()) / 2
            if profiler is not None:
                import pstats

                profiler.disable()
                stats = pstats.Stats(profiler, stream=sys.stderr)
                stats.sort_stats(os.environ.get("BENCH_SORT", "tottime")).print_stats(
                    int(os.environ.get("BENCH_TOP", "30"))
                )
                if callers := os.environ.get("BENCH_CALLERS"):  # who calls a hot function
                    stats.print_callers(callers)
                if callees := os.environ.get("BENCH_CALLEES"):  # what a hot function spends on
                    stats.print_callees(callees)
    finally:
        shutil.rmtree(os.environ["KEEL_HOME"], ignore_errors=True)
    print(json.dumps({**result, "baseline_rss": baseline}), flush=True)


# ---------------------------------------------------------------- the report (parent process)


def run_child(url: str, count: int, options: argparse.Namespace, profile: str = "") -> dict:
    command = [sys.executable, __file__, "--child", "--url", url, "--count", str(count)]
    command += ["--steps", str(options.steps)] + (["--tokens"] if options.tokens else [])
    if profile == "cprofile":
        command.append("--profile-child")
    elif profile == "py-spy":
        out = f"/tmp/rollouts_scale_{count}.svg"
        command = ["py-spy", "record", "--nonblocking", "-r", "50", "-o", out, "--", *command]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{count} rollouts failed:\n{done.stderr[-3000:]}")
    if profile:
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def median_run(
    url: str, count: int, options: argparse.Namespace, server: int
) -> tuple[dict, float]:
    """The run with the median rate of `repeat` fresh runs, and the server's CPU seconds during it."""
    runs = []
    for _ in range(options.repeat):
        before = cpu_seconds(server)
        result = run_child(url, count, options)
        runs.append((result, cpu_seconds(server) - before))
    runs.sort(key=lambda run: run[0]["steps"] / run[0]["wall"])
    return runs[len(runs) // 2]


def report(url: str, options: argparse.Namespace, server: int) -> None:
    counts = [int(n) for n in options.counts.split(",")]
    tokens = "token ids and logprobs recorded" if options.tokens else "no token ids"
    print(
        f"keel bench/rollouts_scale: {os.cpu_count()} CPUs; {options.steps} steps per rollout, "
        f"{options.delay:g} s model latency, {tokens}; median of {options.repeat} run(s); "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'rollouts':>8} {'steps/s':>8} {'x linear':>9} {'load':>5} {'wall s':>7} {'cpu/step ms':>12}"
        f" {'ref ms':>7} {'keel cpu':>9} {'server cpu':>11} {'peak RSS MB':>12} {'MB/extra':>9}"
        f" {'log KB/rollout':>15}"
    )
    base: dict | None = None
    verdicts = []
    for count in counts:
        result, server_cpu = median_run(url, count, options, server)
        rate = result["steps"] / result["wall"]
        base = base or {**result, "rate": rate, "count": count}
        linear = rate / (base["rate"] * count / base["count"])
        extra = count - base["count"]
        per_rollout = (result["peak_rss"] - base["peak_rss"]) / extra if extra else float("nan")
        print(
            f"{count:>8} {rate:>8.1f} {linear:>9.2f} {result['load']:>5.1f} {result['wall']:>7.2f}"
            f" {1000 * result['cpu'] / result['steps']:>12.3f} {result['reference_ms']:>7.1f}"
            f" {100 * result['cpu'] / result['wall']:>8.0f}%"
            f" {100 * server_cpu / result['wall']:>10.0f}%"
            f" {result['peak_rss']:>12.0f} {per_rollout:>9.3f}"
            f" {result['log_bytes'] / count / 1024:>15.1f}"
        )
        if count >= GOAL_COUNT:
            verdicts.append(linear >= GOAL_LINEAR and per_rollout <= GOAL_MB)
    print(
        f"goal at >= {GOAL_COUNT} rollouts: >= {GOAL_LINEAR}x linear, <= {GOAL_MB:g} MB per extra"
        f" rollout: {'meets' if verdicts and all(verdicts) else 'misses' if verdicts else 'not run'}"
    )
    print(
        f"load average now {os.getloadavg()[0]:.1f}. x linear: steps/s against N x the rate of the"
        " first count; load: the machine's 1-minute load average at the end of that run (over"
        f" {os.cpu_count()} CPUs, other processes' share is theirs); ref ms: the CPU time of a fixed"
        " workload in the rollouts' process before and after them (lower: a faster machine then; at"
        " 1,000 rollouts the ratio follows it); log KB/rollout: its session log. keel cpu and server"
        " cpu: the share of one core the rollouts' process and the"
        " model stand-in used; the stand-in must stay well under 100%, and on a shared machine the"
        " rollouts get what other processes leave (their cpu/step is the figure that is keel's own)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,100,500,1000")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--delay", type=float, default=1.0, help="model latency per call, seconds")
    parser.add_argument(
        "--tokens",
        action="store_true",
        help="the server sends token ids and logprobs (vLLM's shape); sessions record them",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per count (the median)")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile one run of N rollouts")
    parser.add_argument(
        "--py-spy", type=int, metavar="N", help="py-spy flame graph of N rollouts (/tmp/*.svg)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profile-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        return serve(options.steps, options.delay, options.tokens)
    if options.child:
        return child(
            options.url, options.count, options.steps, options.tokens, options.profile_child
        )
    command = [sys.executable, __file__, "--serve", "--steps", str(options.steps)]
    command += ["--delay", str(options.delay)] + (["--tokens"] if options.tokens else [])
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        if options.profile or options.py_spy:
            kind = "cprofile" if options.profile else "py-spy"
            result = run_child(url, options.profile or options.py_spy, options, kind)
            print(json.dumps(result))
            return
        report(url, options, server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
