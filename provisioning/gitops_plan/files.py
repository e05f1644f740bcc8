"""Files as Berth writes them: managed files and skeletons told apart by their first line,
rendered for an application, converged with what the repository holds, and diffed.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from provisioning.gitops_plan.documents import (
    application,
    base_skeleton,
    flux_kustomization,
    image_repository,
    kustomization,
    overlay_skeleton,
    stages,
    warehouse,
)
from provisioning.gitops_plan.layout import (
    DEFAULT_IMAGE_REPOSITORY,
    DIGEST_MARK,
    MANAGED_MARK,
    RESERVED_DIRS,
    SKELETON_MARK,
    TENANT_KINDS,
    app_dir,
    environment_dir,
    index_entry,
    index_path,
    writes_argocd,
)
from provisioning.plan import FLUX, PlanInput, repo_root, uses_kargo


def managed_header(request_id: int) -> str:
    return (
        f"{MANAGED_MARK} (request #{request_id}). Changes here are overwritten; "
        "edit overlays/ instead.\n"
    )


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _dump(documents: list[dict[str, Any]]) -> str:
    if len(documents) == 1:
        return yaml.safe_dump(documents[0], sort_keys=True, default_flow_style=False, width=1000)
    return yaml.safe_dump_all(
        documents, sort_keys=True, default_flow_style=False, explicit_start=True, width=1000
    )


def managed_file(request_id: int, documents: list[dict[str, Any]]) -> str:
    body = (
        "# To take this file over, delete the first line: Berth then never changes it.\n"
        + _dump(documents)
    )
    return managed_header(request_id) + body


def skeleton_file(request_id: int, comment: str, document: dict[str, Any]) -> str:
    body = "".join(f"# {line}\n" if line else "#\n" for line in comment.splitlines())
    body += _dump([document])
    return (
        f"{SKELETON_MARK} (request #{request_id}) as a starting point. It is yours: "
        "Berth never overwrites it.\n"
        f"{DIGEST_MARK}{_digest(body)}\n" + body
    )


def is_managed(content: str) -> bool:
    return content.startswith(MANAGED_MARK)


def is_skeleton(content: str) -> bool:
    return content.startswith(SKELETON_MARK)


def body_of(content: str) -> str:
    """Everything after the first line: what a managed file says, whichever request wrote it."""
    return content.partition("\n")[2]


def skeleton_untouched(content: str) -> bool:
    """A skeleton still exactly as Berth wrote it (its digest line matches its content)."""
    _, _, rest = content.partition("\n")
    digest_line, _, body = rest.partition("\n")
    return digest_line == f"{DIGEST_MARK}{_digest(body)}"


def render_files(
    inputs: PlanInput, *, image_repository_template: str = DEFAULT_IMAGE_REPOSITORY
) -> dict[str, str]:
    """Every file Berth wants under `app_dir(inputs)`; empty once no environment is left."""
    if not inputs.app or not inputs.namespaces:
        return {}
    here = app_dir(inputs)
    managed: dict[str, list[dict[str, Any]]] = {}
    skeletons = {f"{here}base/kustomization.yaml": base_skeleton(inputs)}
    for ns in inputs.namespaces:
        tier = ns.tier.slug
        if tier in RESERVED_DIRS:
            raise ValueError(f"tier {tier!r} clashes with the directory apps/<app>/{tier}/")
        where = environment_dir(ns)
        skeletons[f"{here}overlays/{where}/kustomization.yaml"] = overlay_skeleton(inputs, ns)
        if writes_argocd(inputs):
            managed[f"{here}{where}/application.yaml"] = [application(inputs, ns)]
            managed[f"{here}{where}/kustomization.yaml"] = [
                kustomization(resources=["application.yaml"])
            ]
        if inputs.engine == FLUX:
            managed[f"{here}{where}/flux.yaml"] = [flux_kustomization(inputs, ns)]
            managed[f"{here}{where}/kustomization.yaml"] = [kustomization(resources=["flux.yaml"])]
    if uses_kargo(inputs):
        image = image_repository(inputs, image_repository_template)
        managed[f"{here}kargo/warehouse.yaml"] = [warehouse(inputs, image)]
        managed[f"{here}kargo/stages.yaml"] = stages(inputs, image)
        managed[f"{here}kargo/kustomization.yaml"] = [
            kustomization(resources=["stages.yaml", "warehouse.yaml"])
        ]
    built = [doc for docs in managed.values() for doc in docs]
    built += [doc for _, doc in skeletons.values()]
    for document in built:
        group = document["apiVersion"].rpartition("/")[0]
        if (group, document["kind"]) not in TENANT_KINDS:  # pragma: no cover - a bug guard
            raise ValueError(f"{document['kind']} must never go into a tenant's repository")
    files = {path: managed_file(inputs.request_id, docs) for path, docs in managed.items()}
    files.update(
        (path, skeleton_file(inputs.request_id, comment, doc))
        for path, (comment, doc) in skeletons.items()
    )
    return dict(sorted(files.items()))


def documents(files: Mapping[str, str]) -> list[dict[str, Any]]:
    """Every YAML document in these files, in path order."""
    found = []
    for path in sorted(files):
        found += [doc for doc in yaml.safe_load_all(files[path]) if doc is not None]
    return found


def cluster_objects(files: Mapping[str, str]) -> list[dict[str, Any]]:
    """The Kubernetes objects among these files (kustomize's own files are not objects)."""
    return [d for d in documents(files) if d["apiVersion"] != "kustomize.config.k8s.io/v1beta1"]


# --- the cluster's index -------------------------------------------------------------------


def index_entries(inputs: PlanInput) -> list[str]:
    """What the index of the request's cluster lists for the application: its environments
    on that cluster (and the project's Kargo directory), none once it has none there."""
    here = app_dir(inputs)
    mine = [ns for ns in inputs.namespaces if ns.cluster in ("", inputs.cluster.name)]
    entries = [index_entry(inputs, f"{here}{environment_dir(ns)}") for ns in mine]
    if mine and uses_kargo(inputs):
        entries.append(index_entry(inputs, f"{here}kargo"))
    return sorted(set(entries))


def render_index(
    current: str | None,
    inputs: PlanInput,
    entries: Iterable[str] = (),
    *,
    app: str = "",
    family: str = "",
) -> tuple[str | None, str]:
    """The cluster's index of one engine family (the request's by default) once the
    application `app` lists exactly `entries` (and the other applications what they list
    now): (content, note). A new tenant on a cluster gets an empty index, so its root has a
    directory to read; an index the team took over (first line removed) is left alone,
    with a note saying so."""
    path = index_path(inputs, family)
    if current is not None and not is_managed(current):
        return current, f"{path}: not Berth's any more (its first line is not Berth's header)"
    kept: list[str] = []
    if current is not None:
        listed = (yaml.safe_load(body_of(current)) or {}).get("resources") or []
        prefix = index_entry(inputs, f"{repo_root(inputs.tenant.repo_path)}apps/{app}") + "/"
        kept = [entry for entry in listed if not (app and entry.startswith(prefix))]
    wanted = sorted(set(kept) | set(entries))
    # Shared by every application on the cluster, so its header names no request: what it
    # says depends only on the environments it lists.
    content = (
        f"{MANAGED_MARK}: what the tenant's root on this cluster applies, one line per "
        "environment. Changes here are overwritten.\n" + _dump([kustomization(resources=wanted)])
    )
    if current is not None and body_of(current) == body_of(content):
        return current, ""
    return content, ""


def index_changes(before: str | None, after: str | None) -> list[str]:
    """The entries an index gains (+) and loses (-): what one request does to it, whatever
    the other applications list around it."""

    def entries(content: str | None) -> set[str]:
        if not content or not is_managed(content):
            return set()
        return set((yaml.safe_load(body_of(content)) or {}).get("resources") or [])

    old, new = entries(before), entries(after)
    return [f"+{entry}" for entry in sorted(new - old)] + [
        f"-{entry}" for entry in sorted(old - new)
    ]


# --- converging a repository ---------------------------------------------------------------


@dataclass(frozen=True)
class Converged:
    files: dict[str, str]  # what the scope should hold afterwards, every file in it
    notes: tuple[str, ...]  # files Berth wanted to touch and left alone, with why


def converge(
    current: Mapping[str, str], rendered: Mapping[str, str], within: Iterable[str]
) -> Converged:
    """What the files under `within` should be, given what they are now and what Berth
    renders: managed files follow the rendering, skeletons are only ever created, files the
    team owns are never touched. A managed file whose content is unchanged keeps its header
    (naming the request that last changed it), so re-running changes nothing."""
    prefixes = tuple(within)
    result = {path: content for path, content in current.items() if path.startswith(prefixes)}
    notes = []
    for path, content in rendered.items():
        have = result.get(path)
        if have is None:
            result[path] = content
        elif is_skeleton(content):
            continue
        elif not is_managed(have):
            notes.append(f"{path}: not Berth's any more (its first line is not Berth's header)")
        elif body_of(have) != body_of(content):
            result[path] = content
    for path in sorted(set(result) - set(rendered)):
        have = result[path]
        if is_managed(have):
            del result[path]
        elif is_skeleton(have):
            if skeleton_untouched(have):
                del result[path]
            else:
                notes.append(f"{path}: kept, the team changed it since Berth created it")
    return Converged(files=dict(sorted(result.items())), notes=tuple(notes))


def changes(current: Mapping[str, str], desired: Mapping[str, str]) -> dict[str, str]:
    """path → added | modified | deleted, for every path that differs."""
    found = {}
    for path in sorted(set(current) | set(desired)):
        if path not in current:
            found[path] = "added"
        elif path not in desired:
            found[path] = "deleted"
        elif current[path] != desired[path]:
            found[path] = "modified"
    return found


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(True)]


def diff_files(current: Mapping[str, str], desired: Mapping[str, str]) -> str:
    """A unified diff from `current` to `desired`, file by file in path order."""
    out: list[str] = []
    for path, change in changes(current, desired).items():
        out += difflib.unified_diff(
            _lines(current.get(path, "")),
            _lines(desired.get(path, "")),
            fromfile="/dev/null" if change == "added" else f"a/{path}",
            tofile="/dev/null" if change == "deleted" else f"b/{path}",
        )
    return "".join(out)
