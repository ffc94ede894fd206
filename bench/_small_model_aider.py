"""aider modes of the small-model benchmark (`aider-whole`, `aider-diff`): aider-chat in a venv of its own,
the task as one non-interactive `--message`, the task's files added on its command line when the set gives
them (the small set; in the medium set aider finds them through its repo map), answers all "yes", never
commits, samples at the benchmark's temperature (through a model settings file: aider has no flag for
it). Tokens come from aider's own "Tokens: … sent, … received." lines, one per model call (a reply cut
by a token limit prints none: then the shared server's count is used, when it runs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from _small_model_keel import KeelSettings
from _small_model_peers import Invocation, Outcome, Peer, PeerRun, ensure_peer, run_peer
from _small_model_tasks import Task

AIDER = Peer("aider-chat", "0.86.2", "aider")
SETTINGS_FILE = "aider-model-settings.yml"  # in the run's scratch folder, outside the repository
EDIT_FORMATS = {"aider-whole": "whole", "aider-diff": "diff"}
# aider's format_tokens: 999 as is, 1.2k below 10k, 12k above
COUNT = r"(\d[\d,]*(?:\.\d+)?k?)"
TOKENS_LINE = re.compile(
    rf"Tokens: {COUNT} sent(?:, {COUNT} cache write)?(?:, {COUNT} cache (?:hit|read))?"
    rf", {COUNT} received"
)
QUIET = [
    "--no-check-update",
    "--no-show-release-notes",
    "--analytics-disable",
    "--no-show-model-warnings",
    "--no-pretty",
    "--no-fancy-input",
    "--no-stream",
    "--no-gitignore",
]


def token_count(text: str) -> int:
    """A count as aider prints it ("950", "1.2k", "12k", "1,234") in tokens."""
    text = text.replace(",", "")
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return round(float(text))


def aider_tokens(output: str) -> tuple[int, int]:
    """(model calls, tokens sent + received) from aider's output: one "Tokens:" line per call, summed
    (each line counts that call's message; aider rounds above 1000, so the sum is within a few %)."""
    calls = tokens = 0
    for match in TOKENS_LINE.finditer(output):
        sent, _write, _hit, received = match.groups()
        calls += 1
        tokens += token_count(sent) + token_count(received)
    return calls, tokens


def aider_status(output: str, returncode: int | None) -> str:
    """How the run ended: "completed" when aider exited 0, else its exit code; "no reply" when it
    exited 0 without one model call answered."""
    if returncode != 0:
        return f"exit {returncode}"
    return "completed" if TOKENS_LINE.search(output) else "no reply"


def model_settings(settings: KeelSettings) -> str:
    """aider's model settings file for the model: the benchmark's temperature (aider has no flag for
    it, and sends 0 to a model it does not know)."""
    return f"- name: {json.dumps(settings.model)}\n  use_temperature: {settings.temperature}\n"


def aider_command(
    binary: Path,
    task: Task,
    settings: KeelSettings,
    edit_format: str,
    give_files: bool,
    model_settings: Path,
) -> list[str]:
    """The aider argv for one task: the same model and server as keel's, the given edit format, the
    model settings file `model_settings` (written by `model_settings()`), the task's files with
    `--file` when `give_files`, the prompt as one message."""
    command = [str(binary), "--model", settings.model]
    if settings.api_base:
        command += ["--openai-api-base", settings.api_base]
    command += ["--edit-format", edit_format, "--model-settings-file", str(model_settings)]
    command += ["--yes-always", "--no-auto-commits", "--no-dirty-commits", *QUIET]
    command += ["--timeout", str(settings.timeout)]  # a call may take the attempt's whole timeout
    if give_files:
        for path in task.files:
            command += ["--file", path]
    command += ["--message", task.spec.prompt]
    return command


def aider_invocation(
    binary: Path, task: Task, settings: KeelSettings, mode: str, give_files: bool
) -> Invocation:
    """How to run aider in `mode` on `task`, and read its output."""

    def command(_repo: Path, scratch: Path) -> list[str]:
        path = scratch / SETTINGS_FILE
        return aider_command(binary, task, settings, EDIT_FORMATS[mode], give_files, path)

    def read(output: str, _scratch: Path) -> Outcome:
        calls, tokens = aider_tokens(output)
        return Outcome(status="", calls=calls, tokens=tokens)  # the status needs the exit code

    return Invocation(
        command=command,
        env={},
        read=read,
        scratch_files={SETTINGS_FILE: model_settings(settings)},
    )


def run_aider(task: Task, settings: KeelSettings, mode: str, give_files: bool) -> PeerRun:
    """The task through aider in `mode` ("aider-whole" or "aider-diff"), then the check."""
    binary = ensure_peer(AIDER)
    run = run_peer(
        task, aider_invocation(binary, task, settings, mode, give_files), settings.timeout
    )
    if run.status != "timeout":
        run.status = aider_status(run.output, run.returncode)
    return run
