"""`make test-fast` runs no programs (git, kubectl, a worker): a test that starts one says so
with the `processes` marker, and a run that leaves those out fails one that does not
(tests/conftest.py installs `refuse_unmarked` as an audit hook for such a run)."""

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
    program = os.path.basename(str(args[0] or args[1]))
    _STARTED.setdefault(test, []).append(program)
    raise RuntimeError(f"{test} {_UNMARKED.format(program=program)}")


def refusal_of(test: str) -> str | None:
    """What the test was refused, once (for a test whose code caught the refusal)."""
    started = _STARTED.pop(test, None)
    return f"{test} {_UNMARKED.format(program=', '.join(started))}" if started else None
