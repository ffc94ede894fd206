"""mini-swe-agent's batch workers beside bench/parallel.py: same files, same 50 ms stand-in, same table.

Runs N mini-swe-agent agents in one process exactly as its SWE-bench batch mode does (`process_instance`
per instance on a ThreadPoolExecutor with max_workers=N, its LitellmModel, its LocalEnvironment, which
runs every command as a `sh -c` subprocess). Each agent runs `cat fN.txt` STEPS times in its own
directory, then `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`, mini's way to end a run. The stand-in is
bench/lean_server.py's LeanServer answering in mini's format: non-streamed chat completions carrying one
`bash` tool call. mini-swe-agent lives in its own venv (/tmp/minivenv); each agent count runs in a fresh
child process of that venv's python, the server in a process of this one.

    python bench/parallel_peer.py [--counts 1,8,32,64] [--steps 20] [--delay 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from parallel import GOAL_LINEAR, GOAL_MB, cpu_seconds, make_files, rss_mb

MINI_PYTHON = Path(os.environ.get("MINI_SWE_AGENT_PYTHON", "/tmp/minivenv/bin/python"))
INSTALL = (
    "python3 -m venv /tmp/minivenv && /tmp/minivenv/bin/pip install mini-swe-agent==2.4.6 mcp==2.3.0"
    " (or set MINI_SWE_AGENT_PYTHON)"
)
TASK = "Read every file."


# ---------------------------------------------------------------- the stand-in in mini's format (server process)


def mini_commands(steps: int) -> list[str]:
    return [f"cat f{n}.txt" for n in range(steps)] + ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]


def json_response(command: str, number: int) -> bytes:
    """One complete HTTP response: a non-streamed chat completion with one bash tool call."""
    call = {
        "id": f"call_{number}",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
    }
    body = json.dumps(
        {
            "id": f"chatcmpl-bench-{number}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "bench",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                }
            ],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 8, "total_tokens": 1008},
        }
    ).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(
        body
    )
    return head + body


def serve(steps: int, delay: float) -> None:
    from lean_server import LeanServer

    class MiniServer(LeanServer):
        """LeanServer's choice by counted tool results, with replies pre-encoded in mini's format."""

        def __init__(self) -> None:
            super().__init__([], delay)
            self.responses = [
                json_response(command, n) for n, command in enumerate(mini_commands(steps))
            ]

    asyncio.run(MiniServer().run(lambda url: print(url, flush=True)))


# ---------------------------------------------------------------- mini's workers (child process, mini's venv)


def quiet_offline_mini(home: Path) -> None:
    """Before mini is imported: no banner, no config in ~, no cost-map download, no minutes of retry back-off."""
    os.environ.update(
        {
            "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_GLOBAL_CONFIG_DIR": str(home),
            "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
    )


def mini_config(url: str) -> dict:
    """mini's own SWE-bench batch config, with the local environment and the stand-in as an openai/ model."""
    from minisweagent.config import get_config_from_spec

    config = get_config_from_spec("swebench.yaml")
    environment = config["environment"]
    environment["environment_class"] = "local"
    environment["env"].pop("BASH_ENV", None)  # points at the SWE-bench image's conda setup
    for key in ("interpreter", "cwd"):
        environment.pop(key, None)
    model = config["model"]
    model["model_name"] = "openai/bench"
    model["cost_tracking"] = "ignore_errors"
    model["model_kwargs"] |= {"api_base": url, "api_key": "bench"}
    return config


def run_workers(config: dict, work: Path, agents: int, steps: int) -> int:
    """mini's batch loop (run/benchmarks/swebench.py main) without its terminal UI; returns steps taken."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from minisweagent.run.benchmarks.swebench import process_instance
    from minisweagent.run.benchmarks.utils.batch_progress import RunBatchProgressManager

    output = work / "out"
    output.mkdir(parents=True, exist_ok=True)
    progress = RunBatchProgressManager(agents, output / f"exit_statuses_{time.time()}.yaml")
    instances = {
        f"agent{n}": {"instance_id": f"agent{n}", "problem_statement": TASK} for n in range(agents)
    }

    def config_for(instance_id: str) -> dict:
        own = copy.deepcopy(config)
        own["environment"]["cwd"] = str(work / instance_id)
        return own

    with ThreadPoolExecutor(max_workers=agents) as executor:
        futures = [
            executor.submit(process_instance, instance, output, config_for(instance_id), progress)
            for instance_id, instance in instances.items()
        ]
        for future in as_completed(futures):
            future.result()
    return steps_taken(output, instances, steps)


def steps_taken(output: Path, instances: dict, steps: int) -> int:
    """Checks every agent submitted after exactly STEPS commands; returns their sum."""
    total = 0
    for instance_id in instances:
        info = json.loads((output / instance_id / f"{instance_id}.traj.json").read_text())["info"]
        calls = info["model_stats"]["api_calls"]
        if info["exit_status"] != "Submitted" or calls != steps + 1:
            raise SystemExit(
                f"{instance_id}: exit {info['exit_status']} after {calls} calls: {info.get('exception_str', '')}"
            )
        total += calls - 1  # the last call is the submission, as keel's last request is its answer
    return total


def thread_count() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child(url: str, agents: int, steps: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mini-bench-") as tmp:
        quiet_offline_mini(Path(tmp) / "home")
        from minisweagent.utils.log import add_file_handler

        config = mini_config(url)
        add_file_handler(
            Path(tmp) / "minisweagent.log", print_path=False
        )  # as mini's batch main does
        make_files(Path(tmp) / "warmup" / "agent0", steps)
        run_workers(config, Path(tmp) / "warmup", 1, steps)  # imports, litellm's client cache
        baseline = rss_mb()
        work = Path(tmp) / "run"
        for n in range(agents):
            make_files(work / f"agent{n}", steps)
        peak, threads, running = rss_mb(), thread_count(), True

        def sample() -> None:
            nonlocal peak, threads
            while running:
                peak, threads = max(peak, rss_mb()), max(threads, thread_count())
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        cpu, commands_cpu, started = time.process_time(), children_cpu(), time.perf_counter()
        total = run_workers(config, work, agents, steps)
        wall = time.perf_counter() - started
        cpu, commands_cpu = time.process_time() - cpu, children_cpu() - commands_cpu
        running = False
        sampler.join()
    print(
        json.dumps(
            {
                "steps": total,
                "wall": wall,
                "cpu": cpu + commands_cpu,
                "commands_cpu": commands_cpu,
                "peak_rss": peak,
                "baseline_rss": baseline,
                "threads": threads,
            }
        ),
        flush=True,
    )


# ---------------------------------------------------------------- the table (parent process)


def mini_version() -> tuple[str | None, str]:
    """(version, "") when mini-swe-agent is installed in its venv, else (None, why not)."""
    if not MINI_PYTHON.exists():
        return (
            None,
            f"mini-swe-agent peer skipped: {MINI_PYTHON} not found; to include it: {INSTALL}",
        )
    probe = subprocess.run(
        [
            str(MINI_PYTHON),
            "-c",
            "from importlib.metadata import version; print(version('mini-swe-agent'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        return (
            None,
            f"mini-swe-agent peer skipped: not installed for {MINI_PYTHON}; to include it: {INSTALL}",
        )
    return probe.stdout.strip(), ""


def run_child(url: str, agents: int, steps: int) -> dict | str:
    command = [
        str(MINI_PYTHON),
        __file__,
        "--child",
        "--url",
        url,
        "--agents",
        str(agents),
        "--steps",
        str(steps),
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return (out.stderr.strip().splitlines() or ["no output"])[-1]
    return json.loads(out.stdout.strip().splitlines()[-1])


def peer_table(counts: list[int], steps: int, delay: float) -> list[str] | None:
    """mini-swe-agent's figures in bench/parallel.py's table format; None (reason printed) when it is missing."""
    version, missing = mini_version()
    if version is None:
        print(missing)
        return None
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--steps", str(steps), "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    title = f"mini-swe-agent {version}, its workers (threads) in one process"
    header = (
        f"{'agents':>6} {'steps/s':>8} {'x linear':>9} {'wall s':>7} {'cpu/step ms':>12}"
        f" {'server cpu/step':>16} {'peak RSS MB':>12} {'MB/extra agent':>15}"
    )
    lines = [f"\n{title}: {steps} steps per agent, {1000 * delay:.0f} ms model latency", header]
    notes = []
    try:
        url = server.stdout.readline().strip()
        base: dict | None = None
        for agents in counts:
            server_cpu = cpu_seconds(server.pid)
            result = run_child(url, agents, steps)
            server_cpu = cpu_seconds(server.pid) - server_cpu
            if isinstance(result, str):
                lines.append(f"{agents:>6} failed: {result}")
                break
            rate = result["steps"] / result["wall"]
            base = base or {**result, "rate": rate, "agents": agents}
            linear = rate / (base["rate"] * agents / base["agents"])
            extra = agents - base["agents"]
            per_agent = (result["peak_rss"] - base["peak_rss"]) / extra if extra else 0.0
            requests = result["steps"] + agents
            lines.append(
                f"{agents:>6} {rate:>8.1f} {linear:>9.2f} {result['wall']:>7.2f}"
                f" {1000 * result['cpu'] / result['steps']:>12.2f} {1000 * server_cpu / requests:>16.2f}"
                f" {result['peak_rss']:>12.0f} {per_agent if extra else float('nan'):>15.2f}"
            )
            notes.append(
                f"{agents}: {result['threads']} threads, commands {1000 * result['commands_cpu'] / result['steps']:.2f} ms"
            )
            if agents == 64:
                verdict = "meets" if linear >= GOAL_LINEAR and per_agent <= GOAL_MB else "misses"
                lines.append(
                    f"  goal at 64: >= {GOAL_LINEAR}x linear, <= {GOAL_MB:.0f} MB per extra agent: {verdict}"
                )
    finally:
        server.terminate()
        server.wait(timeout=30)
    if notes:
        lines.append(
            "  cpu/step includes each command's sh subprocess; peak threads and that share per step at "
            + "; ".join(notes)
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,8,32,64")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--agents", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        return serve(options.steps, options.delay)
    if options.child:
        return child(options.url, options.agents, options.steps)
    lines = peer_table([int(n) for n in options.counts.split(",")], options.steps, options.delay)
    print("\n".join(lines or []))


if __name__ == "__main__":
    main()
