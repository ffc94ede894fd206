"""Benchmark: the search tool, called as the agent calls it (result text included), against the `rg` CLI.

Usage: python bench/search.py [TREE] [--runs N]   (default tree: this interpreter's site-packages)

For each pattern it prints the median time of the tool with each engine (`rg` streamed, python-ripgrep in-process)
and of a plain `rg -n PATTERN` over the same tree, as a ratio to rg, and whether the tool meets the goal of at
most 1.1x rg plus 2 ms. The keel repository itself is measured too, as a small tree where process start-up counts.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sysconfig
import time
from pathlib import Path

from tools.base import ToolContext
from tools.registry import ToolRegistry
from tools.ripgrep_runner import rg_binary
from tools.search import SearchTool

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
        "regex, ignore case, some",
        {"pattern": r"deprecated since", "ignore_case": True},
        ["-i", "-e", "deprecated since"],
    ),
    (
        "regex + context 2, some",
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


async def measure(tree: Path, cases: list[tuple[str, dict, list[str]]], runs: int) -> None:
    registry = ToolRegistry([_engine_tool(engine) for engine in ENGINES])
    ctx = ToolContext(root=tree, scratch=tree)
    print(f"\n{tree}  (median of {runs} runs; ratio = time / rg time)")
    print(
        f"{'case':28} {'rg ms':>8} "
        + " ".join(f"{e + ' ms':>12} {'ratio':>6}" for e in ENGINES)
        + "  goal(cli) first line of output"
    )
    for label, arguments, flags in cases:
        timings: dict[str, list[float]] = {"rg": [], **{e: [] for e in ENGINES}}
        output = ""
        for _ in range(runs):  # interleaved, so drift in machine load hits every contender alike
            start = time.perf_counter()
            rg_once(tree, flags)
            timings["rg"].append(time.perf_counter() - start)
            for engine in ENGINES:
                start = time.perf_counter()
                text = await tool_once(registry, engine, ctx, arguments)
                timings[engine].append(time.perf_counter() - start)
                output = text if engine == "cli" else output
        med = {name: statistics.median(values) * 1000 for name, values in timings.items()}
        goal = "ok" if med["cli"] <= 1.1 * med["rg"] + 2 else "MISSED"
        cells = " ".join(f"{med[e]:12.1f} {med[e] / med['rg']:6.2f}" for e in ENGINES)
        print(f"{label:28} {med['rg']:8.1f} {cells}  {goal:6} {output.splitlines()[0][:60]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=sysconfig.get_path("purelib"))
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    repo = Path(__file__).resolve().parent.parent
    asyncio.run(measure(Path(options.tree), CASES, options.runs))
    asyncio.run(measure(repo, CASES[:4], max(options.runs, 9)))


if __name__ == "__main__":
    main()
