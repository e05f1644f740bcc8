"""Running the commands a person types: from the repository's root, with the virtualenv's
`python` and none of the test settings in the environment."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = str(Path(sys.executable))


def clean_environment(**extra: str) -> dict[str, str]:
    """A shell's environment with nothing of Berth's or of the test settings in it, and the
    virtualenv's `python` first on PATH (as in a shell that activated it)."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("BERTH_", "DJANGO_", "OIDC_", "DEVIDP_"))
        # The test process's metrics dir too: `make run` empties the one it is given.
        and key
        not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "PYTHONPATH", "PROMETHEUS_MULTIPROC_DIR")
    }
    kept["PATH"] = f"{Path(PYTHON).parent}{os.pathsep}{kept.get('PATH', '')}"
    return {**kept, **extra}
