"""Verification's imports check: a name renamed in one module and still imported by its old name in another is
a failure the model is told about (the 1.5B renamed area_of_rect in geometry.py and left report.py importing it)."""

from __future__ import annotations

from keel_cli import git_repo
from small_model_support import call, keel_messages, run_task, served_settings

from keel.agent.core.verification.imports import (
    missing_imports,
    module_name,
    nearest_name,
    python_files,
)
from keel.agent.harness.testing.scripted_server import Reply

PROJECT = {
    "geometry.py": "def area_of_rect(width, height):\n    return width * height\n",
    "report.py": "from geometry import area_of_rect\n\nprint(area_of_rect(2, 3))\n",
    "pkg/__init__.py": "from pkg.shapes import Square as Square\n",
    "pkg/shapes.py": "class Square:\n    side = 1\n",
}
RENAMED = {
    "path": "geometry.py",
    "content": "def rect_area(width, height):\n    return width * height\n",
}


def test_a_name_no_longer_defined_is_named_with_its_importer(tmp_path):
    root = git_repo(tmp_path / "repo", PROJECT)
    files = python_files(root)
    assert files == ["geometry.py", "report.py", "pkg/__init__.py", "pkg/shapes.py"]
    assert missing_imports(root, ["geometry.py"], files) == []
    (root / "geometry.py").write_text(RENAMED["content"])
    assert missing_imports(root, ["geometry.py"], files) == [
        "report.py:1 imports area_of_rect from geometry, which does not define it (it defines rect_area)"
    ]
    (root / "pkg" / "shapes.py").write_text("class Circle:\n    radius = 1\n")
    assert missing_imports(root, ["pkg/shapes.py"], files) == [
        "pkg/__init__.py:1 imports Square from pkg.shapes, which does not define it"
    ]
    assert (module_name("pkg/__init__.py"), module_name("a/b.py"), module_name("x.txt")) == (
        "pkg",
        "a.b",
        None,
    )


def test_the_name_it_most_likely_became_is_suggested():
    defined = {"rect_area", "circle_area", "math", "slugify"}
    assert nearest_name("area_of_rect", defined) == "rect_area"  # the same words
    assert nearest_name("slugfy", defined) == "slugify"  # spelled alike
    assert nearest_name("perimeter", defined) is None
    assert nearest_name("area", set()) is None


def test_a_module_taking_names_wholesale_is_not_judged(tmp_path):
    root = git_repo(tmp_path / "repo", {**PROJECT, "geometry.py": "from shapes_impl import *\n"})
    assert missing_imports(root, ["geometry.py"], python_files(root)) == []


async def test_a_rename_left_half_done_goes_back_to_the_model(
    scripted_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    root = git_repo(tmp_path / "repo", PROJECT)
    fixed = {
        "path": "report.py",
        "content": PROJECT["report.py"].replace("area_of_rect", "rect_area"),
    }
    server = scripted_server(
        [call("write_file", **RENAMED), Reply(text="Renamed."), call("write_file", **fixed)]
        + [Reply(text="Renamed everywhere.")]
    )
    events, _ = await run_task(served_settings(server, root), "rename area_of_rect to rect_area")
    (feedback,) = keel_messages(events, "verification")
    assert "report.py:1 imports area_of_rect from geometry" in feedback
    assert "Verified by keel" in events[-1].final_message


async def test_a_small_models_files_that_fail_the_checks_come_back_whole_with_the_failures(
    scripted_server, tmp_path, monkeypatch
):
    """The 0.5B answered the project's files with geometry.py renamed and report.py unchanged; told to mend the
    import with a tool call, it pasted the error into edit_file's old_string. Its answer's files failing keel's
    checks come back whole with the failures, and the next call, offering no tools, asks for files again. Each
    edit-first call is one call: the files with the task as keel last gave them, and nothing before them (given
    the task before the files, or its own last answer before the failures, the 0.5B sent that answer back)."""
    monkeypatch.setenv("KEEL_HOME", str(tmp_path / "home"))
    root = git_repo(tmp_path / "repo", PROJECT)
    report = PROJECT["report.py"].replace("area_of_rect", "rect_area")
    server = scripted_server(
        [
            Reply(text=f"FILE: geometry.py\n```python\n{RENAMED['content']}```"),
            Reply(text=f"FILE: report.py\n```python\n{report}```"),
        ]
    )
    events, _ = await run_task(served_settings(server, root), "rename area_of_rect to rect_area")
    given = server.requests[1].last_text("user")
    assert "report.py:1 imports area_of_rect from geometry" in given
    assert f"FILE: report.py\n```python\n{PROJECT['report.py']}```" in given
    assert f"FILE: geometry.py\n```python\n{RENAMED['content']}```" in given
    assert (
        not server.requests[1].tool_names
        and "careful programmer" in server.requests[1].messages[0]["content"]
    )
    for request in server.requests:
        system, files = request.messages
        assert system["role"] == "system" and files["role"] == "user"
        assert files["content"].startswith(("The project's files", "keel checked the files"))
    assert (root / "report.py").read_text() == report
    assert events[-1].status == "completed" and len(server.requests) == 2
    assert "Verified by keel" in events[-1].final_message
