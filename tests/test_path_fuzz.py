"""Path confinement under fuzzing: the real file tools, hypothesis-made paths, 0 writes outside the workspace.

Paths mix `..`, absolute paths (into the workspace, next to it, `/`, `~`), symlinks pointing inside
and outside, chains of links, dangling links, a link loop and a hard link; each case runs one to
three real tool calls (write_file, edit_file, apply_patch, read_file) through the ToolRegistry.
The tree around the workspace is hashed (names, modes, bytes, link targets, empty directories)
before and after every case.
"""

from __future__ import annotations

import asyncio
import hashlib
import operator
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keel.tools.apply_patch import ApplyPatchTool
from keel.tools.base import ToolContext, ToolError, real_below
from keel.tools.edit_file import EditFileTool
from keel.tools.read_file import ReadFileTool
from keel.tools.registry import ToolRegistry
from keel.tools.write_file import WriteFileTool

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "2000"))
FRESH = "kf9_"  # names the fuzz may create; none may appear anywhere outside the workspace
OUTSIDE_TEXT = "secret outside\n"
INSIDE_TEXT = "alpha inside\n"

NAMES = [
    "..", ".", "", "~", "a.txt", "sub", "b.txt", "in_file", "in_dir", "out_file", "out_dir",
    "chain1", "ichain1", "dangling_out", "dangling_out_dir", "dangling_in", "dangling_in_dir",
    "loop1", "root_link", "parent_link", "self_link", "hard", "outside", "ws", "ws_sibling",
    "secret.txt", "dir", "inner.txt", "tmp", f"{FRESH}new.txt", f"{FRESH}dir", "ws\\..", " ..",
]  # fmt: skip


def build_world(base: Path) -> tuple[Path, Path]:
    """The tree outside (`base` but `ws`) and a fresh workspace `ws` full of tricky links."""
    outside, sibling, ws = base / "outside", base / "ws_sibling", base / "ws"
    if not outside.exists():
        (outside / "dir").mkdir(parents=True)
        (outside / "secret.txt").write_text(OUTSIDE_TEXT)
        (outside / "dir" / "inner.txt").write_text(OUTSIDE_TEXT)
        (outside / "hard.txt").write_text(OUTSIDE_TEXT)
        sibling.mkdir()
        (sibling / "b.txt").write_text(OUTSIDE_TEXT)
    if ws.exists():
        shutil.rmtree(ws)
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text(INSIDE_TEXT)
    (ws / "sub" / "b.txt").write_text(INSIDE_TEXT)
    links = {
        "in_file": "a.txt",
        "in_dir": "sub",
        "out_file": "../outside/secret.txt",
        "out_dir": str(outside / "dir"),
        "chain1": "chain2",
        "chain2": "sub/chain3",
        "sub/chain3": "../../outside",
        "ichain1": "ichain2",
        "ichain2": "in_dir",
        "dangling_out": "../outside/kf9_missing.txt",
        "dangling_out_dir": str(outside / "kf9_nodir"),
        "dangling_in": "sub/kf9_missing.txt",
        "dangling_in_dir": "kf9_newdir",
        "loop1": "loop2",
        "loop2": "loop1",
        "root_link": str(base.parent),
        "parent_link": "..",
        "self_link": ".",
        "sub/up": "../../ws_sibling",
    }
    for name, target in links.items():
        os.symlink(target, ws / name)
    os.link(outside / "hard.txt", ws / "hard")
    return outside, ws


def fingerprint(ws: Path) -> list[tuple[str, int, int, int]]:
    """A cheap view of the workspace (names, inodes, sizes, mtimes): has a case changed it?"""
    entries = []
    for directory, dirs, files in os.walk(ws):
        for name in dirs + files:
            st_ = os.lstat(os.path.join(directory, name))
            entries.append(
                (os.path.join(directory, name), st_.st_ino, st_.st_size, st_.st_mtime_ns)
            )
    return sorted(entries)


def world_hash(around: Path, workspace: Path) -> str:
    """Everything under `around` but the workspace: entries, modes, bytes and link targets."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(around):
        dirs[:] = sorted(d for d in dirs if Path(directory, d) != workspace)
        for name in sorted(dirs + files):
            path = os.path.join(directory, name)
            st_ = os.lstat(path)
            digest.update(f"{os.path.relpath(path, around)}|{st_.st_mode:o}|".encode())
            if os.path.islink(path):
                digest.update(os.readlink(path).encode())
            elif os.path.isfile(path):
                digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def fresh_names_outside(base: Path) -> list[str]:
    """Files or directories the fuzz could have made in places it must not write."""
    found = []
    for place in (
        Path("/"),
        Path.home(),
        Path("/tmp"),
        base.parent,
        base,
        base / "outside",
        base / "ws_sibling",
    ):
        if place.is_dir():
            found += [str(place / n) for n in os.listdir(place) if n.startswith(FRESH)]
    return found


def paths(base: Path) -> st.SearchStrategy[str]:
    """Paths in and around the workspace; ones aimed at `/` or `~` only name FRESH entries there.

    So that a confinement bug, should one appear, leaves only kf9_* names to clean up outside
    the test's own directory (and every link the workspace holds points into that directory).
    """
    local_prefixes = [
        "",
        "",
        "",
        "./",
        "../",
        f"{base}/ws/",
        f"{base}/",
        f"{base}/outside/",
        f"{base}/ws/../",
    ]
    component = st.one_of(
        st.sampled_from(NAMES), st.text(alphabet="ab.~/\\-", min_size=1, max_size=4)
    )
    first = component.filter(
        lambda part: not part.lstrip("./").startswith("~")
    )  # "~..." means home
    local = st.builds(
        lambda prefix, head, rest, slash: prefix + "/".join([head, *rest]) + ("/" if slash else ""),
        st.sampled_from(local_prefixes),
        first,
        st.lists(component, max_size=5),
        st.booleans(),
    )
    fresh = st.sampled_from(
        [f"{FRESH}new.txt", f"{FRESH}dir/{FRESH}x.txt", f"../{FRESH}up.txt", f"./{FRESH}d/"]
    )
    system = st.builds(
        operator.add,
        st.sampled_from(["/", "~/", "~", "~\\", "~root/", "~nobody-kf9/", "//"]),
        fresh,
    )
    return st.one_of(local, local, local, system)


def calls(base: Path) -> st.SearchStrategy[list[tuple[str, dict]]]:
    path = paths(base)
    patch_section = st.one_of(
        st.builds(lambda p: f"*** Add File: {p}\n+{FRESH}added\n", path),
        st.builds(lambda p: f"*** Delete File: {p}\n", path),
        st.builds(lambda p: f"*** Update File: {p}\n@@\n-secret outside\n+PWNED\n", path),
        st.builds(lambda p: f"*** Update File: {p}\n@@\n-alpha inside\n+PWNED\n", path),
        st.builds(
            lambda p, q: f"*** Update File: {p}\n*** Move to: {q}\n@@\n-alpha inside\n+moved\n",
            path,
            path,
        ),
    )
    call = st.one_of(
        st.builds(lambda p: [("write_file", {"path": p, "content": "PWNED\n"})], path),
        st.builds(
            lambda p: [
                ("read_file", {"path": p}),
                ("write_file", {"path": p, "content": "PWNED\n"}),
            ],
            path,
        ),
        st.builds(
            lambda p, old: [
                ("read_file", {"path": p}),
                ("edit_file", {"path": p, "old_string": old, "new_string": "PWNED"}),
            ],
            path,
            st.sampled_from(["secret outside", "alpha inside", ""]),
        ),
        st.builds(
            lambda sections: [
                (
                    "apply_patch",
                    {"patch": "*** Begin Patch\n" + "".join(sections) + "*** End Patch\n"},
                )
            ],
            st.lists(patch_section, min_size=1, max_size=3),
        ),
    )
    return st.lists(call, min_size=1, max_size=3).map(
        lambda chunks: [c for chunk in chunks for c in chunk]
    )


@pytest.mark.slow
def test_no_file_tool_writes_outside_the_workspace(tmp_path, tmp_path_factory):
    scratch = tmp_path_factory.mktemp("fuzz-scratch")
    around = Path(os.path.realpath(tmp_path))
    base = around / "world"
    base.mkdir()
    registry = ToolRegistry([ReadFileTool(), WriteFileTool(), EditFileTool(), ApplyPatchTool()])
    loop = asyncio.new_event_loop()
    _, ws = build_world(base)
    expected = world_hash(around, ws)
    pristine = [fingerprint(ws)]
    tally = {"cases": 0, "calls": 0, "ok": 0, "writes_outside": 0}
    tool_bugs: set[str] = set()

    async def run(sequence: list[tuple[str, dict]], ctx: ToolContext) -> None:
        for name, arguments in sequence:
            tally["calls"] += 1
            try:
                tool, args = registry.validate(name, arguments)
            except ToolError:
                continue
            result = await registry.run(tool, args, ctx)
            tally["ok"] += result.ok
            if result.output.startswith("Error ("):  # not a ToolError: a bug in a tool, reported
                tool_bugs.add(result.output.splitlines()[0])

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(calls(base))
    def case(sequence: list[tuple[str, dict]]) -> None:
        if (
            fingerprint(ws) != pristine[0]
        ):  # a case changed the workspace: start the next from scratch
            build_world(base)
            pristine[0] = fingerprint(ws)
        ctx = ToolContext(
            root=ws, scratch=scratch
        )  # keel's own scratch space lives outside the hashed world
        tally["cases"] += 1
        loop.run_until_complete(run(sequence, ctx))
        leaked, now = fresh_names_outside(base), world_hash(around, ws)
        if now != expected or leaked:
            tally["writes_outside"] += 1
        assert now == expected, f"the tree outside the workspace changed: {sequence}"
        assert leaked == [], f"created outside the workspace: {leaked} by {sequence}"

    try:
        case()
    finally:
        loop.close()
    print(
        f"\ncases: {tally['cases']}, tool calls: {tally['calls']} ({tally['ok']} succeeded), "
        f"writes outside: {tally['writes_outside']}"
    )
    for bug in sorted(tool_bugs):
        print(f"  tool error that is not a ToolError: {bug}")
    assert tally["cases"] >= EXAMPLES
    assert tally["ok"] > EXAMPLES // 10, "the fuzz should also make writes that are allowed"


def test_resolving_below_the_root_is_realpath_for_every_path_of_the_world(tmp_path):
    """The shortcut resolve takes (no walk of the root's own components) gives what os.path.realpath gives,
    for the fuzz's paths through links in and out, dangling links, loops, `..` and absolute paths."""
    base = Path(os.path.realpath(tmp_path)) / "world"
    base.mkdir()
    _, ws = build_world(base)
    (
        ws / "sub" / "deep"
    ).mkdir()  # a path below a real folder below the root: the shortcut's own case
    root = str(ws)
    checked = []

    @settings(max_examples=1500, deadline=None, database=None, derandomize=True)
    @given(st.one_of(paths(base), st.sampled_from(["sub/deep/x", "in_dir/deep", "sub/up/b.txt"])))
    def case(path: str) -> None:
        candidate = Path(path) if Path(path).is_absolute() else ws / path
        assert real_below(root, str(candidate)) == os.path.realpath(candidate), path
        checked.append(path)

    case()
    assert len(checked) >= 1500
