"""Request bodies: JSON, YAML and protobuf objects, and the patch formats."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import yaml

from . import protobuf
from .errors import ApiError
from .objects import APPLY_PATCH, PATCH_TYPES

# libyaml's loader when PyYAML was built with it: the pure-Python one is far slower.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

BODY_TYPES = ("application/json", "application/yaml", protobuf.PROTOBUF)


def media_type(content_type: str | None, default: str = "application/json") -> str:
    """The media type of a Content-Type header, without its parameters."""
    return (content_type or default).split(";")[0].strip().lower()


def parse(
    body: bytes,
    content_type: str | None,
    *,
    allow_empty: bool = False,
    accepted: tuple[str, ...] = BODY_TYPES,
) -> Any:
    """A request body as an object; 400 for what does not decode, 415 for other types."""
    if not body.strip():
        if allow_empty:
            return None
        raise ApiError(400, "the request body is empty")
    kind = media_type(content_type)
    if kind not in accepted:
        raise ApiError(
            415,
            f"the body of the request was in an unknown format - accepted "
            f"media types include: {', '.join(accepted)}",
        )
    if kind == protobuf.PROTOBUF:
        return protobuf.decode(body)
    try:
        if "yaml" in kind:
            return yaml.safe_load(body)
        return json.loads(body)
    except (ValueError, yaml.YAMLError) as error:
        raise ApiError(400, f"the request body could not be decoded: {error}") from error


def patch_type(content_type: str | None) -> str:
    """The patch format a PATCH names in its Content-Type (415 for any other)."""
    kind = (content_type or "").split(";")[0].strip()
    if kind not in PATCH_TYPES:
        raise ApiError(
            415,
            f"the body of the request was in an unknown format - accepted "
            f"media types include: {', '.join(PATCH_TYPES)}",
        )
    return kind


def parse_patch(body: bytes, kind: str) -> Any:
    if kind == APPLY_PATCH:
        # Clients send JSON, which is YAML too; the real server reads both the same way
        # (sigs.k8s.io/yaml), and the JSON parser is some fifty times cheaper here.
        with contextlib.suppress(ValueError):
            return json.loads(body)
        try:
            return yaml.load(body, Loader=SafeLoader)  # noqa: S506 - a safe loader
        except yaml.YAMLError as error:
            raise ApiError(400, f"error decoding YAML: {error}") from error
    try:
        return json.loads(body)
    except ValueError as error:
        raise ApiError(400, f"the patch could not be decoded: {error}") from error
