"""`make test-fast` leaves out the tests that start programs other than git, and fails one
that starts such a program without saying so (tests/support/programs.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import programs


@pytest.fixture
def running_unmarked():
    programs.RUNNING["test"] = "tests/example.py::test_unmarked"
    yield "tests/example.py::test_unmarked"
    programs.RUNNING["test"] = None
    programs.refusal_of("tests/example.py::test_unmarked")


def test_an_unmarked_test_starting_a_program_is_refused_naming_the_marker(running_unmarked):
    with pytest.raises(RuntimeError, match="started kubectl but is not marked processes"):
        programs.refuse_unmarked("subprocess.Popen", (None, ["kubectl", "get", "ns"], None, None))
    # Where the code under test swallowed the refusal, the test still fails in teardown.
    assert "add @pytest.mark.processes" in programs.refusal_of(running_unmarked)
    assert programs.refusal_of(running_unmarked) is None  # said once


def test_git_runs_in_the_fast_loop_but_a_git_daemon_is_a_server(running_unmarked):
    programs.refuse_unmarked("subprocess.Popen", (None, ["/usr/bin/git", "push"], None, None))
    assert programs.refusal_of(running_unmarked) is None
    with pytest.raises(RuntimeError, match="started git but is not marked processes"):
        programs.refuse_unmarked(
            "subprocess.Popen", (None, ["git", "daemon", "--export-all"], None, None)
        )
    programs.refusal_of(running_unmarked)


def test_a_library_lookup_through_ctypes_is_not_the_tests_program(running_unmarked):
    import ctypes.util

    ctypes.util.find_library("c")  # ldconfig or gcc through subprocess, under the hook
    assert programs.refusal_of(running_unmarked) is None


def test_outside_a_test_or_in_a_marked_one_programs_run(monkeypatch):
    monkeypatch.setitem(programs.RUNNING, "test", None)  # what a marked test runs with
    programs.refuse_unmarked("subprocess.Popen", ("git", ["git"], None, None))
    assert programs.refusal_of("anything") is None


@pytest.mark.processes
def test_a_fast_run_really_refuses_a_program():
    """The hook as make test-fast installs it, in a run of its own."""
    started = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, subprocess; from tests.support import programs; "
            "sys.addaudithook(programs.refuse_unmarked); programs.RUNNING['test'] = 't'; "
            "subprocess.run(['true'])",
        ],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=False,
    )
    assert started.returncode != 0
    assert "t started true but is not marked processes" in started.stderr
