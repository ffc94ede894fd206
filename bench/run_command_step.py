"""bench/run_command_step: wall time of one run_command step under bubblewrap and Landlock, this tree against a base.

`python bench/run_command_step.py [BASE_REV] [--steps N]` exports BASE_REV (default HEAD~1) with
git archive and runs the same steps through the real RunCommandTool with keel loaded from each
tree, one child process per tree, alternating step by step so both see the same machine load.
Prints the median per-step time of each tree and their ratio (this tree / base).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, row

# Runs in a child: keel imported from the tree at argv[1] (not the installed one); each line on stdin
# runs one step and answers its time.
_CHILD = """
import asyncio, importlib.util, os, sys, tempfile, time
from pathlib import Path
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f)]
src, mechanism = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("keel", f"{src}/__init__.py", submodule_search_locations=[src])
module = importlib.util.module_from_spec(spec); sys.modules["keel"] = module; spec.loader.exec_module(module)
from keel.tools.base import ToolContext
from keel.tools.exec.sandbox_mechanism import sandbox_mechanism
from keel.tools.exec.sandbox_policy import SandboxPolicy
from keel.tools.run_command import RunCommandArgs, RunCommandTool

async def main():
    temp = Path(tempfile.mkdtemp())
    (temp / "ws").mkdir()
    ctx = ToolContext(root=temp / "ws", scratch=temp / "scratch", sandbox=SandboxPolicy())
    got = sandbox_mechanism(ctx.sandbox).kind.value
    assert got == mechanism, (got, mechanism)
    tool, args = RunCommandTool(), RunCommandArgs(command="echo step > out.txt")
    await tool.run(args, ctx)  # warm: probes and the job table
    print("ready", flush=True)
    for _ in sys.stdin:
        start = time.perf_counter()
        result = await tool.run(args, ctx)
        elapsed = time.perf_counter() - start
        assert result.ok, result.output
        print(f"{elapsed:.6f}", flush=True)
    await ctx.aclose()

asyncio.run(main())
"""


def path_without_bwrap(farm: Path) -> str:
    """PATH with each folder holding bwrap replaced by a folder of links to its other programs."""
    entries = []
    for entry in os.environ["PATH"].split(os.pathsep):
        if not os.path.isfile(os.path.join(entry, "bwrap")):
            entries.append(entry)
            continue
        links = farm / str(len(entries))
        links.mkdir(parents=True)
        for name in os.listdir(entry):
            if name != "bwrap":
                os.symlink(os.path.join(entry, name), links / name)
        entries.append(str(links))
    return os.pathsep.join(entries)


def interleaved(
    trees: dict[str, Path], mechanism: str, steps: int, env: dict[str, str]
) -> dict[str, list[float]]:
    """Per-step times of each tree, its child running one step in turn with the others."""
    children = {
        name: subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(tree), mechanism],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True,
        )
        for name, tree in trees.items()
    }  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in trees}
    try:
        for child in children.values():
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for _ in range(steps):
            for name, child in children.items():
                assert child.stdin is not None and child.stdout is not None
                child.stdin.write("step\n")
                child.stdin.flush()
                times[name].append(float(child.stdout.readline()))
    finally:
        for child in children.values():
            if child.stdin is not None:
                child.stdin.close()
            child.wait(30)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", nargs="?", default="HEAD~1")
    parser.add_argument("--steps", type=int, default=60)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as temp:
        base = Path(temp) / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", options.base], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        landlock_env = {**os.environ, "PATH": path_without_bwrap(Path(temp) / "farm")}
        for mechanism, env in (("bubblewrap", dict(os.environ)), ("landlock", landlock_env)):
            times = interleaved({"base": base, "this": ROOT}, mechanism, options.steps, env)
            base_ms = statistics.median(times["base"]) * 1000
            this_ms = statistics.median(times["this"]) * 1000
            row(
                f"run_command step, {mechanism}: base {base_ms:.1f} ms",
                f"this {this_ms:.1f} ms",
                f"{this_ms / base_ms:.2f}x the base",
            )


if __name__ == "__main__":
    main()
