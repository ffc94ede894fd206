"""The cascade's forgiving steps for slips peers' test suites exercise: flattened nesting, literal
escapes, blank lines lost or added, a misremembered middle line; each only where it is unique."""

from __future__ import annotations

import pytest

from keel.tools.apply_patch import ApplyPatchTool
from keel.tools.base import ToolContext, ToolResult
from keel.tools.edit_file import EditFileTool
from keel.tools.editing.matching import MatchError, Stage, replace_text
from keel.tools.editing.patch_format import Hunk, PatchError, apply_hunks
from keel.tools.registry import ToolRegistry

REGISTRY = ToolRegistry([EditFileTool(), ApplyPatchTool()])

JS = (
    "function firstOpen(items) {\n"
    "    for (const item of items) {\n"
    "        if (item.open) {\n"
    "            return item;\n"
    "        }\n"
    "    }\n"
    "    return null;\n"
    "}\n"
)

CACHE = (
    "class Cache:\n"
    "    def get(self, key):\n"
    "        if key in self.data:\n"
    "            return self.data[key]\n"
    "        return None\n"
)


# 3. nesting sent flattened keeps the file's nesting


def test_flattened_block_keeps_the_files_nesting() -> None:
    edit = replace_text(
        JS,
        "  if (item.open) {\n  return item;\n  }",
        "  if (!item.open) {\n  return item.next;\n  }",
    )
    assert edit.text == JS.replace(
        "        if (item.open) {\n            return item;\n",
        "        if (!item.open) {\n            return item.next;\n",
    )
    assert edit.stage is Stage.INDENTATION


def test_flattened_python_keeps_a_body_inside_its_block() -> None:
    edit = replace_text(
        CACHE,
        "if key in self.data:\nreturn self.data[key]\nreturn None",
        "if key in self.data:\nself.hits += 1\nreturn self.data[key]\nreturn self.default",
    )
    assert edit.text == (
        "class Cache:\n"
        "    def get(self, key):\n"
        "        if key in self.data:\n"
        "            self.hits += 1\n"
        "            return self.data[key]\n"
        "        return self.default\n"
    )


def test_flattened_block_with_a_new_nested_line_nests_it_one_file_level_deeper() -> None:
    edit = replace_text(
        CACHE,
        "if key in self.data:\nreturn self.data[key]\nreturn None",
        "if key in self.data:\nif self.trace:\n  print(key)\nreturn self.data[key]\nreturn None",
    )
    assert edit.text == (
        "class Cache:\n"
        "    def get(self, key):\n"
        "        if key in self.data:\n"
        "            if self.trace:\n"
        "                print(key)\n"
        "            return self.data[key]\n"
        "        return None\n"
    )


def test_flattened_hunk_keeps_the_files_nesting() -> None:
    hunk = Hunk(
        old_lines=["if (item.open) {", "return item;", "}"],
        new_lines=["if (item.open) {", "log(item);", "return item;", "}"],
    )
    applied = apply_hunks(JS, [hunk], "first.js")
    assert "        if (item.open) {\n            log(item);\n            return item;\n" in (
        applied.text
    )


# 4. escapes sent literally, taken only when that gives one place


def test_literal_escapes_are_read_as_the_characters_they_stand_for() -> None:
    text = "const msg = `Hi ${name}, it's ${day}`;\nshow(msg);\n"
    edit = replace_text(
        text, "const msg = \\`Hi \\${name}, it\\'s \\${day}\\`;", "const msg = \\`Bye \\${name}\\`;"
    )
    assert edit.text == "const msg = `Bye ${name}`;\nshow(msg);\n"
    assert edit.stage.value == "backslash escapes read as the characters they stand for"


def test_literal_newline_and_doubled_backslash_escapes() -> None:
    text = 'pattern = re.compile(r"\\d+")\nprint("ok")\n'
    edit = replace_text(
        text,
        'pattern = re.compile(r"\\\\d+")\\nprint("ok")',
        'pattern = re.compile(r"\\\\w+")\\nprint("ok")',
    )
    assert edit.text == 'pattern = re.compile(r"\\w+")\nprint("ok")\n'


def test_a_real_backslash_that_matches_is_never_unescaped() -> None:
    text = 'line = "a\\nb"\n'
    edit = replace_text(text, 'line = "a\\nb"', 'line = "a\\nc"')
    assert edit.text == 'line = "a\\nc"\n'
    assert edit.stage is Stage.EXACT


def test_escapes_matching_several_places_get_the_closest_text_error() -> None:
    text = "say('it's one')\nsay('it's one')\n"
    with pytest.raises(MatchError) as info:
        replace_text(text, "say('it\\'s one')", "say('two')")
    assert "No match for old_string" in str(info.value)
    assert "First difference" in str(info.value)


# 5. blank lines: stray at the edges, dropped or added in between

TWO_FUNCTIONS = (
    "import os\n"
    "\n"
    "\n"
    "def home():\n"
    '    base = os.environ["HOME"]\n'
    "\n"
    "    return base\n"
    "\n"
    "\n"
    "def tmp():\n"
    '    return "/tmp"\n'
)


def test_stray_blank_line_at_the_edge_of_old_string_is_forgiven() -> None:
    text = "a = 1\nb = 2\nc = 3\n"
    edit = replace_text(text, "b = 2\nc = 3\n\n", "b = 20\nc = 3\n\n")
    assert edit.text == "a = 1\nb = 20\nc = 3\n"


def test_old_string_that_lost_its_blank_lines_keeps_the_files_blank_lines() -> None:
    edit = replace_text(
        TWO_FUNCTIONS,
        '    return base\ndef tmp():\n    return "/tmp"',
        "    return base\ndef tmp():\n    return tempfile.gettempdir()",
    )
    assert edit.text == TWO_FUNCTIONS.replace('return "/tmp"', "return tempfile.gettempdir()")
    assert edit.lines == [7]
    assert edit.stage.value == "blank lines ignored"


def test_blank_lines_inside_a_changed_run_survive() -> None:
    edit = replace_text(
        TWO_FUNCTIONS,
        'def home():\n    base = os.environ["HOME"]\n    return base\ndef tmp():',
        'def home():\n    base = os.path.expanduser("~")\n    return base\ndef tmp():',
    )
    assert edit.text == TWO_FUNCTIONS.replace('os.environ["HOME"]', 'os.path.expanduser("~")')


def test_blank_lines_the_model_added_are_dropped_with_their_twins_in_new() -> None:
    text = "x = 1\ny = 2\nz = 3\n"
    edit = replace_text(text, "x = 1\n\ny = 2\n\nz = 3", "x = 1\n\ny = 20\n\nz = 3")
    assert edit.text == "x = 1\ny = 20\nz = 3\n"


def test_blank_lines_ignored_only_when_unique() -> None:
    text = "def a():\n    pass\n\nrun()\n\ndef a():\n\n    pass\nrun()\n"
    with pytest.raises(MatchError, match="No match for old_string"):
        replace_text(text, "def a():\n    pass\nrun()", "def a():\n    return 1\nrun()")


def test_hunk_that_lost_its_blank_lines_applies() -> None:
    hunk = Hunk(
        old_lines=['    base = os.environ["HOME"]', "    return base", "def tmp():"],
        new_lines=['    base = os.environ.get("HOME", "/")', "    return base", "def tmp():"],
    )
    applied = apply_hunks(TWO_FUNCTIONS, [hunk], "paths.py")
    assert applied.text == TWO_FUNCTIONS.replace(
        'os.environ["HOME"]', 'os.environ.get("HOME", "/")'
    )


# 6. first and last lines match, the middle nearly does

REPORT = (
    "def report(orders):\n"
    "    total = 0\n"
    "    for order in orders:\n"
    "        total += order.price * order.quantity\n"
    "        count_shipped(order)\n"
    "    return total\n"
)


def test_misremembered_middle_line_is_forgiven_and_the_files_version_kept() -> None:
    edit = replace_text(
        REPORT,
        "def report(orders):\n    total = 0\n    for order in orders:\n"
        "        total += order.price * order.qty\n        count_shipped(order)\n"
        "    return total",
        "def report(orders):\n    total = 0\n    for order in orders:\n"
        "        total += order.price * order.qty\n        count_shipped(order)\n"
        "    return round(total, 2)",
    )
    assert edit.text == REPORT.replace("return total", "return round(total, 2)")
    assert edit.stage.value.startswith("only the first and last lines matched")


def test_a_middle_that_differs_a_lot_gets_the_closest_text_error() -> None:
    with pytest.raises(MatchError) as info:
        replace_text(
            REPORT,
            "def report(orders):\n    total = 0\n    for o in everything_we_sold:\n"
            "        grand += o.cost\n        ship_it(o)\n    return total",
            "x",
        )
    message = str(info.value)
    assert "The closest region is lines 1-6" in message
    assert "line 3 of old_string vs line 3 of the file" in message


def test_a_nearly_equal_middle_in_two_places_is_refused() -> None:
    text = (
        REPORT + "\n" + REPORT.replace("report(", "report2(").replace("def report2", "def report")
    )
    with pytest.raises(MatchError, match="No match for old_string"):
        replace_text(
            text,
            "def report(orders):\n    total = 0\n    for order in orders:\n"
            "        total += order.price * order.qty\n        count_shipped(order)\n"
            "    return total",
            "def report(orders):\n    return 0",
        )


def test_a_short_middle_line_that_is_another_line_entirely_is_refused() -> None:
    text = (
        "def load(path):\n    handle = open_the_configuration_file(path)\n"
        "    settings = parse_every_section_of(handle)\n    x = 1\n"
        "    validate_all_the_settings(settings)\n    register_the_settings_globally(settings)\n"
        "    return settings\n"
    )
    with pytest.raises(MatchError, match="expected:     y = 2"):
        replace_text(text, text.replace("x = 1", "y = 2"), text.replace("x = 1", "y = 3"))


def test_hunk_with_a_misremembered_middle_applies() -> None:
    hunk = Hunk(
        old_lines=[
            "    total = 0",
            "    for order in orders:",
            "        total += order.price * order.qty",
            "        count_shipped(order)",
            "    return total",
        ],
        new_lines=[
            "    total = 0",
            "    for order in orders:",
            "        total += order.price * order.qty",
            "        count_shipped(order)",
            "    return total or None",
        ],
    )
    applied = apply_hunks(REPORT, [hunk], "report.py")
    assert applied.text == REPORT.replace("return total", "return total or None")


def test_hunk_with_nothing_close_still_names_the_closest_region() -> None:
    hunk = Hunk(old_lines=["    total = 1", "    return totals"], new_lines=["    return 0"])
    with pytest.raises(PatchError) as info:
        apply_hunks(REPORT, [hunk], "report.py")
    assert "report.py, hunk 1 of 1" in str(info.value)
    assert "First difference" in str(info.value)


# through the tools, on real files


async def run(ctx: ToolContext, name: str, **arguments: object) -> ToolResult:
    tool, args = REGISTRY.validate(name, arguments)
    return await REGISTRY.run(tool, args, ctx)


async def test_edit_file_says_which_forgiveness_it_used(ctx: ToolContext) -> None:
    path = ctx.root / "paths.py"
    path.write_text(TWO_FUNCTIONS)
    result = await run(
        ctx,
        "edit_file",
        path="paths.py",
        old_string='    return base\ndef tmp():\n    return "/tmp"',
        new_string='    return base\ndef tmp():\n    return "/var/tmp"',
    )
    assert result.ok, result.output
    assert path.read_text() == TWO_FUNCTIONS.replace('"/tmp"', '"/var/tmp"')
    assert "blank lines were ignored" in result.output
    assert '    11\t    return "/var/tmp"' in result.output


async def test_apply_patch_hunk_without_its_blank_lines(ctx: ToolContext) -> None:
    path = ctx.root / "paths.py"
    path.write_text(TWO_FUNCTIONS)
    patch = (
        "*** Begin Patch\n*** Update File: paths.py\n@@\n"
        '     return base\n def tmp():\n-    return "/tmp"\n+    return "/var/tmp"\n'
        "*** End Patch\n"
    )
    result = await run(ctx, "apply_patch", patch=patch)
    assert result.ok, result.output
    assert path.read_text() == TWO_FUNCTIONS.replace('"/tmp"', '"/var/tmp"')
    assert "blank lines ignored" in result.output
