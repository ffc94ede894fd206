"""The small-model bench taken up after it was stopped (bench/_small_model_attempts.py): each attempt is kept
as it ends in --out/attempts.jsonl, --resume makes only the attempts the log lacks, and a log is never
overwritten or mixed with other settings. Real processes, a scripted server over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from keel_cli import keel_env
from test_small_model_bench import BENCH, TASKS, scripted_model


def bench(
    server_url: str, out: Path | None, home: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """bench/small_model.py, one-shot only, on two tasks, keeping its attempts in `out` (if given)."""
    return subprocess.run(
        [
            sys.executable,
            str(BENCH / "small_model.py"),
            *("--api-base", server_url, "--model", "openai/scripted-model", "--modes", "one-shot"),
            *("--tasks", "wrong_operator,off_by_one", "--timeout", "120"),
            *(("--out", str(out)) if out is not None else ()),
            *extra,
        ],
        env=keel_env(home),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_resumed_run_makes_only_the_attempts_its_log_lacks(scripted_server, tmp_path):
    solved = next(task for task in TASKS if task.name == "wrong_operator")
    server = scripted_server(scripted_model(solved))
    out, home = tmp_path / "out", tmp_path / "home"
    first = bench(server.url, out, home)
    assert first.returncode == 0, first.stderr
    assert len(server.answered) == 2
    log = out / "attempts.jsonl"
    # a run killed while writing its last attempt leaves half a line: that attempt is made again
    with log.open("a") as kept:
        kept.write('{"mode": "one-shot", "task": "wrong_operator", "att')

    again = bench(server.url, out, home, "--repeat", "2", "--resume")

    assert again.returncode == 0, again.stderr
    assert len(server.answered) == 4  # attempt 2 of each task; attempt 1 of both was kept
    assert f"{'wrong_operator':<24} #1 pass (kept in attempts.jsonl)" in again.stdout
    assert f"{'off_by_one':<24} #1 FAIL (kept in attempts.jsonl)" in again.stdout
    assert "one-shot 2/4 passed (50%)" in again.stdout
    results = json.loads((out / "results.json").read_text())["tasks"]
    assert [run["passed"] for run in results["wrong_operator"]["one-shot"]] == [True, True]
    assert [run["passed"] for run in results["off_by_one"]["one-shot"]] == [False, False]

    # the summary of what the log holds, however many runs made it, runs nothing
    kept = subprocess.run(
        [sys.executable, str(BENCH / "small_model.py"), "--report", str(out)],
        env=keel_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert kept.returncode == 0, kept.stderr
    assert len(server.answered) == 4
    assert "settings: model openai/scripted-model" in kept.stdout
    assert "one-shot 2/4 passed (50%)" in kept.stdout
    assert [
        line.split()[:2] for line in kept.stdout.splitlines() if line.startswith(("wrong", "off"))
    ] == [
        ["wrong_operator", "2/2"],
        ["off_by_one", "0/2"],
    ]


def test_one_shot_makes_a_tasks_repeats_in_a_row(scripted_server, tmp_path):
    """A task's one-shot prompt is the same for each repeat: made in a row, the model reads it once (the
    prompt it last read is kept), not once per repeat with other tasks' prompts between."""
    server = scripted_server(lambda request: "No idea.")
    out = tmp_path / "out"
    assert bench(server.url, out, tmp_path / "home", "--repeat", "2").returncode == 0
    rows = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()[1:]]
    assert [(row["task"], row["attempt"]) for row in rows] == [
        ("wrong_operator", 1),
        ("wrong_operator", 2),
        ("off_by_one", 1),
        ("off_by_one", 2),
    ]


def test_a_kept_log_is_never_overwritten_nor_taken_up_under_other_settings(
    scripted_server, tmp_path
):
    server = scripted_server(lambda request: "No idea.")
    out, home = tmp_path / "out", tmp_path / "home"
    assert bench(server.url, out, home).returncode == 0
    kept = (out / "attempts.jsonl").read_text()

    fresh = bench(server.url, out, home)
    other = bench(server.url, out, home, "--resume", "--temperature", "0.7")
    nowhere = bench(server.url, None, home, "--resume")

    assert (
        fresh.returncode != 0
        and "add --resume to take it up, or give another --out" in fresh.stderr
    )
    assert other.returncode != 0 and "temperature 0.2 (now 0.7)" in other.stderr
    assert nowhere.returncode != 0 and "give --out" in nowhere.stderr
    unmade = bench(server.url, None, home, "--report", str(tmp_path / "never"))
    assert (
        unmade.returncode != 0 and "does not exist: give the --out folder of a run" in unmade.stderr
    )
    assert (out / "attempts.jsonl").read_text() == kept
    assert len(server.answered) == 2
