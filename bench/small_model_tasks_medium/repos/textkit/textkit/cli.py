"""The `textkit` command: slug, wrap, case, stats, table and strip over arguments or files."""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

from textkit.case import swap_case_style
from textkit.entities import strip_tags
from textkit.markdown import to_text
from textkit.slug import slugify
from textkit.stats import flesch_reading_ease, reading_minutes, text_stats, word_frequencies
from textkit.tables import render_table
from textkit.wrap import fill


def read_input(source: str) -> str:
    """The text of a file, or of standard input for `-`."""
    if source == "-":
        return sys.stdin.read()
    return Path(source).read_text(encoding="utf-8")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, one sub-command per tool."""
    parser = argparse.ArgumentParser(prog="textkit", description="Small text utilities.")
    commands = parser.add_subparsers(dest="command", required=True)

    slug = commands.add_parser("slug", help="a URL slug for TEXT")
    slug.add_argument("text", nargs="+")
    slug.add_argument("--separator", default="-")
    slug.add_argument("--max-length", type=int, default=80)

    wrap = commands.add_parser("wrap", help="re-wrap a file's paragraphs")
    wrap.add_argument("file", help="a file, or - for standard input")
    wrap.add_argument("--width", type=int, default=70)
    wrap.add_argument("--indent", default="")

    case = commands.add_parser("case", help="convert an identifier's case")
    case.add_argument("style", choices=["snake", "kebab", "constant", "pascal", "camel", "title"])
    case.add_argument("text", nargs="+")

    stats = commands.add_parser("stats", help="counts, reading time and readability of a file")
    stats.add_argument("file")
    stats.add_argument("--top", type=int, default=10, help="how many frequent words to list")

    table = commands.add_parser("table", help="a CSV file as a text table")
    table.add_argument("file")
    table.add_argument("--border", choices=["none", "ascii", "unicode"], default="none")
    table.add_argument("--no-header", action="store_true")

    strip = commands.add_parser("strip", help="the plain text of an HTML or Markdown file")
    strip.add_argument("file")
    strip.add_argument("--markdown", action="store_true")
    strip.add_argument("--width", type=int)
    return parser


def run(args: argparse.Namespace) -> str:
    """The output of one command."""
    if args.command == "slug":
        return slugify(" ".join(args.text), args.separator, args.max_length)
    if args.command == "wrap":
        return fill(read_input(args.file), args.width, args.indent)
    if args.command == "case":
        return swap_case_style(" ".join(args.text), args.style)
    if args.command == "stats":
        text = read_input(args.file)
        counts = text_stats(text)
        lines = [
            f"characters  {counts.characters}",
            f"words       {counts.words}",
            f"sentences   {counts.sentences}",
            f"reading     {reading_minutes(text)} min",
            f"ease        {flesch_reading_ease(text)}",
        ]
        frequent = word_frequencies(text, args.top)
        if frequent:
            lines += ["", render_table(frequent, header=["word", "count"])]
        return "\n".join(lines)
    if args.command == "table":
        with open(args.file, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        if args.no_header or not rows:
            return render_table(rows, border=args.border)
        return render_table(rows[1:], header=rows[0], border=args.border)
    if args.command == "strip":
        text = read_input(args.file)
        return to_text(text, args.width) if args.markdown else strip_tags(text)
    raise ValueError(f"unknown command {args.command}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a missing file is reported, not raised."""
    args = build_parser().parse_args(argv)
    try:
        print(run(args))
    except OSError as exc:
        print(f"textkit: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
