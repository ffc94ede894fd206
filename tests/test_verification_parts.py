"""The pure parts of verification: which files a diff names, which tests import a module, syntax errors by
compile and tree-sitter, the answer's line, and the fold's count of rounds (which a resume keeps)."""

from __future__ import annotations

from pathlib import Path

from keel.agent.core.fold import apply, fold
from keel.agent.core.protocol import (
    AssistantMessage,
    ToolCall,
    ToolFinished,
    UserMessage,
    VerificationCheck,
    VerificationFinished,
    parse_event,
)
from keel.agent.core.state import SessionState
from keel.agent.core.verification.changes import changed_paths
from keel.agent.core.verification.gate import answer_with
from keel.agent.core.verification.related_tests import importing_tests, imports_any, module_names
from keel.agent.core.verification.syntax import syntax_errors
from keel.tools.editing.edit_support import unified_diff


def test_changed_paths_reads_every_file_of_a_diff_and_no_hunk_line():
    diff = unified_diff("a\n", "b\n", "src/x.py", "src/x.py") + unified_diff(
        "", "--- a/fake\n", None, "new.py"
    )
    assert changed_paths(diff) == {"src/x.py", "new.py"}
    assert changed_paths(unified_diff("gone\n", "", "old.py", None)) == {"old.py"}
    assert changed_paths(None) == frozenset() and changed_paths("") == frozenset()


def test_module_names_from_every_enclosing_folder():
    assert module_names("src/pkg/mod.py") == {"src.pkg.mod", "pkg.mod", "mod"}
    assert module_names("pkg/__init__.py") == {"pkg"}


def test_imports_any_knows_the_forms_of_an_import():
    names = module_names("pkg/mod.py")
    assert imports_any("import pkg.mod\n", names)
    assert imports_any("from pkg.mod import thing\n", names)
    assert imports_any("from pkg import mod, other\n", names)
    assert imports_any("import os, mod\n", names)
    assert not imports_any("import model\nfrom pkg import modest\n", names)
    assert not imports_any("# import mod\nx = 'from mod import y'\n", names)


def test_tests_for_takes_importing_tests_and_changed_tests(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_a.py").write_text("from calc import add\n")
    (tmp_path / "tests/test_b.py").write_text("import other\n")
    (tmp_path / "tests/test_c.py").write_text("import other\n")
    candidates = ["tests/test_a.py", "tests/test_b.py", "tests/test_c.py"]
    assert importing_tests(tmp_path, ["calc.py"], candidates) == ["tests/test_a.py"]
    assert importing_tests(tmp_path, ["tests/test_c.py", "README.md"], candidates) == [
        "tests/test_c.py"
    ]
    assert importing_tests(tmp_path, ["notes.txt"], candidates) == []


def test_syntax_errors_by_compile_for_python_and_tree_sitter_for_the_rest(tmp_path: Path):
    files = {
        "bad.py": "def f(:\n",
        "good.py": "x = 1\n",
        "bad.js": "function f( {\n",
        "good.js": "const x = 1;\n",
        "bad.json": "{",
        "notes.txt": "anything",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    found = syntax_errors([tmp_path / name for name in files], tmp_path)
    assert tmp_path / "notes.txt" not in found  # nothing can check it
    assert [name for name in files if found.get(tmp_path / name)] == [
        "bad.py",
        "bad.js",
        "bad.json",
    ]
    assert (
        found[tmp_path / "bad.py"][0].startswith("bad.py:1:")
        and "SyntaxError" in found[tmp_path / "bad.py"][0]
    )


def test_the_answer_says_what_was_verified_and_what_was_not():
    passed = VerificationCheck(name="syntax", status="passed", summary="calc.py")
    skipped = VerificationCheck(name="tests", status="skipped", summary="no test command")
    failed = VerificationCheck(
        name="lint", status="failed", summary="1 problem", output="x.py:1:1: F821"
    )
    assert answer_with("Done.", [passed, skipped], 1) == (
        "Done.\n\nVerified by keel: syntax (calc.py). Not checked: tests (no test command)."
    )
    assert answer_with("", [skipped], 1) == "Not verified by keel: tests (no test command)."
    text = answer_with("Done.", [passed, failed], 3)
    assert "keel's checks still fail after 3 rounds:\n- lint: 1 problem\n  x.py:1:1: F821" in text


def test_the_fold_counts_rounds_and_changed_files_and_a_new_task_resets_them():
    call = ToolCall(id="c1", name="write_file", arguments="{}")
    diff = unified_diff("a\n", "b\n", "calc.py", "calc.py")
    check = VerificationCheck(name="syntax", status="failed", summary="1 syntax error")
    events = [
        UserMessage(text="fix add"),
        AssistantMessage(text="", tool_calls=[call]),
        ToolFinished(call_id="c1", name="write_file", output="ok", diff=diff),
        VerificationFinished(files=["calc.py"], checks=[check], passed=False, final=False),
    ]
    logged = [parse_event(event.model_dump_json()) for event in events]  # as a resume reads them
    state = fold(logged, SessionState(session_id="s"))
    assert (state.strategy.task_changed, state.strategy.verifications) == ({"calc.py"}, 1)
    state = apply(state, UserMessage(text="next task"))
    assert (state.strategy.task_changed, state.strategy.verifications) == (frozenset(), 0)


def test_the_tui_shows_each_check_as_a_notice():
    from keel.tui.transcript import NoticeEntry, SessionStats, Transcript

    transcript = Transcript(SessionStats(model="openai/any"))
    failed = VerificationCheck(name="syntax", status="failed", summary="1 syntax error")
    transcript.apply(VerificationFinished(files=["a.py"], checks=[failed], passed=False))
    notice = transcript.entries[-1]
    assert isinstance(notice, NoticeEntry) and notice.level == "warning"
    assert notice.text == "checks of the changed files failed: syntax failed"
