"""What the `keel batch` tests share: a repository of tasks, a scripted agent per task, running the batch and
checking what it left."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest
from keel_cli import KEEL, KeelResult, keel_env

from keel.agent.harness.batch.results import ResultRow, pass_at_k
from keel.agent.harness.testing.scripted_server import ChatRequest, Reply, ScriptedToolCall

BATCH = [KEEL, "batch"]

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "check.py": "from calc import add\nassert add(2, 3) == 5, add(2, 3)\n",
}
TEST = "test -f .ready && python3 check.py"
# How many of each task's two attempts fix the bug: pass counts 2, 1, 0, 2, 1, 0, 2, 1.
FIXES = {f"t{n}": [True, False] if n % 3 == 1 else [n % 3 == 0] * 2 for n in range(8)}


def model_flags(url: str) -> list[str]:
    """The scripted server as the batch's model."""
    return ["--model", "openai/any", "--api-base", url]


def run_batch(*args: str, cwd: Path, home: Path, timeout: float = 240) -> KeelResult:
    proc = subprocess.run(
        [*BATCH, *args],
        check=False,
        cwd=cwd,
        env=keel_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return KeelResult(proc.returncode, proc.stdout, proc.stderr)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def snapshot(repo: Path) -> tuple[str, str, str]:
    return (
        git(repo, "status", "--porcelain"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "branch", "--show-current"),
    )


def task_of(request: ChatRequest) -> str:
    first = next(m for m in request.messages if m.get("role") == "user")
    return re.search(r"task (t\d+)", str(first["content"])).group(1)


class Agent:
    """A scripted agent: first an edit (a fix or not, per FIXES and arrival order), then its answer."""

    def __init__(self, fixes: dict[str, list[bool]] = FIXES, delay: float = 0.0) -> None:
        self.fixes = fixes
        self.delay = delay
        self.started: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        task = task_of(request)
        if any(m.get("role") == "tool" for m in request.messages):
            return Reply(text=f"done with {task}")
        with self.lock:
            fix = self.fixes[task][self.started[task] % len(self.fixes[task])]
            self.started[task] += 1
        edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b" if fix else "a * b"}
        return Reply(
            tool_calls=[ScriptedToolCall(name="edit_file", arguments=edit)], delay=self.delay
        )


def write_tasks(path: Path, ids: list[str], repo: Path, **extra: object) -> Path:
    lines = [
        json.dumps(
            {
                "id": i,
                "prompt": f"task {i}: make check.py pass",
                "repo": str(repo),
                "setup": ["echo ready > .ready"],
                "test": TEST,
                **extra,
            }
        )
        for i in ids
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def rows_of(out: Path) -> list[ResultRow]:
    return [
        ResultRow.model_validate_json(line)
        for line in (out / "results.jsonl").read_text().splitlines()
    ]


def leftover_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def check_batch_outcome(
    result: KeelResult, repo: Path, out: Path, home: Path, before: tuple
) -> list[ResultRow]:
    """What both backends must leave behind for 8 tasks × 2 attempts of FIXES."""
    assert result.returncode == 0, result.stderr
    rows = rows_of(out)
    assert sorted(r.key for r in rows) == sorted((f"t{n}", a) for n in range(8) for a in (1, 2))
    assert all(r.status == "completed" for r in rows), [(r.key, r.status, r.reason) for r in rows]
    passes = Counter(r.id for r in rows if r.passed)
    assert {t: passes[t] for t in FIXES} == {
        t: sum(f) if len(f) > 1 else 2 * f[0] for t, f in FIXES.items()
    }
    # each attempt had its own worktree (the session's cwd) and its own branch, kept with its commit
    cwds = {json.loads(Path(r.session_log).read_text().splitlines()[0])["cwd"] for r in rows}
    assert len(cwds) == 16 and str(repo) not in cwds
    assert len({r.branch for r in rows}) == 16
    assert sorted(
        git(repo, "branch", "--list", "keel/*", "--format=%(refname:short)").split()
    ) == sorted(r.branch for r in rows)
    for row in rows:
        fixed = "a + b" in git(repo, "show", f"{row.branch}:calc.py")
        assert fixed == row.passed
        assert git(repo, "log", "-1", "--format=%an", row.branch).strip() == "keel"
        assert ("+    return a + b" if row.passed else "+    return a * b") in Path(
            row.patch
        ).read_text()
        assert row.tokens > 0 and row.steps == 1 and row.duration > 0
    # the user's checkout is untouched and nothing is left over
    assert snapshot(repo) == before
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    fsck = subprocess.run(["git", "fsck"], check=False, cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0 and fsck.stdout == "" and "error" not in fsck.stderr, fsck.stderr
    assert leftover_files(home / "worktrees") == []
    summary = json.loads((out / "summary.json").read_text())
    expected = (
        [pass_at_k(2, passes[t], 1) for t in FIXES],
        [pass_at_k(2, passes[t], 2) for t in FIXES],
    )
    assert summary["pass_at_1"] == pytest.approx(sum(expected[0]) / 8)
    assert summary["pass_at_k"] == pytest.approx(sum(expected[1]) / 8)
    assert "pass@2" in result.stdout and "t7" in result.stdout
    return rows
