"""apply_patch on real files: add, delete, update, move, all or nothing, model slips tolerated."""

from __future__ import annotations

from pathlib import Path

from keel.tools.apply_patch import ApplyPatchTool
from keel.tools.base import ToolContext, ToolResult
from keel.tools.read_file import ReadFileTool
from keel.tools.registry import ToolRegistry

REGISTRY = ToolRegistry([ReadFileTool(), ApplyPatchTool()])


async def call(ctx: ToolContext, name: str, **arguments) -> ToolResult:
    tool, args = REGISTRY.validate(name, arguments)
    return await REGISTRY.run(tool, args, ctx)


async def patch(ctx: ToolContext, text: str) -> ToolResult:
    return await call(ctx, "apply_patch", patch=text)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def test_update_add_delete_in_one_patch(ctx: ToolContext) -> None:
    write(ctx.root, "app.py", "def main():\n    print('hi')\n    return 0\n")
    write(ctx.root, "old.txt", "bye\n")
    result = await patch(
        ctx,
        """*** Begin Patch
*** Update File: app.py
@@ def main():
-    print('hi')
+    print('hello')
     return 0
*** Add File: docs/guide.md
+# Guide
+
+Read me.
*** Delete File: old.txt
*** End Patch""",
    )
    assert result.ok, result.output
    assert (ctx.root / "app.py").read_text() == "def main():\n    print('hello')\n    return 0\n"
    assert (ctx.root / "docs/guide.md").read_text() == "# Guide\n\nRead me.\n"
    assert not (ctx.root / "old.txt").exists()
    assert result.output.split("\n")[1:] == ["  M app.py", "  A docs/guide.md", "  D old.txt"]
    assert "+++ b/docs/guide.md" in result.diff and "--- a/old.txt\n+++ /dev/null" in result.diff


async def test_third_failing_hunk_leaves_every_file_untouched(ctx: ToolContext) -> None:
    write(ctx.root, "a.py", "A = 1\n")
    write(ctx.root, "b.py", "B = 1\n")
    write(ctx.root, "c.py", "def c():\n    value = compute()\n    return value\n")
    before = snapshot(ctx.root)
    result = await patch(
        ctx,
        """*** Begin Patch
*** Update File: a.py
-A = 1
+A = 2
*** Update File: b.py
-B = 1
+B = 2
*** Add File: d.py
+D = 1
*** Update File: c.py
@@ def c():
-    value = compute_all()
+    value = compute_all(fast=True)
     return value
*** End Patch""",
    )
    assert not result.ok
    assert "nothing was changed" in result.output
    assert "Update File: c.py, hunk 1 of 1" in result.output
    assert "lines 2-3" in result.output and "expected:     value = compute_all()" in result.output
    assert snapshot(ctx.root) == before


async def test_move_to_renames_edits_and_keeps_the_mode(ctx: ToolContext) -> None:
    source = write(ctx.root, "bin/tool", "#!/bin/sh\necho old\n")
    source.chmod(0o755)
    result = await patch(
        ctx,
        """*** Begin Patch
*** Update File: bin/tool
*** Move to: scripts/tool.sh
@@
 #!/bin/sh
-echo old
+echo new
*** End Patch""",
    )
    assert result.ok, result.output
    moved = ctx.root / "scripts/tool.sh"
    assert not source.exists() and moved.read_text() == "#!/bin/sh\necho new\n"
    assert moved.stat().st_mode & 0o777 == 0o755
    assert "R bin/tool -> scripts/tool.sh" in result.output
    assert ctx.root / "scripts/tool.sh" in ctx.changed_files and source in ctx.changed_files


async def test_delete_file_and_its_errors(ctx: ToolContext) -> None:
    write(ctx.root, "gone.bin", "x")
    (ctx.root / "gone.bin").write_bytes(b"\x00\x01binary")
    assert (await patch(ctx, "*** Begin Patch\n*** Delete File: gone.bin\n*** End Patch")).ok
    assert not (ctx.root / "gone.bin").exists()
    missing = await patch(ctx, "*** Begin Patch\n*** Delete File: gone.bin\n*** End Patch")
    assert not missing.ok and "does not exist" in missing.output


async def test_crlf_and_tabs_survive_a_patch_written_with_lf_and_spaces(ctx: ToolContext) -> None:
    path = ctx.root / "Main.java"
    path.write_bytes(b"class Main {\r\n\tvoid run() {\r\n\t\tstart();\r\n\t}\r\n}\r\n")
    result = await patch(
        ctx,
        """*** Begin Patch
*** Update File: Main.java
@@ class Main {
     void run() {
         start();
+        finish();
     }
*** End Patch""",
    )
    assert result.ok, result.output
    assert path.read_bytes() == (
        b"class Main {\r\n\tvoid run() {\r\n\t\tstart();\r\n\t\tfinish();\r\n\t}\r\n}\r\n"
    )
    assert "indentation ignored" in result.output


async def test_model_slips_fences_heredoc_and_missing_end(ctx: ToolContext) -> None:
    write(ctx.root, "n.txt", "one\ntwo\n")
    fenced = "```\n*** Begin Patch\n*** Update File: n.txt\n-one\n+ONE\n*** End Patch\n```"
    assert (await patch(ctx, fenced)).ok
    heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: n.txt\n-two\n+TWO\nEOF"
    assert (await patch(ctx, heredoc)).ok
    assert (ctx.root / "n.txt").read_text() == "ONE\nTWO\n"


async def test_refusals_name_the_problem(ctx: ToolContext) -> None:
    write(ctx.root, "here.txt", "x\n")
    exists = await patch(ctx, "*** Begin Patch\n*** Add File: here.txt\n+y\n*** End Patch")
    assert not exists.ok and "already exists" in exists.output and "Update File" in exists.output
    twice = await patch(
        ctx,
        "*** Begin Patch\n*** Update File: here.txt\n-x\n+y\n"
        "*** Delete File: here.txt\n*** End Patch",
    )
    assert not twice.ok and "more than once" in twice.output
    unreadable = await patch(ctx, "diff --git a/here.txt b/here.txt\n-x\n+y\n")
    assert not unreadable.ok and "Begin Patch" in unreadable.output
    assert (ctx.root / "here.txt").read_text() == "x\n"


async def test_stale_file_is_refused(ctx: ToolContext) -> None:
    path = write(ctx.root, "s.py", "a = 1\n")
    assert (await call(ctx, "read_file", path="s.py")).ok
    path.write_text("a = 1\nb = 22\n")
    result = await patch(
        ctx, "*** Begin Patch\n*** Update File: s.py\n-a = 1\n+a = 2\n*** End Patch"
    )
    assert not result.ok and "changed on disk" in result.output
    assert path.read_text() == "a = 1\nb = 22\n"


async def test_lint_after_patch_counts_only_new_problems(ctx: ToolContext) -> None:
    write(ctx.root, "pkg/m.py", "import sys\n\n\ndef f():\n    return 1\n")
    result = await patch(
        ctx,
        """*** Begin Patch
*** Update File: pkg/m.py
*** Move to: pkg/n.py
@@ def f():
-    return 1
+    return missing_name
*** End Patch""",
    )
    assert result.ok, result.output
    assert "introduced 1 lint problem" in result.output
    assert "pkg/n.py:5:12: F821" in result.output and "F401" not in result.output


async def test_read_only_file_stops_the_whole_patch(ctx: ToolContext) -> None:
    write(ctx.root, "a.txt", "a\n")
    locked = write(ctx.root, "b.txt", "b\n")
    locked.chmod(0o444)
    result = await patch(
        ctx,
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n"
        "*** Update File: b.txt\n-b\n+B\n*** End Patch",
    )
    assert not result.ok and "b.txt is read-only" in result.output
    assert (ctx.root / "a.txt").read_text() == "a\n"


async def test_unencodable_text_in_a_later_file_stops_the_whole_patch(ctx: ToolContext) -> None:
    write(ctx.root, "a.txt", "a\n")
    (ctx.root / "legacy.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    before = snapshot(ctx.root)
    result = await patch(
        ctx,
        "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n"
        "*** Update File: legacy.txt\n-caf\xe9\n+caf\u2615\n*** End Patch",
    )
    assert not result.ok and "Latin-1" in result.output
    assert snapshot(ctx.root) == before
