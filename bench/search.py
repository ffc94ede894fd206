"""Benchmark: the search tool, called as the agent calls it (output text included), against `rg`.

Usage: python bench/search.py [TREE] [--runs N]   (default tree: this interpreter's site-packages)

For each case it prints the median wall time of a plain `rg -n PATTERN` over the tree and of the
tool with each engine (`rg` streamed, python-ripgrep in-process) as ratios to rg, the CPU-time
ratio of the rg engine (steadier on a busy machine), and whether the tool meets the goal of at
most 1.1x rg plus 2 ms. The keel repository is measured too: a small tree, where start-up counts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sysconfig
import time
from pathlib import Path

from keel.tools.base import ToolContext
from keel.tools.registry import ToolRegistry
from keel.tools.search import SearchTool
from keel.tools.searching.ripgrep_runner import rg_binary

# (label, tool arguments, the rg flags that ask the same)
CASES: list[tuple[str, dict, list[str]]] = [
    ("literal, common", {"pattern": "import", "fixed_string": True}, ["-F", "-e", "import"]),
    (
        "literal, rare",
        {"pattern": "zq_never_there_qz", "fixed_string": True},
        ["-F", "-e", "zq_never_there_qz"],
    ),
    ("regex, common", {"pattern": r"def \w+\(self"}, ["-e", r"def \w+\(self"]),
    ("regex, rare", {"pattern": r"class \w+Frobnicator\b"}, ["-e", r"class \w+Frobnicator\b"]),
    (
        "regex, ignore case",
        {"pattern": r"deprecated since", "ignore_case": True},
        ["-i", "-e", "deprecated since"],
    ),
    (
        "regex + context 2",
        {"pattern": r"raise NotImplementedError\(", "context": 2},
        ["-C", "2", "-e", r"raise NotImplementedError\("],
    ),
    (
        "name glob *.pyi",
        {"pattern": r"def \w+", "glob": "*.pyi"},
        ["-g", "*.pyi", "-e", r"def \w+"],
    ),
    (
        "path glob */tests/*.py",
        {"pattern": "assert", "glob": "*/tests/*.py"},
        ["-g", "*/tests/*.py", "-e", "assert"],
    ),
]

ENGINES = ("cli", "inprocess")


def rg_once(tree: Path, flags: list[str]) -> None:
    subprocess.run(
        [rg_binary() or "rg", "--no-config", "-n", "--no-heading", *flags, "."],
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )


async def tool_once(registry: ToolRegistry, engine: str, ctx: ToolContext, arguments: dict) -> str:
    tool, args = registry.validate(f"search_{engine}", arguments)
    result = await registry.run(tool, args, ctx)
    return result.output


def _engine_tool(engine: str) -> SearchTool:
    tool = SearchTool(engine)  # type: ignore[arg-type]
    tool.name = f"search_{engine}"  # one registry entry per engine
    return tool


def cpu_seconds() -> float:
    """CPU time of this process and its reaped children: steadier than wall time under load."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def measure(tree: Path, cases: list[tuple[str, dict, list[str]]], runs: int) -> None:
    registry = ToolRegistry([_engine_tool(engine) for engine in ENGINES])
    ctx = ToolContext(root=tree, scratch=tree)
    print(f"\n{tree}  (median of {runs} runs; ratio = time / rg time; cpu = CPU-time ratio)")
    print(
        f"{'case':26} {'rg ms':>7} {'cli ms':>7} {'ratio':>5} {'cpu':>5} "
        f"{'inproc ms':>9} {'ratio':>5}"
        "  goal  first line of the tool's output"
    )
    for label, arguments, flags in cases:
        wall: dict[str, list[float]] = {"rg": [], **{e: [] for e in ENGINES}}
        cpu: dict[str, list[float]] = {"rg": [], **{e: [] for e in ENGINES}}
        output = ""
        for _ in range(runs):  # interleaved, so drifting machine load hits every contender alike
            for name in ("rg", *ENGINES):
                start, start_cpu = time.perf_counter(), cpu_seconds()
                if name == "rg":
                    rg_once(tree, flags)
                else:
                    text = await tool_once(registry, name, ctx, arguments)
                    output = text if name == "cli" else output
                wall[name].append(time.perf_counter() - start)
                cpu[name].append(cpu_seconds() - start_cpu)
        ms = {name: statistics.median(values) * 1000 for name, values in wall.items()}
        cpu_ratio = statistics.median(cpu["cli"]) / max(statistics.median(cpu["rg"]), 1e-6)
        goal = "ok" if ms["cli"] <= 1.1 * ms["rg"] + 2 else "MISSED"
        print(
            f"{label:26} {ms['rg']:7.1f} {ms['cli']:7.1f} {ms['cli'] / ms['rg']:5.2f} "
            f"{cpu_ratio:5.2f} {ms['inprocess']:9.1f} {ms['inprocess'] / ms['rg']:5.2f}  "
            f"{goal:5} {output.splitlines()[0][:50]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=sysconfig.get_path("purelib"))
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    repo = Path(__file__).resolve().parent.parent
    print(f"rg: {rg_binary()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    asyncio.run(measure(Path(options.tree), CASES, options.runs))
    asyncio.run(measure(repo, CASES[:4], max(options.runs, 9)))


if __name__ == "__main__":
    main()
