"""Validate rendered objects: the entry points (see the package's docstring for where the
schemas come from and what they cannot check).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from provisioning.schema.builtin import builtin_group_versions, builtin_kinds, check_model
from provisioning.schema.common import (
    API_VERSION,
    SchemaError,
    check_metadata_rules,
    json_type,
    object_key,
)
from provisioning.schema.crds import (
    crd_definition,
    crd_dir_candidate,
    jsonschema_errors,
    require_crd_dir,
)
from provisioning.schema.served import ServedKind, ServedSchemas

# --------------------------------------------------------------------------------------------
# Public API


def crd_directory(crd_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The CRD directory that would be used: ``crd_dir``, else ``$BERTH_CRD_DIR``. ``None``
    when neither names one or that directory does not exist."""
    path, _ = crd_dir_candidate(crd_dir)
    return path.resolve() if path is not None and path.is_dir() else None


def validate_object(
    obj: Mapping[str, Any],
    *,
    crd_dir: str | os.PathLike[str] | None = None,
    served: ServedSchemas | None = None,
) -> list[SchemaError]:
    """Validate one rendered object; return its problems (empty list when valid).

    A custom resource is checked against the schema ``served`` (the target cluster) has for
    its group-version; where there is no cluster to ask, or it serves no such group-version,
    against the CRD directory. Raises :class:`SchemaUnavailable` when it comes to the CRD
    directory and none is configured or it does not exist.
    """
    if not isinstance(obj, Mapping):
        return [SchemaError("", f"object must be a mapping, got {json_type(obj)}")]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    errors = []
    if not isinstance(api_version, str) or not API_VERSION.fullmatch(api_version):
        errors.append(
            SchemaError(
                "apiVersion", f'must be "<group>/<version>" or "<version>", got {api_version!r}'
            )
        )
    if not isinstance(kind, str) or not kind:
        errors.append(SchemaError("kind", f"must be a non-empty string, got {kind!r}"))
    if errors:
        return errors
    group, _, version = api_version.rpartition("/")

    builtin_versions = builtin_group_versions(group)
    if builtin_versions:
        if version not in builtin_versions:
            return [
                SchemaError(
                    "apiVersion",
                    f"{api_version} is not an API version of the built-in "
                    f"group {group or 'core'!r} (known: "
                    f"{', '.join(sorted(builtin_versions))})",
                )
            ]
        model = builtin_kinds(group, version).get(kind)
        if model is None:
            return [SchemaError("kind", f"unknown kind {kind!r} in {api_version}")]
        cls_name, namespaced = model
        errors = []
        check_model(obj, cls_name, "", errors)
        check_metadata_rules(obj, namespaced, kind, errors)
        return errors

    if served is not None and (served_kinds := served.kinds(group, version)) is not None:
        found = served_kinds.get(kind)
        if found is None:
            return [
                SchemaError(
                    "kind",
                    f"unknown kind: cluster {served.cluster} serves no {kind} in "
                    f"{api_version} (served: {', '.join(sorted(served_kinds)) or 'none'})",
                )
            ]
        return _served_errors(obj, kind, found)

    directory = require_crd_dir(crd_dir, api_version, kind)
    crd = crd_definition(directory, group, kind)
    if crd is None:
        return [
            SchemaError(
                "kind",
                f"unknown kind: no built-in model and no CRD in {directory} "
                f"for apiVersion {api_version!r}, kind {kind!r}",
            )
        ]
    validator = crd.validators.get(version)
    if validator is None:
        return [
            SchemaError(
                "apiVersion",
                f"{api_version} is not served by the {kind} CRD "
                f"({crd.path.name}; served: {', '.join(crd.validators)})",
            )
        ]
    errors = []
    if "metadata" in obj:
        check_model(obj["metadata"], "V1ObjectMeta", "metadata", errors)
    check_metadata_rules(obj, crd.namespaced, kind, errors)
    # The CRD's schema never looks into metadata (crds._root_schema): a body checked before
    # (the tenant's AppProject in each of its requests' plans) is not checked again.
    body = json.dumps(
        {**obj, "metadata": {}} if "metadata" in obj else obj, sort_keys=True, default=str
    )
    errors.extend(_crd_errors(directory, group, kind, version, body))
    return errors


def _served_errors(obj: Mapping[str, Any], kind: str, served: ServedKind) -> list[SchemaError]:
    errors: list[SchemaError] = []
    if "metadata" in obj:
        check_model(obj["metadata"], "V1ObjectMeta", "metadata", errors)
    check_metadata_rules(obj, served.namespaced, kind, errors)
    errors.extend(jsonschema_errors(served.validator, {**obj, "metadata": {}}))
    return errors


@functools.lru_cache(maxsize=512)
def _crd_errors(
    directory: Path, group: str, kind: str, version: str, body: str
) -> tuple[SchemaError, ...]:
    validator = crd_definition(directory, group, kind).validators[version]
    return tuple(jsonschema_errors(validator, json.loads(body)))


def validate_objects(
    objs: Iterable[Mapping[str, Any]],
    *,
    crd_dir: str | os.PathLike[str] | None = None,
    served: ServedSchemas | None = None,
) -> dict[str, list[SchemaError]]:
    """Validate a batch. Returns only the objects that have problems, keyed
    ``"Kind/namespace/name"`` (``"Kind/name"`` when the object has no namespace; ``#<index>``
    stands in for a missing name; a repeated key gets ``" #<index>"`` appended). An empty dict
    means every object is valid. Raises :class:`SchemaUnavailable` like :func:`validate_object`.
    """
    result: dict[str, list[SchemaError]] = {}
    for index, obj in enumerate(objs):
        errors = validate_object(obj, crd_dir=crd_dir, served=served)
        if not errors:
            continue
        key = object_key(obj, index)
        if key in result:
            key = f"{key} #{index}"
        result[key] = errors
    return result
