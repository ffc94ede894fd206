"""code_map on real files in real git repos: outlines, per-language tags, ranking, cache, query, budget."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from keel.tools.base import FileStamp, ToolContext, ToolError
from keel.tools.code_map import CodeMapArgs, CodeMapTool
from keel.tools.codeintel.source_files import discover
from keel.tools.codeintel.tag_cache import TagCache


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return ToolContext(root=root, scratch=tmp_path / "scratch")


@pytest.fixture
def tool(tmp_path: Path) -> CodeMapTool:
    return CodeMapTool(cache_dir=tmp_path / "cache", workers=1)


async def code_map(tool: CodeMapTool, ctx: ToolContext, **arguments: str) -> str:
    return (await tool.run(CodeMapArgs(**arguments), ctx)).output


CART = """
import json

TAX_RATE = 0.2

class Cart:
    \"\"\"Items to buy.\"\"\"

    def __init__(self, owner: str) -> None:
        self.items = []

    @property
    def total(self) -> float:
        return sum(self.items)

def checkout(cart: Cart,
             pay: bool = True) -> str:
    return json.dumps(cart.total)
"""


async def test_python_outline_nests_methods_under_their_class_with_line_numbers(
    tool: CodeMapTool, ctx: ToolContext
) -> None:
    write(ctx.root, "shop/cart.py", CART)
    assert await code_map(tool, ctx, path="shop/cart.py") == textwrap.dedent("""\
        shop/cart.py
          3: TAX_RATE = 0.2
          5: class Cart:
            8: def __init__(self, owner: str) -> None:
            12: def total(self) -> float:
          15: def checkout(cart: Cart, pay: bool = True) -> str:""")


def make_filler(root: Path) -> None:
    """Definitions nobody uses, enough that a directory's outline no longer fits a small map."""
    write(root, "filler.py", "".join(f"def filler_{i}():\n    pass\n" for i in range(40)))


def make_library(root: Path, users: int = 6) -> None:
    """core.py defines a function many files call; aaa_spare.py (first by path) one nobody does."""
    write(
        root,
        "core.py",
        """
        def heavily_used(value):
            return value * 2
        """,
    )
    write(
        root,
        "aaa_spare.py",
        """
        def never_used(value):
            return value
        """,
    )
    for number in range(users):
        write(
            root,
            f"users/user_{number}.py",
            f"""
            from core import heavily_used

            def task_{number}():
                return heavily_used({number})
            """,
        )


async def test_repo_map_ranks_the_referenced_definition_above_the_unreferenced(
    tmp_path: Path, ctx: ToolContext
) -> None:
    make_library(ctx.root)
    make_filler(ctx.root)
    small = CodeMapTool(map_tokens=150, cache_dir=tmp_path / "cache", workers=1)
    text = await code_map(small, ctx)
    assert text.startswith("Repo map of .: 9 source files")
    assert "\ncore.py\n  1: def heavily_used(value):\n" in text
    assert "never_used" not in text or text.index("heavily_used") < text.index("never_used")
    assert len(text) <= 150 * 4


async def test_a_use_counts_for_the_definition_its_file_imports(
    tmp_path: Path, ctx: ToolContext
) -> None:
    write(ctx.root, "aaa/pages.py", "def render(page):\n    return page\n")
    write(ctx.root, "lib/widgets.py", "def render(widget):\n    return widget\n")
    write(ctx.root, "app.py", "from lib import widgets\n\nwidgets.render(1)\nwidgets.render(2)\n")
    make_filler(ctx.root)
    small = CodeMapTool(map_tokens=150, cache_dir=tmp_path / "cache", workers=1)
    files = [line for line in (await code_map(small, ctx)).splitlines() if line.endswith(".py")]
    assert files[0] == "lib/widgets.py"  # before aaa/pages.py, which comes first by path


async def test_files_in_play_pull_their_dependencies_up(tmp_path: Path, ctx: ToolContext) -> None:
    write(ctx.root, "alpha.py", "def alpha_api():\n    pass\n")
    write(ctx.root, "beta.py", "def beta_api():\n    pass\n")
    write(ctx.root, "uses_alpha.py", "from alpha import alpha_api\nalpha_api()\nalpha_api()\n")
    write(ctx.root, "uses_both.py", "from alpha import alpha_api\nfrom beta import beta_api\n")
    reader = write(ctx.root, "work.py", "from beta import beta_api\n\nbeta_api()\n")
    make_filler(ctx.root)
    small = CodeMapTool(map_tokens=150, cache_dir=tmp_path / "cache", workers=1)
    before = await code_map(small, ctx)
    assert before.index("alpha_api") < before.index("beta_api")
    ctx.read_stamps[reader] = FileStamp.of(reader)
    after = await code_map(small, ctx)
    assert "favouring files you read or changed" in after
    assert after.index("beta_api") < after.index("alpha_api")


async def test_same_output_on_repeated_calls_and_from_a_fresh_tool(
    tmp_path: Path, ctx: ToolContext
) -> None:
    make_library(ctx.root, users=12)
    first_tool = CodeMapTool(map_tokens=100, cache_dir=tmp_path / "one", workers=1)
    first = await code_map(first_tool, ctx)
    assert await code_map(first_tool, ctx) == first
    fresh = CodeMapTool(map_tokens=100, cache_dir=tmp_path / "two", workers=1)
    assert await code_map(fresh, ctx) == first


async def test_only_the_changed_file_is_parsed_again(tool: CodeMapTool, ctx: ToolContext) -> None:
    make_library(ctx.root)
    await code_map(tool, ctx)
    cache = tool.cache_for(ctx.root)
    assert cache.parses == 8
    await code_map(tool, ctx)
    assert cache.parses == 8
    write(
        ctx.root,
        "core.py",
        "def heavily_used(value):\n    return value\n\ndef brand_new():\n    pass\n",
    )
    text = await code_map(tool, ctx)
    assert cache.parses == 9
    assert "brand_new" in text


async def test_after_edits_the_map_is_what_a_fresh_start_gives(
    tmp_path: Path, ctx: ToolContext
) -> None:
    make_library(ctx.root, users=4)
    make_filler(ctx.root)
    running = CodeMapTool(map_tokens=150, cache_dir=tmp_path / "running", workers=1)
    before = await code_map(running, ctx)
    for number in range(3):
        write(
            ctx.root, f"users/user_{number}.py", "from aaa_spare import never_used\nnever_used(1)\n"
        )
    write(ctx.root, "users/user_9.py", "from filler import filler_7\nfiller_7()\n")
    (ctx.root / "users/user_3.py").unlink()
    after = await code_map(running, ctx)
    fresh = CodeMapTool(map_tokens=150, cache_dir=tmp_path / "fresh", workers=1)
    assert after == await code_map(fresh, ctx)

    def file_order(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.endswith(".py")]

    assert file_order(before)[0] == "core.py"
    assert file_order(after)[:3] == ["aaa_spare.py", "filler.py", "core.py"]


async def test_tags_on_disk_spare_a_new_session_the_parse(tmp_path: Path, ctx: ToolContext) -> None:
    make_library(ctx.root)
    first = CodeMapTool(cache_dir=tmp_path / "cache", workers=1)
    await code_map(first, ctx)
    first.cache_for(ctx.root).save()
    second = CodeMapTool(cache_dir=tmp_path / "cache", workers=1)
    await code_map(second, ctx)
    assert second.cache_for(ctx.root).parses == 0


def test_the_process_pool_gives_the_same_tags_as_one_process(tmp_path: Path) -> None:
    make_library(tmp_path, users=12)
    files = discover(tmp_path, tmp_path)
    pooled = TagCache(workers=2, pool_min_files=2).tags(files)
    assert pooled == TagCache(workers=1).tags(files)


async def test_query_finds_definition_and_uses(tool: CodeMapTool, ctx: ToolContext) -> None:
    make_library(ctx.root, users=3)
    write(ctx.root, "notes.py", '"""heavily_used is only mentioned here."""\n')
    text = await code_map(tool, ctx, query="heavily_used")
    assert "core.py:1: def heavily_used(value):" in text
    for number in range(3):
        assert f"users/user_{number}.py:1: from core import heavily_used" in text
        assert f"users/user_{number}.py:4: return heavily_used({number})" in text
    assert "Uses of `heavily_used` (matched by name) in 3 files:" in text
    assert "notes.py" not in text  # named only in a docstring


async def test_query_for_a_member_names_its_container(tool: CodeMapTool, ctx: ToolContext) -> None:
    write(ctx.root, "shop/cart.py", CART)
    write(ctx.root, "report.py", "def report(cart):\n    return cart.total\n")
    text = await code_map(tool, ctx, query="Cart.total")
    assert "shop/cart.py:12: def total(self) -> float:  [in Cart]" in text
    assert "report.py:2: return cart.total" in text
    missing = await code_map(tool, ctx, query="nothing_like_this")
    assert missing.startswith("No definition or use of `nothing_like_this`")


async def test_the_map_stays_within_its_token_budget(tmp_path: Path, ctx: ToolContext) -> None:
    for number in range(40):
        body = "".join(
            f"def function_{number}_{i}(argument_{i}):\n    return {i}\n\n" for i in range(15)
        )
        write(ctx.root, f"pkg/module_{number}.py", body)
    write(ctx.root, "main.py", "".join(f"function_{n}_1(1)\n" for n in range(40)))
    for tokens in (30, 300, 2000):
        text = await code_map(
            CodeMapTool(map_tokens=tokens, cache_dir=tmp_path / "c", workers=1), ctx
        )
        assert "function_0_1(argument_1)" in text
        assert text.startswith("Repo map of .:") == (tokens > 30)
        assert len(text) <= tokens * 4


async def test_small_directory_gets_the_full_outline(tool: CodeMapTool, ctx: ToolContext) -> None:
    write(ctx.root, "shop/cart.py", CART)
    write(ctx.root, "shop/README.md", "# not code\n")
    text = await code_map(tool, ctx, path="shop")
    assert text.startswith("Outline of shop (1 source files):\nshop/cart.py\n")
    assert "    12: def total(self) -> float:" in text


async def test_discovery_follows_gitignore_and_walks_outside_git(
    tmp_path: Path, ctx: ToolContext
) -> None:
    write(ctx.root, ".gitignore", "generated/\n")
    write(ctx.root, "kept.py", "def kept():\n    pass\n")
    write(ctx.root, "generated/skip.py", "def skipped():\n    pass\n")
    assert [source.rel for source in discover(ctx.root, ctx.root)] == ["kept.py"]
    plain = tmp_path / "plain"
    write(plain, "src/app.py", "x = 1\n")
    write(plain, "node_modules/lib/index.js", "function f() {}\n")
    write(plain, ".venv/lib/site.py", "y = 2\n")
    write(plain, "minified.js", "var a=1;" * 5000)
    assert [source.rel for source in discover(plain, plain)] == ["minified.js", "src/app.py"]
    text = await code_map(
        CodeMapTool(cache_dir=tmp_path / "c", workers=1),
        ToolContext(root=plain, scratch=tmp_path),
        path=".",
    )
    assert "src/app.py" in text and "minified.js" not in text


async def test_mistakes_come_back_as_errors_saying_what_works(
    tool: CodeMapTool, ctx: ToolContext
) -> None:
    write(ctx.root, "notes.txt", "hello\n")
    with pytest.raises(ToolError, match="does not exist"):
        await code_map(tool, ctx, path="missing.py")
    with pytest.raises(ToolError, match="no grammar for notes.txt.*read_file"):
        await code_map(tool, ctx, path="notes.txt")
    with pytest.raises(ToolError, match="not a symbol name"):
        await code_map(tool, ctx, query="foo(.*)")
    with pytest.raises(ToolError, match="outside the workspace"):
        await code_map(tool, ctx, path="../..")
