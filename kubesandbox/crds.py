"""CustomResourceDefinitions: checked like the apiextensions apiserver checks them, and turned
into served types (discovery, CRUD, ``/status`` when declared, watch, OpenAPI) as soon as
they are stored. Deleting a CRD deletes its custom resources.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from .resources import APIEXTENSIONS, NAME_SUBDOMAIN, ResourceType
from .storeview import ControlledStore

Cause = tuple[str, str, str]


def is_crd(rt: ResourceType) -> bool:
    return (rt.group, rt.plural) == (APIEXTENSIONS, "customresourcedefinitions")


def types_of(crd: dict) -> list[ResourceType]:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    types = []
    for version in spec.get("versions") or []:
        if not version.get("served", True):
            continue
        subresources = version.get("subresources") or {}
        types.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                kind=names["kind"],
                namespaced=spec.get("scope") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                name_rule=NAME_SUBDOMAIN,
                has_status="status" in subresources,
                custom=True,
                categories=tuple(names.get("categories") or ()),
                schema=(version.get("schema") or {}).get("openAPIV3Schema"),
                crd_name=crd["metadata"]["name"],
                printer_columns=list(version.get("additionalPrinterColumns") or []),
            )
        )
    return types


def crd_problems(crd: dict) -> list[Cause]:
    """The apiextensions validation a CRD author meets most often."""
    problems: list[Cause] = []
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    if not group:
        problems.append(("FieldValueRequired", "spec.group", "Required value"))
    elif "." not in group:
        problems.append(
            (
                "FieldValueInvalid",
                "spec.group",
                f'Invalid value: "{group}": should be a domain with at least one dot',
            )
        )
    for field in ("plural", "kind"):
        if not names.get(field):
            problems.append(("FieldValueRequired", f"spec.names.{field}", "Required value"))
    name = crd.get("metadata", {}).get("name", "")
    expected = f"{names.get('plural', '')}.{group}"
    if names.get("plural") and group and name != expected:
        problems.append(
            (
                "FieldValueInvalid",
                "metadata.name",
                f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
            )
        )
    scope = spec.get("scope")
    if scope not in ("Namespaced", "Cluster"):
        problems.append(
            (
                "FieldValueNotSupported",
                "spec.scope",
                f'Unsupported value: "{scope or ""}": supported values: "Cluster", "Namespaced"',
            )
        )
    versions = spec.get("versions") or []
    if not versions:
        problems.append(
            (
                "FieldValueInvalid",
                "spec.versions",
                "Invalid value: null: must have exactly one version marked as storage version",
            )
        )
    elif sum(1 for v in versions if v.get("storage")) != 1:
        problems.append(
            (
                "FieldValueInvalid",
                "spec.versions",
                "Invalid value: ...: must have exactly one version marked as storage version",
            )
        )
    for index, version in enumerate(versions):
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not schema:
            problems.append(
                (
                    "FieldValueRequired",
                    f"spec.versions[{index}].schema.openAPIV3Schema",
                    "Required value: schemas are required",
                )
            )
        elif schema.get("type") != "object":
            problems.append(
                (
                    "FieldValueRequired",
                    f"spec.versions[{index}].schema.openAPIV3Schema.type",
                    "Required value: must not be empty at the root",
                )
            )
    return problems


def crd_controller(store: ControlledStore, rt: ResourceType, obj: dict, deleted: bool) -> None:
    """Register (or forget) the CRD's types; mark it Established like the real controllers."""
    if not is_crd(rt):
        return
    name = obj["metadata"]["name"]
    if deleted:
        for served in store.registry.custom_types(name)[:1]:
            store.remove_all(served.group, served.plural)
        store.registry.set_custom(name, [])
        return
    store.registry.set_custom(name, types_of(obj))
    names = (obj.get("spec") or {}).get("names") or {}
    status = copy.deepcopy(obj.get("status") or {})
    accepted = {k: v for k, v in names.items() if k != "listKind"}
    accepted["listKind"] = names.get("listKind") or f"{names.get('kind')}List"
    wanted_conditions = {
        "NamesAccepted": ("NoConflicts", "no conflicts found"),
        "Established": ("InitialNamesAccepted", "the initial names have been accepted"),
    }
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    if status.get("acceptedNames") == accepted and all(
        conditions.get(kind, {}).get("status") == "True" for kind in wanted_conditions
    ):
        return
    stamp = obj["metadata"].get("creationTimestamp")
    status["acceptedNames"] = accepted
    status["conditions"] = [
        {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": stamp,
        }
        for kind, (reason, message) in wanted_conditions.items()
    ]
    status["storedVersions"] = [
        v["name"] for v in (obj.get("spec") or {}).get("versions") or [] if v.get("storage")
    ]
    store.write_internal(rt, {**obj, "status": status})


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_parsed: dict[tuple[str, int, int], list[dict]] = {}


def _documents(file: Path) -> list[dict]:
    """The YAML documents of a file, parsed once per process (CRDs are megabytes)."""
    stat = file.stat()
    key = (str(file.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _parsed:
        _parsed[key] = [
            d for d in yaml.load_all(file.read_text(), Loader=_LOADER) if isinstance(d, dict) and d
        ]
    return copy.deepcopy(_parsed[key])


def _manifest_files(paths: list[str | Path]) -> list[Path]:
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
        else:
            files.append(path)
    return files


def manifests_key(paths: list[str | Path]) -> tuple:
    """What these files hold, as far as their names, sizes and times tell: equal keys, the
    same objects."""
    return tuple(
        (str(file), stat.st_mtime_ns, stat.st_size)
        for file in _manifest_files(paths)
        for stat in [file.stat()]
    )


def load_manifests(paths: list[str | Path]) -> list[dict]:
    """Every object in these YAML files (or the YAML files of these directories), in order."""
    objects = []
    for path in paths:
        for file in _manifest_files([path]):
            for doc in _documents(file):
                if doc.get("kind") == "List":
                    objects += doc.get("items") or []
                else:
                    objects.append(doc)
    # CRDs and namespaces first, as kubectl users learn to order them.
    order = {"CustomResourceDefinition": 0, "Namespace": 1}
    return sorted(objects, key=lambda o: order.get(o.get("kind"), 2))
