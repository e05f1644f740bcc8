"""Stopping a program a test started in a session of its own (start_new_session=True), with
whatever it started in turn."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_group(process: subprocess.Popen, timeout: float) -> None:
    """SIGTERM to the process group, SIGKILL if it is not gone within `timeout` seconds;
    nothing if the process already ended."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
