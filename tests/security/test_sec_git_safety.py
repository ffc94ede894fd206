"""The pure parts of keel's hardened git: which driver settings get emptied, where the diff flags go, and
what the environment keeps."""

from __future__ import annotations

from keel.tools.exec.git_safety import driver_overrides, git_environment, hardened_args


def test_only_program_keys_of_the_repository_s_own_config_are_emptied():
    listed = [
        "local\tfilter.evil.clean",
        "local\tfilter.evil.process",
        "worktree\tdiff.a.b.textconv",  # a subsection may hold dots
        "local\tmerge.m.driver",
        "local\ttrailer.t.command",
        "global\tfilter.lfs.process",  # the user's own: trusted
        "local\tfilter.evil.required",  # not a program
        "local\tcore.editor",  # overridden for every repository anyway
        "local\tfilter.evil.clean",
    ]
    assert driver_overrides(listed) == [
        "filter.evil.clean=",
        "filter.evil.process=",
        "diff.a.b.textconv=",
        "merge.m.driver=",
        "trailer.t.command=",
    ]


def test_diff_commands_get_no_external_programs_wherever_the_subcommand_is():
    args = hardened_args(["-c", "a.b=c", "-C", "/x", "diff", "--binary", "HEAD"])
    at = args.index("diff")
    assert args[at - 4 : at] == ["-c", "a.b=c", "-C", "/x"]
    assert args[at + 1 : at + 4] == ["--no-ext-diff", "--no-textconv", "--binary"]
    assert args[0] == "--no-pager" and "core.fsmonitor=false" in args
    assert "--no-textconv" not in hardened_args(["ls-files", "diff"])


def test_the_environment_keeps_what_git_needs_and_no_secrets():
    source = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LC_ALL": "C",
        "OPENAI_API_KEY": "sk",
        "GIT_DIR": "/elsewhere",
        "GIT_EXTERNAL_DIFF": "evil",
    }
    env = git_environment(source, {"GIT_INDEX_FILE": "/i", "OTHER": "x"})
    assert env["PATH"] == "/bin" and env["HOME"] == "/home/u" and env["LC_ALL"] == "C"
    assert env["GIT_INDEX_FILE"] == "/i" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert not {"OPENAI_API_KEY", "GIT_DIR", "GIT_EXTERNAL_DIFF", "OTHER"} & set(env)
