"""A project too big to give a small model whole, and a task whose words name a function of the file that matters
most: the model is shown that function with its file's outline, and the function it sends back goes into the
file (issue 29, point 4: given journal.py whole the 1.5B sent it back unchanged; given `quarter`, it fixed it)."""

from __future__ import annotations

import sys

from keel_cli import git_repo
from small_model_support import keel_messages, run_task, served_settings
from test_task_ending import sampling_asked

from keel.agent.core.context.small_project import ProjectFile
from keel.agent.core.strategies.focused_definition import focused_definition
from keel.agent.harness.testing.scripted_server import Reply

FILLER = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(120))
TEXTUTIL = '''"""Text helpers."""

import re

SEPARATOR = "-"


def normalize_spaces(text):
    return re.sub(r"\\s+", " ", text)


@staticmethod
def slugify(text):
    """A slug of `text`: its words joined by the separator."""
    return normalize_spaces(text).replace(" ", SEPARATOR)


class Slugger:
    """Slugs that stay unique."""

    def __init__(self):
        self.taken = set()
'''
PROJECT = {
    "app.py": "from textutil import slugify\n\n\ndef main():\n    print(slugify('A b'))\n",
    "textutil.py": TEXTUTIL,
    "helpers/big_a.py": FILLER,
    "helpers/big_b.py": FILLER,
    "helpers/big_c.py": FILLER,
}
FIXED = '''@staticmethod
def slugify(text):
    """A slug of `text`: its words joined by the separator."""
    return normalize_spaces(text).lower().replace(" ", SEPARATOR)'''


UPPER = FIXED.replace(".lower()", ".upper()")  # an answer that fails LOWER_SLUGS
LOWER_SLUGS = "python3 -c \"from textutil import slugify; assert slugify('A b') == 'a-b'\""


def focus_of(text: str, task: str):
    return focused_definition(ProjectFile(path="textutil.py", text=text), task)


def test_the_function_whose_name_meets_the_tasks_words_is_chosen_with_its_files_outline():
    focus = focus_of(TEXTUTIL, "Slugs keep capital letters; they should be lower case")
    assert focus is not None and focus.name == "slugify"  # "Slugs" meets slugify
    assert focus.source.startswith("@staticmethod\ndef slugify(text):")  # decorators and all
    assert focus.source.endswith('.replace(" ", SEPARATOR)')
    assert focus.lines == (12, 15)  # decorator to last line, 1-based
    assert (
        focus.outline.splitlines()
        == [
            "import re",
            'SEPARATOR = "-"',
            "def normalize_spaces(text): ...",
            "class Slugger:",
            '    """Slugs that stay unique."""',
        ]
    )  # the rest of the file as stubs, a definition's docstring with it: no bodies, no module docstring


def test_the_outline_gives_the_first_paragraph_of_a_docstring_on_one_line():
    """Shown slugify with `def transliterate(text): ...` beside it, the 1.5B never called transliterate (bench/
    small_model --set medium: slug_accents): what a helper does is in its docstring's first paragraph."""
    helper = (
        'def transliterate(text):\n    """`text` in ASCII: accents dropped\n    (`Crème` -> `Creme`).\n\n'
        '    More that is left out.\n    """\n    return text\n\n\n'
        f'def long(text):\n    """{"word " * 60}"""\n    return text\n\n\n'
        "def slugify(text):\n    return transliterate(text)\n"
    )
    focus = focus_of(helper, "slugs break at accented letters")
    assert focus is not None and focus.name == "slugify"
    stubs = focus.outline.splitlines()
    assert stubs[:2] == [
        "def transliterate(text):",
        '    """`text` in ASCII: accents dropped (`Crème` -> `Creme`)."""',
    ]
    assert stubs[2] == "def long(text):" and stubs[3].endswith(' word …"""') and len(stubs[3]) < 220


def test_the_outline_keeps_a_long_signature_and_cuts_a_long_statement():
    source = (
        "TABLE = {\n    'a': 1,\n}\n\n\ndef wrap(\n    text, width\n) -> list:\n    return [text]\n\n\n"
        "def one(): return 1\n\n\ndef wrap_words(words):\n    return words\n"
    )
    focus = focus_of(source, "wrap cuts off the text")
    assert focus is not None and focus.name == "wrap"
    assert focus.outline.splitlines() == [
        "TABLE = { ...",
        "def one(): return 1 ...",
        "def wrap_words(words): ...",
    ]
    other = focus_of(source, "wrap_words should keep its words")
    assert other is not None and other.name == "wrap_words"
    assert other.outline.splitlines()[1:3] == ["def wrap(", "    text, width"]
    assert other.outline.splitlines()[3] == ") -> list: ..."


def test_a_word_in_the_name_outweighs_words_in_a_body_and_the_body_decides_between_names():
    two = (
        "def parse_header(text):\n    return text\n\n\ndef parse_posting(text):\n    comment = ''\n"
    )
    focus = focus_of(two, "a posting with a comment fails to parse")
    assert (
        focus is not None and focus.name == "parse_posting"
    )  # both "parse"; posting's body has comment
    body_only = "def helper(text):\n    posting = comment = text\n"
    assert focus_of(body_only, "a posting with a comment fails") is None  # no name meets the words


def test_no_focus_without_a_python_file_that_parses_or_a_name_the_task_meets():
    assert focus_of(TEXTUTIL, "the output should be shorter") is None
    assert focus_of("def slugify(:\n", "slugify is broken") is None
    notes = ProjectFile(path="notes.md", text="def slugify(text):\n    return text\n")
    assert focused_definition(notes, "slugify is broken") is None
    nested = "class Slugger:\n    def slugify(self, text):\n        return text\n"
    assert focus_of(nested, "slugify is broken") is None  # top-level functions only


async def test_a_small_model_is_shown_the_function_and_the_one_it_sends_back_goes_into_its_file(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    server = scripted_server([Reply(text=f"```python\n{FIXED}\n```")])
    settings = served_settings(server, repo, context_window=16_384, loop={"verify": "never"})
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    (given,) = keel_messages(events, "context")
    assert given.startswith("From textutil.py, whose other lines begin:")
    assert "the function `slugify` as it is now:" in given and "self.taken" not in given
    assert "helper_1" not in given  # nothing of the other files
    first = server.requests[0]
    assert (
        not first.body.get("tools") and first.last_text("user") == given
    )  # one call, as edit first
    assert events[-1].status == "completed"
    assert (repo / "textutil.py").read_text() == TEXTUTIL.replace(
        '.replace(" ", SEPARATOR)', '.lower().replace(" ", SEPARATOR)'
    )  # the function replaced in place, the rest of the file as it was


async def test_the_function_sent_back_unchanged_is_a_copy_asked_for_again_not_a_write(
    scripted_server, tmp_path, monkeypatch
):
    """Sent back as shown, the function changes nothing: that is no answer, as a whole file sent back
    unchanged is none; it is asked for again, sampled anew."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    shown = FIXED.replace(".lower()", "")
    server = scripted_server(
        [Reply(text=f"```python\n{shown}\n```"), Reply(text=f"```python\n{FIXED}\n```")]
    )
    settings = served_settings(server, repo, context_window=16_384, loop={"verify": "never"})
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    assert "your reply gave textutil.py back exactly as given" in server.requests[1].last_text(
        "user"
    )
    assert sampling_asked(server) == [(0.2, None), (0.7, 1)]
    assert events[-1].status == "completed" and ".lower()" in (repo / "textutil.py").read_text()


async def test_failed_checks_come_back_with_the_function_as_it_is_now_not_the_whole_file(
    scripted_server, tmp_path, monkeypatch
):
    """The model was shown one function: the checks its answer failed come back with that function as the
    answer left it, and the function sent back then goes into the file as the first one did."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    server = scripted_server(
        [Reply(text=f"```python\n{UPPER}\n```"), Reply(text=f"```python\n{FIXED}\n```")]
    )
    settings = served_settings(server, repo, context_window=16_384, test_command=LOWER_SLUGS)
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    again = server.requests[1].last_text("user")
    assert again.startswith("keel checked the files you changed") and "AssertionError" in again
    assert "the function `slugify` as it is now:" in again and ".upper()" in again
    assert "FILE:" not in again and "helper_1" not in again and "self.taken" not in again
    assert "Fix these problems and make the change the task asks for in `slugify`." in again
    assert not server.requests[1].body.get("tools")  # asked as the first call was
    assert events[-1].status == "completed" and ".lower()" in (repo / "textutil.py").read_text()


async def test_the_failing_answer_sent_back_after_the_checks_is_checked_again_not_corrected(
    scripted_server, tmp_path, monkeypatch
):
    """The function that failed, given back unchanged, is the model's answer: it is checked again and the
    failures come back, the last round said so. Corrected as a copy and asked for again instead (a86fe8d), the
    1.5B sent its failing answer back as often as it was asked (wrap_long_words, terse_add) and no attempt
    passed that does not pass this way (bench/small_model, both sets): this way takes fewer calls and the task
    ends saying which checks still fail, not in error."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    server = scripted_server(
        [Reply(text=f"```python\n{body}\n```") for body in (UPPER, UPPER, FIXED)]
    )
    settings = served_settings(server, repo, context_window=16_384, test_command=LOWER_SLUGS)
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    again = server.requests[2].last_text("user")
    assert again.startswith("keel checked the files you changed") and "AssertionError" in again
    assert "This is the last check before the task ends." in again
    rounds = [e for e in events if e.type == "verification.finished"]
    assert [r.passed for r in rounds] == [False, False, True]
    assert events[-1].status == "completed" and ".lower()" in (repo / "textutil.py").read_text()


async def test_failed_checks_naming_the_file_outside_the_function_bring_the_file_back_whole(
    scripted_server, tmp_path, monkeypatch
):
    """An answer that broke its file outside the function it was shown (the 1.5B asked for `currency` rewrote
    class Currency) cannot mend that from the function alone: the file comes back whole with the failures."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    broken = f"{FIXED}\n\n\ndef normalize_spaces(text):\n    return re.sub(SPACES, ' ', text)\n"
    mended = TEXTUTIL.replace('.replace(" ", SEPARATOR)', '.lower().replace(" ", SEPARATOR)')
    server = scripted_server(
        [
            Reply(text=f"```python\n{broken}\n```"),
            Reply(text=f"FILE: textutil.py\n```python\n{mended}```"),
        ]
    )
    settings = served_settings(server, repo, context_window=16_384)
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    again = server.requests[1].last_text("user")
    assert "textutil.py:9:" in again and "F821" in again  # SPACES, in normalize_spaces
    assert "FILE: textutil.py" in again and "the function `slugify`" not in again
    assert events[-1].status == "completed" and (repo / "textutil.py").read_text() == mended


async def test_a_failure_passing_through_a_caller_outside_the_function_brings_the_function_back(
    scripted_server, tmp_path, monkeypatch
):
    """pytest names each frame a failure passes through (`textutil.py:26: in heading`, the caller); that is
    not the answer breaking its file elsewhere: the embedded 1.5B, given journal.py whole because parse_posting's
    IndexError passed through read_text, answered with the whole file until the length limit ended the task."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    caller = "\n\ndef heading(text):\n    return slugify(text)\n"
    test = (
        "from textutil import heading\n\n\ndef test_lower():\n    assert heading('A b') == 'a-b'\n"
    )
    repo = git_repo(
        tmp_path / "repo", {**PROJECT, "textutil.py": TEXTUTIL + caller, "test_slug.py": test}
    )
    raises = FIXED.replace('.replace(" ", SEPARATOR)', ".split()[5]")
    server = scripted_server([Reply(text=f"```python\n{body}\n```") for body in (raises, FIXED)])
    pytest = f"{sys.executable} -m pytest -q -x -p no:cacheprovider test_slug.py"
    settings = served_settings(server, repo, context_window=16_384, test_command=pytest)
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    again = server.requests[1].last_text("user")
    assert "textutil.py:26: in heading" in again and "IndexError" in again
    assert "the function `slugify` as it is now:" in again and "FILE: textutil.py" not in again
    assert events[-1].status == "completed" and ".lower()" in (repo / "textutil.py").read_text()


async def test_the_function_shown_again_is_the_one_shown_first_not_one_the_answer_added(
    scripted_server, tmp_path, monkeypatch
):
    """The 1.5B asked for `currency` added round_to_decimal beside it, whose name meets more of the task's
    words: the failures still come back with the function it was shown."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    helper = "def slugify_lower(text):\n    return text.upper()\n\n\n"
    calls_helper = FIXED.replace(
        "normalize_spaces(text).lower()", "slugify_lower(normalize_spaces(text))"
    )
    server = scripted_server(
        [
            Reply(text=f"```python\n{helper}{calls_helper}\n```"),
            Reply(text=f"```python\n{FIXED}\n```"),
        ]
    )
    settings = served_settings(server, repo, context_window=16_384, test_command=LOWER_SLUGS)
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    again = server.requests[1].last_text("user")
    assert "AssertionError" in again and "the function `slugify` as it is now:" in again
    assert "slugify_lower(normalize_spaces(text))" in again  # as the answer left it
    assert "def slugify_lower(text): ..." in again  # the added helper, a stub of the outline
    assert events[-1].status == "completed" and ".lower()" in (repo / "textutil.py").read_text()


async def test_the_outlines_stubs_sent_back_replace_nothing(scripted_server, tmp_path, monkeypatch):
    """The 1.5B answered with the outline's stubs (`def fill(...) -> str: ...`) and they replaced wrap.py's
    real fill, indent, dedent and shorten, the task `completed`: a stub (`...` or its docstring alone, as the
    outline shows a definition) is the outline echoed, a copy."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    repo = git_repo(tmp_path / "repo", PROJECT)
    stubs = "import re\nSEPARATOR = '-'\ndef normalize_spaces(text): ...\n"
    stubs += 'class Slugger:\n    """Slugs that stay unique."""\n'  # its __init__ stays
    server = scripted_server(
        [Reply(text=f"```python\n{stubs}```"), Reply(text=f"```python\n{FIXED}\n```")]
    )
    settings = served_settings(server, repo, context_window=16_384, loop={"verify": "never"})
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    assert "exactly as given" in server.requests[1].last_text("user")
    assert events[-1].status == "completed"
    assert (repo / "textutil.py").read_text() == TEXTUTIL.replace(
        '.replace(" ", SEPARATOR)', '.lower().replace(" ", SEPARATOR)'
    )  # normalize_spaces as it was


async def test_the_outline_sent_back_is_an_echo_not_an_answer(
    scripted_server, tmp_path, monkeypatch
):
    """The 1.5B answered column_alignment with tables.py's outline (`BORDERS = { ...` among its stubs), twice,
    and the task ended `completed` with nothing changed (bench/small_model --set medium: table_numbers): keel's
    outline sent back is keel's own text, corrected as an echo, never the answer."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    marked = TEXTUTIL.replace('SEPARATOR = "-"\n', 'SEPARATOR = "-"\nMARKS = {\n    "a": 1,\n}\n')
    repo = git_repo(tmp_path / "repo", {**PROJECT, "textutil.py": marked})
    outline = 'import re\nSEPARATOR = "-"\nMARKS = { ...\ndef normalize_spaces(text): ...\n'
    echoes = [Reply(text=f"```python\n{outline}```")] * 2
    server = scripted_server([*echoes, Reply(text=f"```python\n{FIXED}\n```")])
    settings = served_settings(server, repo, context_window=16_384, loop={"verify": "never"})
    events, _ = await run_task(settings, "slugify should make lower case slugs")
    for request in server.requests[1:]:
        assert "only repeated keel's message" in request.last_text("user")
    assert len(server.requests) == 3 and events[-1].status == "completed"
    assert ".lower()" in (repo / "textutil.py").read_text()
