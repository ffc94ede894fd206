"""bench/small_model: a small local model on coding tasks, in one call, through keel, and through peers.

Two task sets (--set): `small` (bench/small_model_tasks/: a few small files, a terse prompt) and `medium`
(bench/small_model_tasks_medium/: repositories of 8-20 files, 40-90k characters, too large to paste, where
the files to change must be found). Each task has a check command run after the agent stops, with check
files it never sees. Modes, the same model, the same tasks:
  one-shot  one call through keel's model layer (ModelClient, no tools) with every file of the task pasted
            in the prompt, under the same --timeout; the whole files of its reply (`FILE: path` + a fenced
            block) are applied, then the check runs. The baseline: what the model can do with no tools.
  keel      the files committed in a fresh git repo, then `python -m keel run --output-format stream-json`
            as a subprocess under a wall-clock timeout, then the check. Status, model calls and tokens
            come from its events; the events of failed tasks go to --out for reading.
  aider-whole, aider-diff   aider-chat 0.86.2 (bench/_small_model_aider.py) with that edit format, the task
            as one --message, the task's files given with --file in the small set (found through its
            repo map in the medium set); tokens from its "Tokens:" lines.
  mini-swe-agent   mini-swe-agent 2.4.6 (bench/_small_model_mini.py), its default config (a bash tool
            called through tool calls), the task as its task text, keel's --max-steps as its step
            limit; tokens from its trajectory json.
  mini-textbased   the same with its text-based config (one command in a fenced block per reply).
Each peer is installed on first use into a venv of its own under ~/.cache/keel/bench/peers (it says so),
runs in a fresh git repository of the task under the same --timeout as keel (one model call may take all of
it, in every harness), then the same check. Peers reach the model the way keel does: a server given with
--api-base (llama.cpp's, vLLM, ...), or a hosted model by name. On the embedded model (no --api-base)
with a peer among the modes, one OpenAI-compatible server of it is started here
(bench/_small_model_server.py) and every mode, one-shot and keel included, goes through it, so that all
harnesses reach the model the same way. --served-as NAME serves it so under a name that says nothing of its
size, answering /v1/models and /props as llama.cpp's server does: keel must learn the model's size from the
server, as it must from a user's `llama-server --alias NAME`.
The summary gives per harness the pass rate (k/n over tasks and repeats), median tokens and median wall
time, then keel / best peer and keel / one-shot. Reported numbers use --repeat 3.
With --out, every attempt is kept as it ends (attempts.jsonl); --resume takes a stopped run up, making
only the attempts its log lacks (a medium pass of a 1.5B on two cores is many hours).
All sample at --temperature (the embedded model through KEEL_LOCAL_TEMPERATURE, with the repeat's number
as KEEL_LOCAL_SEED so repeats differ, one-shot's call seeded alike; or the shared server's setting, which
seeds every request that names none from the attempt's number, as llama.cpp's server draws a seed per
request; a server of your own keeps its default for keel's calls). One model process at a time: the
one-shot pass ends its worker before keel runs.
Goal: keel pass rate / one-shot pass rate >= 1.0 (the loop must not make a small model worse than one call).
The checks are `python -m pytest` with the Python running the bench: without pytest it refuses to start.
Run: python bench/small_model.py [--set small|medium] [--model M] [--api-base URL] [--tasks a,b]
       [--modes one-shot,keel,aider-whole,aider-diff,mini-swe-agent,mini-textbased] [--repeat K]
       [--timeout S]
       [--budget TOKENS] [--max-steps N] [--threads N] [--out DIR [--resume]] | --report DIR
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _small_model_aider import EDIT_FORMATS, run_aider
from _small_model_attempts import LOG_NAME, AttemptLog, ResumeError, figures, kept_results
from _small_model_keel import KeelSettings, read_events, run_keel, transcript
from _small_model_mini import run_mini
from _small_model_one_shot import OneShotRun, timed_one_shot
from _small_model_server import EmbeddedServer
from _small_model_summary import PEER_MODES, TaskResults, report
from _small_model_tasks import TASK_SETS, Task, checks_cannot_run, load_tasks, task_names

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.local.catalog import default_model
from keel.agent.core.model.local.names import is_embedded
from keel.agent.core.model.served_model import served_model

MODES = ("one-shot", "keel", *PEER_MODES)
DEFAULT_MODES = ("one-shot", "keel")


@dataclass
class Options:
    """What to run: the tasks, the modes, attempts per task, and how (the model and keel's limits)."""

    tasks: list[Task]
    modes: list[str]
    repeat: int
    settings: KeelSettings  # the model, its api_base and temperature serve every mode
    out: Path | None
    task_set: str = "small"
    # called before each attempt with its number: with the shared server, stops a reply still being made for
    # an attempt stopped at its timeout (so that it counts in no other attempt's time) and seeds the attempt
    settle: Callable[[int], None] = lambda attempt: None
    served: str | None = None  # the embedded model the shared server serves, when it runs
    # the tokens the shared server has answered so far: the count of a peer that reports none
    served_tokens: Callable[[], int] = lambda: 0
    served_as: str | None = None  # the shared server's name for the embedded model (--served-as)
    resume: bool = False  # take up the attempts kept in --out (--resume)
    report: Path | None = None  # only the summary of the attempts kept there (--report)
    log: AttemptLog = field(default_factory=lambda: AttemptLog(None, {}, resume=False))

    def kept_settings(self) -> dict[str, Any]:
        """What the attempts of one log must share: the task set, the model as given and keel's limits."""
        return asdict(self.settings) | {"set": self.task_set, "served_as": self.served_as}

    def made_before(self, mode: str, task: str, attempt: int, runs: list[Any]) -> bool:
        """Whether the attempt is in the log already (then it joins `runs` and is said, not made again)."""
        run = self.log.made(mode, task, attempt)
        if run is not None:
            runs.append(run)
            print(f"  {mode:<14} {task:<24} #{attempt} {verdict(run.passed)} (kept in {LOG_NAME})")
        return run is not None

    @property
    def shared_server(self) -> bool:
        """Whether every mode goes through one server started here: peers run on the embedded model, or
        it is served under a name of the user's (--served-as)."""
        peers = any(mode in PEER_MODES for mode in self.modes)
        return is_embedded(self.settings.model) and (peers or self.served_as is not None)

    @property
    def give_files(self) -> bool:
        """Whether aider gets the task's files on its command line: in the small set, where they fit."""
        return self.task_set == "small"


def parse_options(argv: list[str] | None = None) -> Options:
    """The options, with the model resolved (a server's only model when only --api-base is given)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="small", choices=sorted(TASK_SETS), dest="task_set")
    parser.add_argument(
        "--model", help="a litellm model name (default: the default embedded model)"
    )
    parser.add_argument("--api-base", help="an OpenAI-compatible server (llama.cpp, vLLM, ...)")
    parser.add_argument("--tasks", help=f"a subset, comma-separated: {','.join(task_names())}")
    parser.add_argument(
        "--modes", default=",".join(DEFAULT_MODES), help=f"any of {','.join(MODES)}"
    )
    parser.add_argument("--repeat", type=int, default=1, help="attempts per task and mode")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per agent run")
    parser.add_argument("--budget", type=int, default=100_000, help="tokens per keel run")
    parser.add_argument("--max-steps", type=int, default=20, help="steps per keel / mini run")
    parser.add_argument("--temperature", type=float, default=0.2)
    parser.add_argument(
        "--threads", type=int, help="the embedded model's decode threads (KEEL_LOCAL_THREADS)"
    )
    parser.add_argument(
        "--served-as",
        help="serve the embedded model to every mode under this name, answering /v1/models and /props as "
        "llama.cpp's server does (e.g. `local`: a name that says nothing of its size)",
    )
    parser.add_argument("--out", type=Path, help="write results.json and failed transcripts here")
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"take up the run kept in --out ({LOG_NAME}: every attempt as it ended), making only "
        "the attempts it lacks",
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="DIR",
        help=f"print the summary of the attempts kept in DIR/{LOG_NAME} (made over one run or several "
        "resumed ones) and run nothing",
    )
    args = parser.parse_args(argv)
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    if unknown := set(modes) - set(MODES):
        parser.error(
            f"unknown mode(s) {', '.join(sorted(unknown))}; choose from {', '.join(MODES)}"
        )
    model, api_base = args.model, args.api_base
    if api_base and not model:
        model, api_base = served_model(api_base)
    try:
        tasks = load_tasks(args.tasks.split(",") if args.tasks else None, TASK_SETS[args.task_set])
    except ValueError as exc:
        parser.error(str(exc))
    settings = KeelSettings(
        model=model or default_model().model,
        api_base=api_base,
        budget=args.budget,
        max_steps=args.max_steps,
        timeout=args.timeout,
        temperature=args.temperature,
        threads=args.threads,
    )
    return Options(
        tasks=tasks,
        modes=modes,
        repeat=args.repeat,
        settings=settings,
        out=args.out,
        task_set=args.task_set,
        served_as=args.served_as,
        resume=args.resume,
        report=args.report,
    )


def save(out: Path | None, name: str, text: str) -> None:
    """One transcript file under --out (nothing without --out)."""
    if out is not None:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)


def verdict(passed: bool) -> str:
    """The progress word: pass, or FAIL in capitals so that failures stand out."""
    return "pass" if passed else "FAIL"


async def one_shot_pass(options: Options, results: dict[str, TaskResults]) -> None:
    """Every task once per repeat in one call each, a task's repeats in a row: its prompt is the same each time,
    so the model, keeping the prompt it last read, reads a repeat's at once (a medium task's is 14k tokens,
    10 minutes to read for the 1.5B on 2 cores), as llama.cpp's server does with its prompt cache. Failures'
    replies and checks go to --out."""
    model = options.settings.model
    client = ModelClient(
        model=model,
        api_base=options.settings.api_base,
        extra={"temperature": options.settings.temperature},
        timeout=options.settings.timeout,  # one call may take the attempt's whole timeout
    )
    try:
        for task in options.tasks:
            for attempt in range(1, options.repeat + 1):
                if options.made_before("one-shot", task.name, attempt, results[task.name].one_shot):
                    continue
                options.settle(attempt)
                try:
                    # the embedded model's repeats differ by seed, as keel's do (KEEL_LOCAL_SEED); the
                    # shared server seeds each attempt's requests itself, a server of the user's its own way
                    seed = attempt if is_embedded(model) else None
                    run = await timed_one_shot(client, task, options.settings.timeout, seed)
                except Exception as exc:  # noqa: BLE001 - a failed call fails this task; the rest go on
                    failed = f"(the call failed: {exc!r})"
                    run = OneShotRun(False, 0.0, 0, applied=[], reply=failed, check_output="")
                results[task.name].one_shot.append(run)
                options.log.record("one-shot", task.name, attempt, run)
                print(
                    f"  {'one-shot':<14} {task.name:<24} #{attempt} {verdict(run.passed)} "
                    f"{run.tokens:>6} tokens {run.seconds:6.1f} s  applied {run.applied}",
                    flush=True,
                )
                if not run.passed:
                    text = f"# reply\n\n{run.reply}\n\n# check\n\n{run.check_output}"
                    save(options.out, f"one-shot/{task.name}-{attempt}.md", text)
    finally:
        await client.aclose()
        if is_embedded(model):
            from keel.agent.core.model.local.endpoint import stop_workers

            stop_workers()  # so keel's own worker is the only model process from here on


def keel_pass(options: Options, results: dict[str, TaskResults]) -> None:
    """Every task once per repeat through `keel run`; failures' events, stderr and checks go to --out."""
    for attempt in range(1, options.repeat + 1):
        for task in options.tasks:
            if options.made_before("keel", task.name, attempt, results[task.name].keel):
                continue
            options.settle(attempt)
            run = run_keel(task, options.settings, attempt)
            results[task.name].keel.append(run)
            options.log.record("keel", task.name, attempt, run)
            print(
                f"  {'keel':<14} {task.name:<24} #{attempt} {verdict(run.passed)} "
                f"{run.tokens:>6} tokens {run.seconds:6.1f} s  {run.status}, {run.calls} calls",
                flush=True,
            )
            if not run.passed:
                stem = f"keel/{task.name}-{attempt}"
                save(options.out, f"{stem}.jsonl", run.events)
                readable = transcript(read_events(run.events))
                text = f"{readable}\n\n# stderr\n\n{run.stderr}\n# check\n\n{run.check_output}"
                save(options.out, f"{stem}.md", text)


def peer_pass(options: Options, mode: str, results: dict[str, TaskResults]) -> None:
    """Every task once per repeat through one peer; failures' output and checks go to --out."""
    for attempt in range(1, options.repeat + 1):
        for task in options.tasks:
            runs = results[task.name].runs_of(mode)
            if options.made_before(mode, task.name, attempt, runs):
                continue
            options.settle(attempt)
            served = options.served_tokens()
            if mode in EDIT_FORMATS:
                run = run_aider(task, options.settings, mode, options.give_files)
            else:
                run = run_mini(task, options.settings, mode)
            if not run.tokens:  # the peer reported none (aider stopped by a token limit, ...)
                run.tokens = options.served_tokens() - served
            runs.append(run)
            options.log.record(mode, task.name, attempt, run)
            print(
                f"  {mode:<14} {task.name:<24} #{attempt} {verdict(run.passed)} "
                f"{run.tokens:>6} tokens {run.seconds:6.1f} s  {run.status}, {run.calls} calls",
                flush=True,
            )
            if not run.passed:
                text = f"# output\n\n{run.output}\n\n# check\n\n{run.check_output}"
                save(options.out, f"{mode}/{task.name}-{attempt}.md", text)


def write_results(out: Path, options: Options, results: dict[str, TaskResults]) -> None:
    """results.json: the settings and every attempt's figures (the long texts are in the transcripts)."""
    rows = {
        name: {mode: [figures(run) for run in runs] for mode, runs in got.by_mode().items()}
        for name, got in results.items()
    }
    settings = asdict(options.settings) | {
        "modes": options.modes,
        "repeat": options.repeat,
        "set": options.task_set,
        "shared_server_of": options.served,
    }
    (out / "results.json").write_text(json.dumps({"settings": settings, "tasks": rows}, indent=2))


def run_modes(options: Options, results: dict[str, TaskResults]) -> None:
    """One-shot pass, keel pass, then each peer's: one model process at a time."""
    if "one-shot" in options.modes:
        asyncio.run(one_shot_pass(options, results))
    if "keel" in options.modes:
        keel_pass(options, results)
    for mode in PEER_MODES:
        if mode in options.modes:
            peer_pass(options, mode, results)


def main() -> None:
    """The passes (all through one server of the embedded model when peers run on it), the report."""
    options = parse_options()
    if options.report is not None:
        report_kept(options.report)
        return
    settings = options.settings
    results = {task.name: TaskResults() for task in options.tasks}
    if problem := checks_cannot_run():
        sys.exit(f"small_model: {problem}")
    try:
        options.log = AttemptLog(options.out, options.kept_settings(), options.resume)
    except ResumeError as exc:
        sys.exit(f"small_model: {exc}")
    if settings.threads:  # every model process of the run (a worker, the shared server) inherits it
        os.environ["KEEL_LOCAL_THREADS"] = str(settings.threads)
    if options.shared_server:
        with EmbeddedServer(settings.model, settings.temperature, options.served_as) as server:
            options.served = settings.model
            settings.model, settings.api_base = f"openai/{server.name}", server.url
            options.settle, options.served_tokens = server.begin_attempt, server.tokens_served
            announce(options)
            run_modes(options, results)
    else:
        announce(options)
        run_modes(options, results)
    report(results)
    if options.out:
        write_results(options.out, options, results)
        print(f"results and the transcripts of failures: {options.out}", file=sys.stderr)


def report_kept(folder: Path) -> None:
    """The summary of a run kept in `folder`, however many sessions it took; it runs nothing."""
    try:
        settings, results = kept_results(folder)
    except ResumeError as exc:
        sys.exit(f"small_model: {exc}")
    print("settings: " + ", ".join(f"{key} {value}" for key, value in settings.items()))
    report(results)


def announce(options: Options) -> None:
    """What runs, on which model, under which limits."""
    settings = options.settings
    where = f" at {settings.api_base}" if settings.api_base else ""
    print(
        f"model {settings.model}{where}; {options.task_set} set, {len(options.tasks)} tasks x "
        f"{options.repeat}; modes {','.join(options.modes)}; budget {settings.budget}, "
        f"{settings.max_steps} steps, {settings.timeout:.0f} s per agent run",
        flush=True,
    )


if __name__ == "__main__":
    main()
