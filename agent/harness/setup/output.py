"""What `keel setup` leaves: .keel/setup.sh and `test_command` in .keel/config.toml, or the recipe printed,
or a report of what was tried and why each attempt failed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from keel.agent.core.config import load_file
from keel.agent.harness.setup.verify import Attempt, Recipe

SETUP_SCRIPT = Path(".keel/setup.sh")
CONFIG_FILE = Path(".keel/config.toml")
_TEST_KEY = re.compile(r"^\s*test_command\s*=")
_TABLE = re.compile(r"^\s*\[")


def setup_script(recipe: Recipe, commit: str) -> str:
    """The install commands as a script run from the repository's root."""
    lines = [
        "#!/usr/bin/env bash",
        f"# Installs this repository (verified by `keel setup` at {commit[:12]}).",
        f"# Test command: {recipe.test}",
        *(f"# {line}" for line in recipe.notes.splitlines() if line.strip()),
        "set -euo pipefail",
        'cd "$(dirname "$0")/.."',
    ]
    lines += [f"( {command}\n)" for command in recipe.install]  # each from the root, as verified
    return "\n".join(lines) + "\n"


def with_test_command(text: str, command: str) -> str:
    """A config file's text with its top-level `test_command` set (other lines kept as they are)."""
    line = f"test_command = {json.dumps(command, ensure_ascii=False)}"
    lines = text.splitlines()
    top = next((i for i, each in enumerate(lines) if _TABLE.match(each)), len(lines))
    for i in range(top):
        if _TEST_KEY.match(lines[i]):
            lines[i] = line
            return "\n".join(lines) + "\n"
    lines.insert(0, line)
    return "\n".join(lines) + "\n"


def write_recipe(repo: Path, recipe: Recipe, commit: str) -> list[Path]:
    """Write .keel/setup.sh and the test command into .keel/config.toml; the paths written."""
    script, config = repo / SETUP_SCRIPT, repo / CONFIG_FILE
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(setup_script(recipe, commit), encoding="utf-8")
    script.chmod(0o755)
    old = config.read_text(encoding="utf-8") if config.is_file() else ""
    config.write_text(with_test_command(old, recipe.test), encoding="utf-8")
    load_file(config)  # what keel wrote must load: a ConfigError names the file otherwise
    return [script, config]


def format_recipe(recipe: Recipe) -> str:
    """The recipe for --print."""
    return "\n".join(
        [
            "# install",
            *recipe.install,
            "# test",
            recipe.test,
            *(f"# {line}" for line in recipe.notes.splitlines() if line.strip()),
        ]
    )


def format_report(attempts: list[Attempt], logs: Path | None, ending: str = "") -> str:
    """What was tried and why each attempt failed, for a repository keel could not set up; `logs` is the
    folder of the commands' output, None when no command ran."""
    if not attempts:
        lines = ["keel setup: the model proposed no recipe." + (f" ({ending})" if ending else "")]
    else:
        lines = [f"keel setup: no recipe passed; {len(attempts)} tried:"]
    for number, attempt in enumerate(attempts, 1):
        lines.append(f"{number}. install: {' && '.join(attempt.recipe.install) or '(nothing)'}")
        lines.append(f"   test: {attempt.recipe.test}")
        reason = attempt.reason.splitlines()
        lines.append(f"   rejected: {reason[0] if reason else '?'}")
        lines += [f"     {line}" for line in reason[1:8]]
    if logs is None:
        lines.append("No install or test command ran; nothing was installed.")
    else:
        lines.append(
            f"The commands' output is in {logs}; nothing was installed outside its worktrees."
        )
    return "\n".join(lines)
