"""The small-model bench's attempt log: each attempt is appended to --out/attempts.jsonl as it ends, so a run
that was stopped (a session's end, a reboot, ^C) is taken up with --resume without redoing what it did; a
medium-set pass of a 1.5B model on two cores is many hours."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from _small_model_keel import KeelRun
from _small_model_one_shot import OneShotRun
from _small_model_peers import PeerRun
from _small_model_summary import TaskResults

LOG_NAME = "attempts.jsonl"
LONG_FIELDS = {
    "reply",
    "events",
    "stderr",
    "check_output",
    "output",
}  # kept in the transcripts only


class ResumeError(ValueError):
    """The attempt log cannot be taken up as asked: say what to do instead."""


def run_type(mode: str) -> type[OneShotRun | KeelRun | PeerRun]:
    """The record type of one mode's attempts."""
    return {"one-shot": OneShotRun, "keel": KeelRun}.get(mode, PeerRun)


def figures(run: Any) -> dict[str, Any]:
    """An attempt's figures, without its long texts."""
    return {key: value for key, value in asdict(run).items() if key not in LONG_FIELDS}


def revived(mode: str, row: dict[str, Any]) -> Any:
    """An attempt read back from the log: its figures, its long texts empty (they are in the transcripts)."""
    kind = run_type(mode)
    names = {field.name for field in fields(kind)}
    return kind(**{key: row.get(key, "") for key in names})


def read_log(path: Path) -> tuple[dict[str, Any], dict[tuple[str, str, int], Any]]:
    """A log's settings line and its attempts by (mode, task, attempt number)."""
    lines = path.read_text().splitlines()
    settings = json.loads(lines[0]).get("settings", {}) if lines else {}
    done: dict[tuple[str, str, int], Any] = {}
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # the last line of a run killed while writing it: that attempt is made again
        done[(row["mode"], row["task"], row["attempt"])] = revived(row["mode"], row["run"])
    return settings, done


def drop_half_line(path: Path) -> None:
    """Cut off the half line a run killed while writing leaves, so the next attempt starts a line of its own."""
    text = path.read_bytes()
    if text and not text.endswith(b"\n"):
        with path.open("r+b") as log:
            log.truncate(text.rfind(b"\n") + 1)


class AttemptLog:
    """The attempts already made under these settings, by (mode, task, attempt number), and the file each
    new one is appended to; with no --out, nothing is kept and nothing is resumed."""

    def __init__(self, out: Path | None, settings: dict[str, Any], resume: bool) -> None:
        self.path = out / LOG_NAME if out is not None else None
        self.done: dict[tuple[str, str, int], Any] = {}
        if self.path is None:
            if resume:
                raise ResumeError("--resume takes up the attempts kept in --out DIR: give --out")
            return
        if self.path.exists() and not resume:
            raise ResumeError(
                f"{self.path} holds the attempts of an earlier run: add --resume to take it up, "
                "or give another --out"
            )
        if self.path.exists():
            self._read(settings)
            drop_half_line(self.path)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"settings": settings}) + "\n")

    def _read(self, settings: dict[str, Any]) -> None:
        assert self.path is not None
        kept, self.done = read_log(self.path)
        if differ := sorted(key for key in settings if kept.get(key) != settings[key]):
            told = ", ".join(f"{key} {kept.get(key)!r} (now {settings[key]!r})" for key in differ)
            raise ResumeError(
                f"{self.path} was made with other settings: {told}; resume with the same ones, "
                "or give another --out"
            )

    def made(self, mode: str, task: str, attempt: int) -> Any | None:
        """The attempt as it was made before, or None when it is still to be made."""
        return self.done.get((mode, task, attempt))

    def record(self, mode: str, task: str, attempt: int, run: Any) -> None:
        """Append one attempt as it ends."""
        self.done[(mode, task, attempt)] = run
        if self.path is not None:
            row = {"mode": mode, "task": task, "attempt": attempt, "run": figures(run)}
            with self.path.open("a") as log:
                log.write(json.dumps(row) + "\n")


def kept_results(folder: Path) -> tuple[dict[str, Any], dict[str, TaskResults]]:
    """The settings line of the attempt log in `folder` and its attempts by task (in the order first made), for
    a report of a run that took several sessions; a log that is not there is a ResumeError."""
    path = folder / LOG_NAME
    if not path.exists():
        raise ResumeError(f"{path} does not exist: give the --out folder of a run")
    settings, done = read_log(path)
    results: dict[str, TaskResults] = {}
    for (mode, task, _), run in sorted(done.items(), key=lambda item: item[0][2]):
        results.setdefault(task, TaskResults()).runs_of(mode).append(run)
    return settings, results
