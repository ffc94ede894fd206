"""Search/replace blocks: a small model given a file too long to rewrite whole, and no tools, changes it by
blocks in its reply (bench/small_model medium set: asked to "change with edit_file" with no tools offered,
the 1.5B rewrote a 201-line file whole and ran out of reply tokens)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keel_cli import git_repo
from small_model_support import model_answer, run_task, served_settings

from keel.agent.core.context.edit_format import WHOLE_FILE_MAX_LINES
from keel.agent.core.protocol import ToolFinished
from keel.agent.core.reply_reading import file_edits
from keel.agent.core.strategies.edit_blocks import cut_off_file, edit_blocks
from keel.agent.harness.testing.scripted_server import Reply

SIZES = {"money.py": 4000, "rates.py": 900}.get


def block(old: str, new: str) -> str:
    replacing = f"{new}\n" if new else ""
    return f"<<<<<<< SEARCH\n{old}\n=======\n{replacing}>>>>>>> REPLACE\n"


def edits(text: str) -> list[tuple[str, str, str, str]]:
    found = []
    for call in edit_blocks(text, SIZES):
        args = json.loads(call.arguments)
        found.append((call.name, args["path"], args["old_string"], args["new_string"]))
    return found


def test_blocks_under_a_file_name_are_edits_of_that_file_fenced_or_not():
    fenced = "FILE: money.py\n```python\n" + block("a = 1", "a = 2") + block("b", "c") + "```\n"
    assert edits(fenced) == [
        ("edit_file", "money.py", "a = 1", "a = 2"),
        ("edit_file", "money.py", "b", "c"),
    ]
    bare = "Here is the fix.\n\n**rates.py**\n" + block("x\n  y", "x\n  z") + "\nmoney.py:\n"
    bare += block("q", "r")
    assert edits(bare) == [
        ("edit_file", "rates.py", "x\n  y", "x\n  z"),
        ("edit_file", "money.py", "q", "r"),
    ]
    named_in_fence = "```python money.py\n" + block("a", "b") + "```"
    assert edits(named_in_fence) == [("edit_file", "money.py", "a", "b")]


def test_lines_taken_out_go_with_their_line_ends():
    assert edits("money.py\n" + block("gone\nalso", "")) == [
        ("edit_file", "money.py", "gone\nalso\n", "")
    ]


def test_blocks_keel_cannot_place_or_that_change_nothing_are_left_out():
    assert edits(block("a", "b")) == []  # under no file's name
    assert edits("FILE: other.py\n" + block("a", "b")) == []  # not a project file
    after_other = "FILE: money.py\n" + block("a", "b") + "FILE: other.py\n" + block("c", "d")
    assert edits(after_other) == [("edit_file", "money.py", "a", "b")]
    assert edits("FILE: money.py\n" + block("", "new")) == []  # nothing to search for
    assert edits("FILE: money.py\n" + block("same", "same")) == []
    unclosed = "FILE: money.py\n<<<<<<< SEARCH\na\n=======\nb\n"
    assert edits(unclosed) == []
    assert edit_blocks("FILE: money.py\n" + block("a", "b"), None) == []  # not a small model


def test_a_fenced_block_of_search_replace_blocks_is_no_whole_file():
    text = "FILE: money.py\n```python\n" + block("a = 1", "a = 2") + "```\n"
    assert [call.name for call in file_edits(text, SIZES)] == ["edit_file"]
    whole = "FILE: rates.py\n```python\nx = 1\n```\n"
    assert [call.name for call in file_edits(whole + text, SIZES)] == ["write_file", "edit_file"]


# ------------------------------------------------ through a session, against the scripted server

LONG = "".join(f"RATE_{n} = {n}\n" for n in range(WHOLE_FILE_MAX_LINES + 20))
TABLE = {
    "rates.py": LONG,
    "money.py": "from rates import RATE_7\n\n\ndef cents(x):\n    return x\n",
}


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    return git_repo(tmp_path / "repo", TABLE)


async def test_a_long_file_is_asked_for_by_blocks_and_a_reply_of_blocks_changes_it(
    scripted_server, workspace
):
    reply = "FILE: rates.py\n```python\n" + block("RATE_7 = 7", "RATE_7 = 70") + "```\nRaised."
    server = scripted_server([Reply(text=reply)])
    events, _ = await run_task(served_settings(server, workspace), "Set RATE_7 to 70 in rates.py")
    given = server.requests[0].messages[-1]["content"]
    assert "Too long to give whole: rates.py." in given and "<<<<<<< SEARCH" in given
    assert not server.requests[0].tool_names  # edit first: no tools, so edit_file is not asked for
    results = [(e.name, e.status) for e in events if isinstance(e, ToolFinished)]
    assert results == [("edit_file", "ok")]
    assert (workspace / "rates.py").read_text() == LONG.replace("RATE_7 = 7\n", "RATE_7 = 70\n")
    assert model_answer(events[-1].final_message) == "Raised." and len(server.requests) == 1


async def test_the_example_blocks_copied_as_they_are_fail_and_change_nothing(
    scripted_server, workspace
):
    copied = "FILE: rates.py\n" + block(
        "(the lines as they are now)", "(the lines that replace them)"
    )
    server = scripted_server([Reply(text=copied), Reply(text="I could not change it.")])
    events, _ = await run_task(served_settings(server, workspace), "Set RATE_7 to 70 in rates.py")
    results = [(e.name, e.status) for e in events if isinstance(e, ToolFinished)]
    assert results == []  # the example's lines are keel's own words: a copy, run as no edit
    assert (workspace / "rates.py").read_text() == LONG
    told = str(server.requests[1].messages[-1]["content"])
    assert "your reply only repeated keel's message to you, which is not an answer" in told


def test_a_whole_file_cut_off_by_the_length_limit_is_named():
    cut = "Here it is.\nFILE: rates.py\n```python\nRATE_0 = 0\nRATE_1 ="
    assert cut_off_file(cut, SIZES) == "rates.py"
    assert cut_off_file(cut.replace("rates.py", "other.py"), SIZES) is None  # not a project file
    assert cut_off_file("FILE: rates.py\n```python\nx = 1\n```\nAnd then", SIZES) is None  # closed
    assert cut_off_file("```python money.py\nx = 1", SIZES) == "money.py"
    assert cut_off_file(cut, None) is None


async def test_a_long_file_given_whole_past_the_reply_limit_gets_told_to_change_only_its_lines(
    scripted_server, workspace
):
    """The 1.5B, asked for blocks, gave a 201-line file whole anyway and was cut off by its reply limit; it was
    told to "send a shorter call" with a read_file example, and spent its next call the same way. Its answer
    to the project's files is asked for again in that call's form: blocks of lines, no tool call's example."""
    cut = Reply(text="FILE: rates.py\n```python\n" + LONG[:300], finish_reason="length")
    server = scripted_server([cut, Reply(text="I could not change it.")])
    await run_task(served_settings(server, workspace), "Set RATE_7 to 70 in rates.py")
    told = str(server.requests[1].messages[-1]["content"])
    assert "reached the length limit while it gave rates.py whole" in told
    assert "<<<<<<< SEARCH" in told and "<tool_call>" not in told
    assert not server.requests[1].tools
    assert (workspace / "rates.py").read_text() == LONG
