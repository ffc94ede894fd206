"""Benchmark code_map on 5,000+ Python files: cold, warm, one edit, disk-cache start, pool vs not, aider."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from keel.tools.base import ToolContext
from keel.tools.code_map import CodeMapArgs, CodeMapTool
from keel.tools.codeintel.tag_cache import idle_cores

GOALS = {"cold": 15.0, "warm": 1.0, "one edited file": 1.0}
AIDER_PYTHON = Path("/tmp/aidervenv/bin/python")
_AIDER_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from aider.repomap import RepoMap

    class Quiet:
        def tool_output(self, *a, **k): pass
        tool_warning = tool_error = tool_output
        def read_text(self, name):
            try:
                return Path(name).read_text(errors="replace")
            except OSError:
                return None

    class Model:
        def token_count(self, text):
            return len(text) / 4

    root, edited = sys.argv[1], sys.argv[2]
    files = [str(Path(root, line)) for line in sys.stdin.read().split("\\0") if line]
    repo_map = RepoMap(map_tokens=2000, root=root, main_model=Model(), io=Quiet(), refresh="always")
    times = {}
    for label in ("cold", "warm", "one edited file"):
        if label == "one edited file":
            with open(edited, "a") as handle:
                handle.write("\\n\\ndef aider_bench_edit():\\n    return 2\\n")
        started = time.perf_counter()
        text = repo_map.get_repo_map([], files)
        times[label] = time.perf_counter() - started
    times["chars"] = len(text or "")
    print(json.dumps(times))
    """
)


def build_tree(destination: Path, count: int) -> list[str]:
    """Copy the first `count` of site-packages' Python files into a fresh git repo."""
    site = Path(sysconfig.get_paths()["purelib"])
    copied: list[str] = []
    for source in sorted(site.rglob("*.py")):
        if len(copied) == count:
            break
        rel = source.relative_to(site)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        target = destination / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied.append(rel.as_posix())
    if len(copied) < count:
        sys.exit(f"only {len(copied)} Python files under {site}; the bench wants {count}")
    git = ["git", "-C", str(destination), "-c", "user.email=b@b", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], check=True)
    return copied


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # this process plus finished children (the parse pool's workers)
    output: str


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def timed_map(tool: CodeMapTool, ctx: ToolContext, **arguments: str) -> Timing:
    started, cpu = time.perf_counter(), cpu_seconds()
    result = asyncio.run(tool.run(CodeMapArgs(**arguments), ctx))
    return Timing(time.perf_counter() - started, cpu_seconds() - cpu, result.output)


def report(label: str, timing: Timing, baseline: float, baseline_name: str) -> None:
    print(
        f"  {label:<30} {timing.wall:7.2f} s wall {timing.cpu:7.2f} s cpu"
        f"   {timing.wall / baseline:5.2f}x {baseline_name}"
    )


def run_aider(root: Path, files: list[str], edited: Path) -> dict[str, float] | None:
    if not AIDER_PYTHON.exists():
        print("  aider: not installed at /tmp/aidervenv (skipped)")
        return None
    done = subprocess.run(
        [str(AIDER_PYTHON), "-c", _AIDER_SCRIPT, str(root), str(edited)],
        input="\0".join(files),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        print(f"  aider: failed ({done.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=6000, help="Python files in the tree")
    parser.add_argument(
        "--skip-other-cold",
        action="store_true",
        help="skip the cold run with the other worker choice (pool vs one process)",
    )
    parser.add_argument("--skip-aider", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="keel-bench-map-") as temporary:
        root, cache_dir = Path(temporary, "tree"), Path(temporary, "cache")
        root.mkdir()
        files = build_tree(root, options.files)
        megabytes = sum((root / f).stat().st_size for f in files) / 1e6
        print(
            f"tree: {len(files)} Python files, {megabytes:.1f} MB, git repo; {os.cpu_count()} cores,"
            f" load average {os.getloadavg()[0]:.1f}"
        )
        ctx = ToolContext(root=root, scratch=Path(temporary))
        tool = CodeMapTool(cache_dir=cache_dir)
        runs: dict[str, Timing] = {}
        chosen_workers = idle_cores()
        runs["cold"] = timed_map(tool, ctx)
        cache = tool.cache_for(ctx.root)
        parsed_cold = cache.parses
        runs["warm"] = timed_map(tool, ctx)
        assert runs["warm"].output == runs["cold"].output, "the map changed with nothing changed"
        edited = root / files[len(files) // 2]
        with open(edited, "a") as handle:
            handle.write("\n\ndef keel_bench_edit():\n    return 1\n")
        before = cache.parses
        runs["one edited file"] = timed_map(tool, ctx)
        reparsed = cache.parses - before
        runs["query 'get'"] = timed_map(tool, ctx, query="get")
        cache.save()
        disk_tool = CodeMapTool(cache_dir=cache_dir)
        runs["cold start, tags on disk"] = timed_map(disk_tool, ctx)
        disk_parses = disk_tool.cache_for(ctx.root).parses
        text = runs["cold"].output
        print(f"cold run parsed with {chosen_workers} process(es) (one per idle core)")
        print(
            f"map: {len(text)} chars (~{len(text) // 4} tokens); cold parsed {parsed_cold} files;"
            f" after one edit {reparsed} re-parsed; disk-cache start parsed {disk_parses}"
        )
        print("goals (2 cores, shared with whatever else runs):")
        for label, goal in GOALS.items():
            report(label, runs[label], goal, f"of the {goal:g} s goal")
        print("side by side (same run):")
        report(
            "cold start, tags on disk",
            runs["cold start, tags on disk"],
            runs["cold"].wall,
            "of cold without disk cache",
        )
        report("query 'get' (warm)", runs["query 'get'"], runs["warm"].wall, "of warm map")
        if not options.skip_other_cold:
            # The cold run above chose its workers by idle cores; time the other choice too.
            other = 1 if chosen_workers > 1 else os.cpu_count() or 1
            label = "cold, one process" if other == 1 else f"cold, pool of {other} processes"
            report(
                label,
                timed_map(CodeMapTool(use_disk_cache=False, workers=other), ctx),
                runs["cold"].wall,
                "of the cold run above",
            )
        if not options.skip_aider:
            (root / ".gitignore").write_text(".aider*\n")
            aider = run_aider(root, files, root / files[len(files) // 3])
            if aider is not None:
                print(f"aider-chat repo map (refresh=always, map {int(aider['chars'])} chars):")
                for label in GOALS:
                    seconds = aider[label]
                    print(
                        f"  aider {label:<24} {seconds:7.2f} s wall"
                        f"   {seconds / runs[label].wall:5.2f}x keel's"
                    )


if __name__ == "__main__":  # the parse pool spawns processes that import this module
    main()
