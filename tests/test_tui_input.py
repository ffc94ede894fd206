"""The TUI's input and wording, without an app: slash commands, budget values, the prompt history, formats."""

from __future__ import annotations

import pytest

from keel.tui import format as fmt
from keel.tui.commands import CommandError, SlashCommand, parse_budget, parse_command
from keel.tui.history import InputHistory
from keel.tui.transcript import ToolEntry
from keel.tui.widgets.tool_details import MAX_OUTPUT_LINES, render_details


def test_slash_commands_parse():
    assert parse_command("fix the bug") is None
    assert parse_command("//not a command") is None
    assert parse_command("/budget 200k") == SlashCommand("budget", "200k")
    assert parse_command("  /new ") == SlashCommand("new")
    with pytest.raises(CommandError, match="unknown command /nope"):
        parse_command("/nope")
    assert parse_command("/quit") == SlashCommand("quit") and parse_command(
        "/exit"
    ) == SlashCommand("exit")
    assert parse_command("/undo") == SlashCommand("undo")
    assert parse_command("/undo 3f2a") == SlashCommand("undo", "3f2a")


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("200000", 200_000),
        ("200k", 200_000),
        ("1.5M", 1_500_000),
        ("50_000", 50_000),
        ("off", None),
    ],
)
def test_budget_values(text, tokens):
    assert parse_budget(text) == tokens


@pytest.mark.parametrize("text", ["lots", "-5", "0", ""])
def test_bad_budget_values_say_what_works(text):
    with pytest.raises(CommandError, match="200k|at least 1"):
        parse_budget(text)


def test_history_walks_back_and_returns_to_the_draft():
    history = InputHistory()
    for text in ("one", "two", "two", "  "):
        history.add(text)
    assert history.items == ["one", "two"]
    assert history.previous("draft") == "two"
    assert history.previous("two") == "one"
    assert history.previous("one") is None
    assert history.next() == "two"
    assert history.next() == "draft"
    assert history.next() is None


def test_formats():
    assert [fmt.tokens(n) for n in (999, 1000, 1234, 2_500_000, None)] == [
        "999",
        "1k",
        "1.2k",
        "2.5M",
        "∞",
    ]
    assert fmt.duration(12) == "12ms" and fmt.duration(1500) == "1.5s"
    assert (
        fmt.argument_summary("run_command", {"command": "pytest -q", "timeout": 5}) == "pytest -q"
    )
    assert (
        fmt.argument_summary("apply_patch", {"patch": "*** Begin Patch\n*** Update File: a.py\n"})
        == "a.py"
    )
    assert fmt.clip_lines("a\nb\nc", 2) == ("a\nb", 1)
    assert [fmt.plural(n, "line") for n in (0, 1, 2, 1500)] == [
        "0 lines",
        "1 line",
        "2 lines",
        "1,500 lines",
    ]
    assert fmt.plural(1, "match") == "1 match" and fmt.plural(3, "match") == "3 matches"
    one_over = ToolEntry("c1", "run_command", {}, state="ok", output="x\n" * (MAX_OUTPUT_LINES + 1))
    assert render_details(one_over).plain.endswith("… 1 more line")
