"""Files `berth` writes that hold a credential (its config, a kubeconfig with a deploy
token, cached sign-in tokens): readable by their owner only, whatever was there before."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_private(path: Path, data: bytes) -> None:
    """`data` into `path`, mode 0600: written to a new file beside it (created 0600,
    exclusively, so no link is followed) and renamed over it at once. A symlink at `path` is
    replaced, never written through; an existing file's looser mode is not kept; a reader
    never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
