"""The match cascade and the patch parser as pure functions: exact, forgiving, ambiguous, none."""

from __future__ import annotations

import pytest

from keel.tools.editing.closest import closest_region, describe_no_match
from keel.tools.editing.line_keys import normalize_unicode, split_lines
from keel.tools.editing.matching import MatchError, Stage, replace_text, strip_line_numbers
from keel.tools.editing.patch_format import (
    AddFile,
    DeleteFile,
    Hunk,
    PatchError,
    UpdateFile,
    apply_hunks,
    parse_patch,
)
from keel.tools.editing.reindent import fit_replacement


def test_exact_substring_inside_a_line() -> None:
    edit = replace_text("x = compute(1)\ny = 2\n", "compute(1)", "compute(2)")
    assert edit.text == "x = compute(2)\ny = 2\n"
    assert edit.stage is Stage.EXACT
    assert edit.lines == [1]


def test_trailing_whitespace_is_forgiven_and_untouched_lines_keep_theirs() -> None:
    text = "a = 1   \nb = 2\t\nc = 3\n"
    edit = replace_text(text, "a = 1\nb = 2\n", "a = 1\nb = 20\n")
    assert edit.stage is Stage.TRAILING_WHITESPACE
    assert edit.text == "a = 1   \nb = 20\nc = 3\n"


def test_indentation_offset_is_applied_to_new_lines() -> None:
    text = "class A:\n    def f(self):\n        return 1\n"
    edit = replace_text(
        text,
        "def f(self):\n    return 1\n",
        "def f(self):\n    if self:\n        return 2\n    return 1\n",
    )
    assert edit.stage is Stage.INDENTATION
    assert edit.text == (
        "class A:\n    def f(self):\n        if self:\n            return 2\n        return 1\n"
    )


def test_tabs_stay_tabs_when_the_model_indents_with_spaces() -> None:
    text = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n"
    edit = replace_text(
        text,
        "    if x {\n        return 1\n    }\n",
        "    if x {\n        y := 2\n        return y\n    }\n",
    )
    assert edit.stage is Stage.INDENTATION
    assert edit.text == "func f() {\n\tif x {\n\t\ty := 2\n\t\treturn y\n\t}\n}\n"


def test_tabs_with_two_space_model_indentation_scale_to_levels() -> None:
    text = "\treturn 1\n"
    edit = replace_text(text, "  return 1", "  if a:\n    return 2\n  return 1")
    assert edit.text == "\tif a:\n\t\treturn 2\n\treturn 1\n"


def test_unicode_punctuation_matches_and_offsets_survive() -> None:
    text = "msg = “hello” — world\nnext = 1\n"
    assert len(normalize_unicode(text)) == len(text)
    edit = replace_text(text, 'msg = "hello" - world', 'msg = "bye"')
    assert edit.stage is Stage.UNICODE
    assert edit.text == 'msg = "bye"\nnext = 1\n'


def test_unicode_in_whole_lines_with_other_indentation() -> None:
    text = "def f():\n    say(‘hi’)\n    return None\n"
    edit = replace_text(text, "say('hi')\nreturn None", "say('hi')\nreturn 1")
    assert edit.stage is Stage.UNICODE
    assert edit.text == "def f():\n    say(‘hi’)\n    return 1\n"


def test_ambiguous_match_names_count_and_lines() -> None:
    text = "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n"
    with pytest.raises(MatchError) as info:
        replace_text(text, "x = 1", "x = 9")
    message = str(info.value)
    assert "3 places" in message and "lines 1, 3, 5" in message and "replace_all" in message


def test_replace_all_changes_every_occurrence() -> None:
    edit = replace_text("x = 1\ny = x\nx = 1\n", "x = 1", "x = 2", replace_all=True)
    assert edit.text == "x = 2\ny = x\nx = 2\n"
    assert edit.lines == [1, 3]


def test_ambiguity_is_also_refused_at_forgiving_stages() -> None:
    text = "def f():\n    return 1\ndef g():\n\treturn 1\n"
    with pytest.raises(MatchError, match="2 places \\(with indentation ignored\\), at lines 2, 4"):
        replace_text(text, "return 1 ", "return 2")


def test_no_match_names_the_closest_region_and_first_differing_line() -> None:
    filler = "".join(f"value_{i} = {i}\n" for i in range(60))
    text = filler + "def total(a, b):\n    result = a + b\n    return result\n" + filler
    with pytest.raises(MatchError) as info:
        replace_text(text, "def total(a, b):\n    result = a - b\n    return result\n", "x")
    message = str(info.value)
    assert "lines 61-63" in message
    assert "line 2 of old_string vs line 62 of the file" in message
    assert "expected:     result = a - b" in message
    assert "actual:       result = a + b" in message
    assert "    62\t    result = a + b" in message


def test_nothing_similar_says_to_read_again() -> None:
    with pytest.raises(MatchError, match="nothing in the file resembles"):
        replace_text("alpha\nbeta\n", "zzz qqq 123 !!!", "x")


def test_copied_line_numbers_are_dropped_as_a_last_resort() -> None:
    assert strip_line_numbers("     3\tfoo\n     4\tbar") == "foo\nbar"
    assert strip_line_numbers("foo\n     4\tbar") is None
    edit = replace_text("foo\nbar\n", "     1\tfoo\n     2\tbar", "     1\tfoo\n     2\tbaz")
    assert edit.text == "foo\nbaz\n"


def test_fit_replacement_keeps_the_files_text_for_unchanged_lines() -> None:
    file_lines = ["\tif x:  ", "\t\treturn “a”"]
    old = ["    if x:", '        return "a"']
    new = ["    if x:", '        return "a"', "    log()"]
    assert fit_replacement(old, new, file_lines, reindent=True) == [
        "\tif x:  ",
        "\t\treturn “a”",
        "\tlog()",
    ]


def test_closest_region_and_split_lines() -> None:
    lines = ["a", "b", "c = 1", "d = 2", "e"]
    region = closest_region(lines, ["c = 1", "d = 3"])
    assert (region.start, region.end) == (2, 4)
    assert split_lines("a\nb\n") == ["a", "b"] and split_lines("a\nb") == ["a", "b"]
    assert "empty" in describe_no_match([], ["x"], "old_string")


PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# Title
+
+text
*** Delete File: old.txt
*** Update File: src/app.py
*** Move to: src/main.py
@@ class App:
@@     def run(self):
         setup()
-        go()
+        go(fast=True)
*** End of File
*** End Patch
"""


def test_parse_patch_reads_every_operation() -> None:
    ops = parse_patch(PATCH)
    assert ops[0] == AddFile("docs/new.md", "# Title\n\ntext\n")
    assert ops[1] == DeleteFile("old.txt")
    update = ops[2]
    assert isinstance(update, UpdateFile)
    assert update.move_to == "src/main.py"
    [hunk] = update.hunks
    assert hunk.anchors == ["class App:", "def run(self):"]
    assert hunk.old_lines == ["        setup()", "        go()"]
    assert hunk.new_lines == ["        setup()", "        go(fast=True)"]
    assert hunk.at_end_of_file


@pytest.mark.parametrize(
    "wrap",
    [
        lambda p: f"```diff\n{p}```\n",
        lambda p: f"apply_patch <<'EOF'\n{p}EOF\n",
        lambda p: f"Here is the patch:\n\n{p}",
        lambda p: p.replace("*** End Patch\n", ""),
        lambda p: p.replace("\n", "\r\n"),
    ],
)
def test_parse_patch_tolerates_wrappers(wrap) -> None:
    assert parse_patch(wrap(PATCH)) == parse_patch(PATCH)


def test_parse_patch_errors_name_the_line() -> None:
    with pytest.raises(PatchError, match="must start with"):
        parse_patch("--- a/x\n+++ b/x\n")
    with pytest.raises(PatchError, match="patch line 3: in '\\*\\*\\* Add File: a' every line"):
        parse_patch("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch")
    with pytest.raises(PatchError, match="no hunks"):
        parse_patch("*** Begin Patch\n*** Update File: a\n*** End Patch")
    with pytest.raises(PatchError, match="unknown directive"):
        parse_patch("*** Begin Patch\n*** Update File: a\n@@\n x\n*** Frobnicate\n*** End Patch")


def test_unified_diff_headers_and_bare_blank_context_are_accepted() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n"
        "@@ -1,3 +1,3 @@ def f():\n x = 1\n\n-y = 2\n+y = 3\n"
    )
    [update] = parse_patch(patch)
    [hunk] = update.hunks
    assert hunk.anchors == ["def f():"]
    assert hunk.old_lines == ["x = 1", "", "y = 2"]


def test_apply_hunks_uses_anchors_and_the_cascade() -> None:
    text = "def a():\n    return 1\n\ndef b():\n    return 1\n"
    hunk = Hunk(anchors=["def b():"], old_lines=["return 1"], new_lines=["return 2"])
    applied = apply_hunks(text, [hunk], "m.py")
    assert applied.text == "def a():\n    return 1\n\ndef b():\n    return 2\n"
    assert applied.stages == [Stage.INDENTATION]


def test_apply_hunks_end_of_file_and_pure_addition() -> None:
    text = "x\ny\nx\n"
    at_end = Hunk(old_lines=["x"], new_lines=["z"], at_end_of_file=True)
    assert apply_hunks(text, [at_end], "f").text == "x\ny\nz\n"
    append = Hunk(new_lines=["tail"])
    assert apply_hunks(text, [append], "f").text == "x\ny\nx\ntail\n"


def test_apply_hunks_failure_names_the_hunk_and_region() -> None:
    text = "one\ntwo\nthree\nfour\n"
    good = Hunk(old_lines=["one"], new_lines=["1"])
    bad = Hunk(old_lines=["three", "five"], new_lines=["3"])
    with pytest.raises(PatchError) as info:
        apply_hunks(text, [good, bad], "n.txt")
    message = str(info.value)
    assert "n.txt, hunk 2 of 2" in message
    assert "lines 3-4" in message and "expected: five" in message and "actual:   four" in message


def test_first_difference_skips_differences_the_cascade_forgives() -> None:
    text = "def f():\n\tx = “a”\n\ty = 2\n\treturn x\n"
    with pytest.raises(MatchError) as info:
        replace_text(text, 'def f():\n    x = "a"\n    y = 3\n    return x\n', "")
    assert "line 3 of old_string vs line 3 of the file" in str(info.value)


def test_unified_diff_furniture_is_skipped() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n"
        "-x\n+y\n\\ No newline at end of file\n*** Add File: b.txt\n+b\n*** End of File\n"
        "*** End Patch"
    )
    update, add = parse_patch(patch)
    assert update.hunks == [Hunk(old_lines=["x"], new_lines=["y"])]
    assert add == AddFile("b.txt", "b\n")


def test_two_space_model_indentation_scales_to_a_four_space_file() -> None:
    text = "class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n"
    edit = replace_text(
        text,
        "def f(self):\n  if x:\n    return 1\n  return 2",
        "def f(self):\n  if x:\n    return 10\n  log()\n  return 2",
    )
    assert edit.text == (
        "class A:\n    def f(self):\n        if x:\n            return 10\n"
        "        log()\n        return 2\n"
    )
