"""Small repositories `keel setup` tests set up, with install steps that need no network, and the scripted
model's proposals for them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from keel.agent.harness.testing.scripted_server import Reply, ScriptedToolCall

# the interpreter running the tests (it has pytest) is the `python3` the recipes' commands find
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

PYPROJECT_REPO = {
    "pyproject.toml": '[project]\nname = "calcpkg"\nversion = "0.1"\n',
    "README.md": "Run the tests with pytest.\n",
    "src/calcpkg/__init__.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calcpkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
# a venv in the worktree (no pip: offline), the package found on PYTHONPATH
PYPROJECT_RECIPE = (["python3 -m venv --without-pip .venv"], "PYTHONPATH=src python3 -m pytest -q")

REQUIREMENTS_REPO = {
    "requirements.txt": "# no third-party dependencies\n",
    "mathy.py": "def mul(a, b):\n    return a * b\n",
    "test_mathy.py": (
        "import unittest\n\nfrom mathy import mul\n\n\nclass MulTest(unittest.TestCase):\n"
        "    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n"
        "    def test_zero(self):\n        self.assertEqual(mul(0, 3), 0)\n"
    ),
}
# pip installs the (empty) requirements into .deps in the worktree, from no index
REQUIREMENTS_RECIPE = (
    ["python3 -m pip install --no-index --target .deps -r requirements.txt"],
    "PYTHONPATH=.deps python3 -m unittest discover -v",
)

NODE_REPO = {
    "package.json": '{"name": "adder", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
    "index.js": "exports.add = (a, b) => a + b;\n",
    "test/add.test.js": (
        'const test = require("node:test");\nconst assert = require("node:assert");\n'
        'const { add } = require("../index.js");\n'
        'test("adds", () => assert.strictEqual(add(1, 2), 3));\n'
        'test("adds negatives", () => assert.strictEqual(add(-1, -2), -3));\n'
    ),
}
NODE_RECIPE = (["npm install --offline --no-audit --no-fund"], "npm test")


def propose(install: list[str], test: str, notes: str = "") -> Reply:
    """The scripted model's propose_setup call."""
    arguments = {"install": install, "test": test, "notes": notes}
    return Reply(tool_calls=[ScriptedToolCall(name="propose_setup", arguments=arguments)])
