"""`make test-fast` runs no program but git: a test that starts another (a server or worker
process, `git daemon` among them, kubectl, a browser, Python) says so with the `processes`
marker, and a run that leaves those out fails one that does not (tests/conftest.py installs
`refuse_unmarked` as an audit hook for such a run). git against local bare repositories,
and the stand-ins' servers running as threads of the test process, are the fast loop's."""

from __future__ import annotations

import os
import traceback

# The test running now, unless it is marked `processes` (set by tests/conftest.py).
RUNNING: dict[str, str | None] = {"test": None}
_STARTED: dict[str, list[str]] = {}
_UNMARKED = "started {program} but is not marked processes: add @pytest.mark.processes"
_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn"})


def refuse_unmarked(event: str, args: tuple) -> None:
    """An audit hook: the running test may not start a program; the start raises."""
    test = RUNNING["test"]
    if test is None or event not in _EVENTS:
        return
    if any(frame.filename.endswith("ctypes/util.py") for frame in traceback.extract_stack()):
        return  # a shared library looked up (ctypes runs ldconfig), not the test's program
    command = args[1] if event == "subprocess.Popen" else args[0]
    words = [str(word) for word in command] if isinstance(command, list | tuple) else []
    if words and os.path.basename(words[0]) == "git" and "daemon" not in words[1:2]:
        return  # git itself: a local repository, or a stand-in's server answering in-process
    program = os.path.basename(words[0] if words else str(args[0] or command))
    _STARTED.setdefault(test, []).append(program)
    raise RuntimeError(f"{test} {_UNMARKED.format(program=program)}")


def refusal_of(test: str) -> str | None:
    """What the test was refused, once (for a test whose code caught the refusal)."""
    started = _STARTED.pop(test, None)
    return f"{test} {_UNMARKED.format(program=', '.join(started))}" if started else None
