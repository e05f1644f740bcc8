"""GitHub's own OpenAPI description of its REST API, the one the stand-in validates against.

It is ``generated/api.github.com.json`` of the npm package ``@octokit/openapi`` (the
description GitHub publishes, packaged by the Octokit project), kept outside git:
``make github-openapi`` fetches it into ``.cache/``. ``$FORGESANDBOX_GITHUB_OPENAPI`` names
another copy. Loaded once per process: parsing its 13 MB takes about a quarter of a second;
openapi-core then resolves the operations it is asked about lazily (the first request pays
about a tenth of a second, later ones a few milliseconds). The document itself is not checked
against the OpenAPI meta-schema at load (openapi-spec-validator takes some 14 seconds on it,
and it is GitHub's published description: it passes)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openapi_core import OpenAPI

PACKAGE = "@octokit/openapi@23.0.2"
SPEC_VARIABLE = "FORGESANDBOX_GITHUB_OPENAPI"
FETCH_COMMAND = "make github-openapi"
# Beside this package, in the checkout's .cache/ (ignored by git).
DEFAULT_PATH = (
    Path(__file__).resolve().parent.parent
    / ".cache"
    / "octokit-openapi-23.0.2"
    / "api.github.com.json"
)
# The description's only server; requests are matched against it whatever prefix they came on.
SERVER = "https://api.github.com"


class SpecMissing(RuntimeError):
    """GitHub's description is not where the stand-in looks."""


def spec_path() -> Path:
    configured = os.environ.get(SPEC_VARIABLE)
    return Path(configured) if configured else DEFAULT_PATH


def missing_reason() -> str | None:
    """Why the description cannot be loaded (and how to get it), or None when it is there."""
    path = spec_path()
    if path.is_file():
        return None
    return (
        f"GitHub's OpenAPI description ({PACKAGE}) is not at {path}: run `{FETCH_COMMAND}` "
        f"(needs npm), or set ${SPEC_VARIABLE} to a copy of its generated/api.github.com.json"
    )


@functools.cache
def load_document(path: Path) -> dict:
    with path.open("rb") as handle:
        return json.load(handle)


@functools.cache
def load_openapi(path: Path | None = None) -> OpenAPI:
    """openapi-core's view of the description, once per process and path."""
    from openapi_core import Config, OpenAPI

    path = path or spec_path()
    if not path.is_file():
        raise SpecMissing(missing_reason())
    # spec_validator_cls=None: see the module docstring (14 s, and nothing to find).
    return OpenAPI.from_dict(load_document(path), config=Config(spec_validator_cls=None))
