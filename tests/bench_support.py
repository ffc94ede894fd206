"""Harbor-format tasks made in tests: a small calculator project whose bug a hidden test catches."""

from __future__ import annotations

from pathlib import Path

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
DOCKERFILE = "FROM python:3.11-slim\nWORKDIR /app\nCOPY app/ /app/\nENV GREETING=hello\n"
TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
cd /app
if python3 -c 'from calc import add; assert add(2, 3) == 5'; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
TASK_TOML = """version = "1.0"

[metadata]
category = "bugfix"

[verifier]
timeout_sec = 60.0

[agent]
timeout_sec = 120.0

[environment]
build_timeout_sec = 60.0
"""


def make_task(
    root: Path,
    name: str,
    *,
    instruction: str = "add() is wrong, fix calc.py",
    dockerfile: str = DOCKERFILE,
    solution: str = FIXED,
    test_sh: str = TEST_SH,
    toml: str = TASK_TOML,
) -> Path:
    """A task folder in Harbor's layout under `root`."""
    task = root / name
    files = {
        "instruction.md": instruction + "\n",
        "task.toml": toml,
        "environment/Dockerfile": dockerfile,
        "environment/app/calc.py": CALC,
        "environment/app/README.md": "A calculator.\n",
        "tests/test.sh": test_sh,
        "solution/solve.sh": "#!/bin/bash\nset -e\ncp /solution/calc.py /app/calc.py\n",
        "solution/calc.py": solution,
    }
    for relative, text in files.items():
        path = task / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return task
