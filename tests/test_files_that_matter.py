"""The files a small model gets with its task when the project is too big to give whole: those defining the
identifiers the task names, then the repo map's ranked files, up to a share of the window (issue 29, point 4)."""

from __future__ import annotations

from pathlib import Path

from keel_cli import git_repo
from small_model_support import call, keel_messages, run_task, served_settings

from keel.agent.core.context.files_that_matter import (
    defining_files,
    files_that_matter,
    ranked_files,
    read_up_to,
    share_of_window,
    task_identifiers,
    word_stem,
)
from keel.agent.harness.testing.scripted_server import Reply
from keel.tools.codeintel.ranking import RankedDefinition
from keel.tools.codeintel.tags import Definition, FileTags

FILLER = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(120))
SLUGIFY = "def slugify(text):\n    return text.replace(' ', '-')\n"
PROJECT = {
    "app.py": "from textutil import slugify\n\n\ndef main():\n    print(slugify('A b'))\n",
    "textutil.py": SLUGIFY,
    "helpers/big_a.py": FILLER,
    "helpers/big_b.py": FILLER,
    "helpers/big_c.py": FILLER,
    "README.md": "A project.\n",
}


def tags(*names: str) -> FileTags:
    return FileTags(tuple(Definition(n, "function", 1, 2, 0, f"def {n}()") for n in names), {})


def test_task_identifiers_are_the_words_that_may_name_code():
    assert task_identifiers("make `TextUtil.slugify` lowercase, ok?") == {
        "make",
        "TextUtil",
        "slugify",
        "lowercase",
    }


def test_defining_files_puts_files_matching_more_names_first():
    by_file = {"a.py": tags("slugify"), "b.py": tags("slugify", "render"), "c.py": tags("other")}
    assert defining_files(by_file, {"slugify", "render", "missing"}) == ["b.py", "a.py"]
    assert defining_files(by_file, {"missing"}) == []
    assert defining_files({"render.py": tags("x")}, {"render"}) == [
        "render.py"
    ]  # named by its stem
    # by the word's stem: "Slugs break at accented letters" names slug.py, "Wrapping text" wrap.py
    slug_and_wrap = {"slug.py": tags("x"), "wrap.py": tags("y"), "stats.py": tags("z")}
    assert defining_files(slug_and_wrap, {"Slugs", "break", "accented"}) == ["slug.py"]
    assert defining_files(slug_and_wrap, {"Wrapping", "text"}) == ["wrap.py"]
    assert defining_files(slug_and_wrap, {"statement"}) == []


def test_word_stems_meet_the_names_of_files():
    pairs = [
        ("slugs", "slug"),
        ("Wrapping", "wrap"),
        ("tables", "table"),
        ("currencies", "currency"),
    ]
    pairs += [("classes", "class"), ("types", "type")]
    assert all(word_stem(word) == word_stem(name) for word, name in pairs)
    assert word_stem("rounded") == "round" and word_stem("has") == "has"


def test_ranked_files_keeps_each_file_once_in_the_order_of_its_best_definition():
    definition = Definition("f", "function", 1, 1, 0, "def f()")
    ranked = [RankedDefinition(rel, 0, definition, 1.0) for rel in ("b.py", "a.py", "b.py")]
    assert ranked_files(ranked) == ["b.py", "a.py"]


def test_read_up_to_skips_a_file_that_would_not_fit_and_takes_a_smaller_one(tmp_path: Path):
    (tmp_path / "big.py").write_text("x" * 100)
    (tmp_path / "small.py").write_text("y" * 10)
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01")
    chosen = read_up_to(tmp_path, ["blob.bin", "big.py", "small.py", "missing.py"], 50)
    assert [f.path for f in chosen] == ["small.py"]


def test_share_of_window_in_characters():
    assert share_of_window(16_384) == 16_384  # a quarter of the tokens, at 4 characters a token
    assert share_of_window(16_384, share=0.5) == 32_768


def test_files_that_matter_puts_the_file_defining_the_named_identifier_first(tmp_path: Path):
    repo = git_repo(tmp_path / "repo", PROJECT)
    chosen = files_that_matter(repo, "slugify should lowercase its text", limit=6_000)
    paths = [f.path for f in chosen]
    assert paths[0] == "textutil.py" and "app.py" in paths
    assert sum(len(f.text) for f in chosen) <= 6_000 and "README.md" not in paths
    assert files_that_matter(tmp_path / "empty", "anything", 1_000) == []


async def test_a_small_model_gets_the_files_that_matter_when_the_project_is_too_big(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    assert sum(len(text) for text in PROJECT.values()) > 12_000  # too big to give whole
    fix = {
        "path": "textutil.py",
        "old_string": "text.replace",
        "new_string": "text.lower().replace",
    }
    server = scripted_server([call("edit_file", **fix), Reply(text="slugify lowercases now.")])
    settings = served_settings(server, repo, context_window=16_384, loop={"verify": "never"})
    # the task's words name a file, no function in it: the files, not one function (test_focused_definition)
    events, _ = await run_task(settings, "textutil's output should be lower case")
    (given,) = keel_messages(events, "context")
    assert given.startswith("The project's files that matter most for the task")
    assert "FILE: textutil.py" in given and SLUGIFY.strip() in given
    assert events[-1].status == "completed"  # the edit ran: the file counted as read
    assert "text.lower().replace" in (repo / "textutil.py").read_text()
