"""A small model's Python edits read as meant (agent/core/strategies/python_edits.py): code blocks of definitions with no
file named go into their file, and an edit_file that replaces a definition's first line with a whole definition
replaces the definition. The replies are the 1.5B's, from bench/small_model.py transcripts."""

from __future__ import annotations

import ast

import pytest
from keel_cli import git_repo
from small_model_support import CAPABLE, call, run_task, served_settings

from keel.agent.core.strategies.python_edits import (
    is_fragment,
    merged,
    target_file,
    widened_old_string,
)
from keel.agent.harness.testing.scripted_server import Reply

TEXT_UTILS = '''"""String helpers."""

import re


def slugify(title):
    """A URL-safe slug."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)
'''
STATS = '''def mean(values):
    """The arithmetic mean of the values."""
    return sum(values) / len(values)


def total(values):
    return sum(values)
'''
WORD_COUNT_REPLY = """To add a word_count function to text_utils.py, you can use the following code:

```python
def word_count(text):
    \"\"\"Return the number of words in the text.\"\"\"
    return len(text.split())
```

This function splits the input text into words."""


def test_a_new_definition_is_added_and_a_known_one_replaced_in_place():
    added = merged(TEXT_UTILS, "def word_count(text):\n    return len(text.split())\n")
    assert added is not None and added.startswith(TEXT_UTILS.rstrip("\n"))
    assert added.endswith("\n\n\ndef word_count(text):\n    return len(text.split())\n")
    replaced = merged(STATS, "def mean(values):\n    return sum(values) / max(len(values), 1)\n")
    assert replaced is not None and "max(len(values), 1)" in replaced
    assert "arithmetic" not in replaced and "def total(values):" in replaced


def test_a_block_of_every_definition_is_the_whole_file_and_imports_are_kept():
    whole = STATS.replace("len(values)", "len(values) or 1")
    assert merged(STATS, whole) == whole
    with_import = merged(TEXT_UTILS, "import math\n\n\ndef root(x):\n    return math.sqrt(x)\n")
    assert with_import is not None and "import re\nimport math\n" in with_import
    ast.parse(with_import)


@pytest.mark.parametrize(
    "block",
    ["def broken(:\n    pass\n", STATS, "print('hi')\n"],
    ids=["does not parse", "changes nothing", "defines nothing"],
)
def test_what_is_not_an_edit_is_none(block):
    assert merged(STATS, block) is None


def test_the_file_is_the_one_defining_the_names_else_the_one_named():
    sources = {"stats.py": STATS, "text_utils.py": TEXT_UTILS}
    assert target_file("def mean(v):\n    return 0\n", sources, []) == "stats.py"
    assert target_file("def word_count(t):\n    return 0\n", sources, ["text_utils.py"]) == (
        "text_utils.py"
    )
    assert target_file("def word_count(t):\n    return 0\n", sources, []) is None
    both = {"a.py": "def f():\n    return 1\n", "b.py": "def f():\n    return 2\n"}
    assert target_file("def f():\n    return 3\n", both, ["a.py"]) is None


def test_a_definition_no_file_has_goes_where_the_project_imports_it_from():
    """A whole-file rewrite lost unique_slug; the test still imports it from textkit.slug, and the model sends
    the function back alone while its reply names both the module and the test: it goes into the module."""
    slug = "import re\n\n\ndef slugify(text):\n    return re.sub(r'\\W+', '-', text)\n"
    test = "from textkit.slug import slugify, unique_slug\n\n\ndef test_it():\n    assert unique_slug\n"
    init = "from .slug import slugify\n"
    sources = {"textkit/__init__.py": init, "textkit/slug.py": slug, "tests/test_slug.py": test}
    block = "def unique_slug(text, taken):\n    return slugify(text)\n"
    named = ["textkit/slug.py", "tests/test_slug.py"]
    assert target_file(block, sources, named) == "textkit/slug.py"
    relative = {**sources, "tests/test_slug.py": "def test_it():\n    pass\n"}
    relative["textkit/__init__.py"] = "from .slug import slugify, unique_slug\n"
    assert target_file(block, relative, named) == "textkit/slug.py"
    assert target_file(block, {**relative, "textkit/__init__.py": init}, named) is None  # two named
    other = {
        **sources,
        "app.py": "from textkit.util import unique_slug\n",
        "textkit/util.py": "X = 1\n",
    }
    assert target_file(block, other, named) is None  # imported from two modules: not one file


def test_a_header_replaced_by_a_whole_definition_widens_to_the_definition():
    new = "def mean(values):\n    if not values:\n        return None\n    return sum(values) / len(values)"
    wider = widened_old_string(STATS, "def mean(values):", new)
    assert wider == STATS.split("\n\n\n")[0]
    guard = "def mean(values):\n    if not values:\n        return None"  # an insertion: kept
    assert widened_old_string(STATS, "def mean(values):", guard) is None
    assert widened_old_string(STATS, "return sum(values)", new) is None
    assert widened_old_string(STATS, "def total(values):", new) is None


async def test_a_small_models_snippet_reply_adds_the_function_to_its_file(
    scripted_server, tmp_path
):
    workspace = git_repo(tmp_path / "repo", {"text_utils.py": TEXT_UTILS})
    server = scripted_server([Reply(text=WORD_COUNT_REPLY), Reply(text="Added word_count.")])
    task = (
        "add a word_count(text) function to text_utils.py that returns how many words the text has"
    )
    events, _ = await run_task(served_settings(server, workspace, loop={"verify": "never"}), task)
    text = (workspace / "text_utils.py").read_text()
    assert "def word_count(text):" in text and "def slugify(title):" in text
    assert events[-1].status == "completed"


def test_a_whole_file_of_new_definitions_only_is_a_fragment():
    task = "add word_count(text)"
    new = "def word_count(text):\n    return len(text.split())\n"
    assert is_fragment(TEXT_UTILS, new, task)
    assert not is_fragment(TEXT_UTILS, TEXT_UTILS + "\n\n" + new, task)  # the file, whole
    assert not is_fragment(TEXT_UTILS, '"""String helpers."""\n', task)  # it removes, adds nothing
    assert not is_fragment("X = 1\n", new, task)  # the file defines nothing
    assert not is_fragment(TEXT_UTILS, "def word_count(text:\n", task)  # not Python
    # a rename: the task names the old definition, or the new one has its body
    assert not is_fragment(TEXT_UTILS, new, "replace slugify with word_count")
    renamed = TEXT_UTILS.replace("def slugify(title)", "def make_slug(title)")
    assert not is_fragment(TEXT_UTILS, renamed, "make the slug function's name clearer")


async def test_a_small_models_whole_file_of_the_new_function_alone_adds_it(
    scripted_server, tmp_path
):
    """The 0.5B's answer to the project's files (bench/small_model.py add_function): the file back unchanged,
    then the file again holding only the new function. Written as given, the file lost slugify."""
    workspace = git_repo(tmp_path / "repo", {"text_utils.py": TEXT_UTILS})
    fragment = (
        'import re\n\n\ndef word_count(text):\n    """Words."""\n    return len(text.split())\n'
    )
    reply = f"FILE: text_utils.py\n```python\n{TEXT_UTILS}```\n\nFILE: text_utils.py\n```python\n{fragment}```"
    server = scripted_server([Reply(text=reply), Reply(text="Added word_count.")])
    task = "add a word_count(text) function to text_utils.py that returns how many words it has"
    events, _ = await run_task(served_settings(server, workspace, loop={"verify": "never"}), task)
    text = (workspace / "text_utils.py").read_text()
    assert text.startswith(TEXT_UTILS) and "def word_count(text):" in text, text
    assert text.count("import re") == 1
    assert events[-1].status == "completed"


async def test_a_capable_models_snippet_is_only_an_answer(scripted_server, tmp_path):
    workspace = git_repo(tmp_path / "repo", {"text_utils.py": TEXT_UTILS})
    server = scripted_server([Reply(text=WORD_COUNT_REPLY)])
    events, _ = await run_task(served_settings(server, workspace, CAPABLE), "add word_count")
    assert (workspace / "text_utils.py").read_text() == TEXT_UTILS
    assert events[-1].final_message == WORD_COUNT_REPLY


async def test_a_small_models_header_edit_replaces_the_whole_function(scripted_server, tmp_path):
    workspace = git_repo(tmp_path / "repo", {"stats.py": STATS})
    new = "def mean(values):\n    if not values:\n        return None\n    return sum(values) / len(values)"
    edit = call("edit_file", path="stats.py", old_string="def mean(values):", new_string=new)
    server = scripted_server([edit, Reply(text="mean() handles an empty list.")])
    await run_task(
        served_settings(server, workspace, loop={"verify": "never"}), "make mean return None for []"
    )
    text = (workspace / "stats.py").read_text()
    assert text.startswith(new + "\n\n\ndef total(values):"), text


async def test_edit_first_the_call_after_the_files_offers_no_tools(scripted_server, tmp_path):
    """A small model's change task: the files come with it and the next call asks for the files it changes,
    as one call would (no tools offered), and so does the call after its files failed keel's checks; the calls
    after a reply that gave no files (here: nudged) offer the tools."""
    workspace = git_repo(tmp_path / "repo", {"stats.py": STATS})
    whole = STATS.replace(
        "return sum(values) / len(values)", "return sum(values) / max(len(values), 1)"
    )
    broken = whole.replace("def mean(values):", "def mean(values)")
    server = scripted_server(
        [Reply(text=f"FILE: stats.py\n```python\n{broken}```")]
        + [Reply(text=f"FILE: stats.py\n```python\n{whole}```")]
    )
    task = "make mean() return 0 for an empty list"
    await run_task(served_settings(server, workspace), task)
    assert (workspace / "stats.py").read_text() == whole
    assert "FILE: <path>" in server.requests[0].last_text("user")
    assert not server.requests[0].tools and not server.requests[1].tools
    assert "SyntaxError" in server.requests[1].last_text("user")

    other = git_repo(tmp_path / "other", {"stats.py": STATS})
    nudged = scripted_server(
        [Reply(text="mean() needs a guard."), call("write_file", path="stats.py", content=whole)]
        + [Reply(text="Done.")]
    )
    await run_task(served_settings(nudged, other), task)
    assert (other / "stats.py").read_text() == whole
    assert not nudged.requests[0].tools and nudged.requests[1].tools


async def test_a_small_model_sending_the_file_unchanged_again_ends_instead_of_looping(
    scripted_server, tmp_path
):
    """After its edit the 1.5B sent the same whole file again and again until the loop guard stopped the task
    (`loop_detected`): a whole file in its text that changes nothing is no call, so that reply is its answer."""
    workspace = git_repo(tmp_path / "repo", {"stats.py": STATS})
    whole = STATS.replace(
        "return sum(values) / len(values)", "return sum(values) / max(len(values), 1)"
    )
    again = Reply(text=f"FILE: stats.py\n```python\n{whole}```")
    # its answer to the files changes nothing; after the nudge it sends the file, then sends it again
    script = [
        Reply(text="mean() needs a guard."),
        again,
        again,
        again,
        again,
        again,
        Reply(text="Done."),
    ]
    server = scripted_server(script)
    events, _ = await run_task(
        served_settings(server, workspace, loop={"verify": "never"}), "make mean() return 0 for []"
    )
    assert (workspace / "stats.py").read_text() == whole
    assert events[-1].status == "completed" and len(server.requests) == 3
