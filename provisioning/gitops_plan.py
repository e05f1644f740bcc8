"""The GitOps files a tenant's repository holds for one application, rendered as plain data.

Pure, like `provisioning.plan`: inputs are the same frozen dataclasses (a `PlanInput` built
by `provisioning.inputs.gitops_input_for`, which lists every live environment of the
application), output is `{path: content}`. No I/O, no string templates: manifests are dicts
dumped with PyYAML in sorted key order, so the same inputs always give the same bytes.

Only tenant-owned definitions are rendered here (Argo CD Applications, Kargo Warehouse and
Stages, Flux GitRepository and Kustomization, kustomize skeletons). Anything that grants or
bounds permissions is applied by Berth itself (`provisioning.plan`) and never written to a
tenant's repository: `render_files` refuses any other kind.

Two kinds of file, told apart by their first line (docs/gitops-layout.md):

- managed (`# Managed by Berth ...`): Berth's; rewritten when their content (everything
  after the first line) should change, deleted when their environment goes. A team takes one
  over by deleting that first line; Berth then leaves it alone.
- skeletons (`# Created by Berth ...`, then the digest of the content Berth wrote): the
  kustomize base and overlays. Written once when missing and never overwritten. On
  decommission they are deleted only if still exactly as Berth wrote them.

`converge` applies those rules to what the repository holds now, `diff_files` shows the
result as a unified diff, `commit_message` says what changed and why.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml

from provisioning.plan import (
    GITOPS_SERVICE_ACCOUNT,
    IN_CLUSTER_SERVER,
    LABEL_PROJECT,
    LABEL_TENANT,
    LABEL_TIER,
    NamespaceSpec,
    PlanInput,
    argocd_apps_namespace,
    kargo_project_name,
    uses_argocd,
)
from tenants.naming import fit

MANAGED_MARK = "# Managed by Berth"
SKELETON_MARK = "# Created by Berth"
DIGEST_MARK = "# berth-skeleton-sha256: "
DEFAULT_IMAGE_REPOSITORY = "registry.example.com/{tenant}/{app}"
LABEL_PART_OF = "app.kubernetes.io/part-of"
# Directory names under apps/<app>/ that are not environments.
RESERVED_DIRS = frozenset({"base", "overlays", "kargo"})
# The only kinds a tenant's repository ever receives from Berth. Everything else, and in
# particular whatever grants or bounds permissions (Namespace, RBAC, quota, limits, network
# policy, ServiceAccounts, AppProject, Kargo Project / ProjectConfig), is applied by Berth.
TENANT_KINDS = frozenset(
    {
        ("argoproj.io", "Application"),
        ("kargo.akuity.io", "Warehouse"),
        ("kargo.akuity.io", "Stage"),
        ("source.toolkit.fluxcd.io", "GitRepository"),
        ("kustomize.toolkit.fluxcd.io", "Kustomization"),
        ("kustomize.config.k8s.io", "Kustomization"),  # kustomize's own file, not an object
    }
)
ENGINE_LABELS = {"argocd": "Argo CD", "argocd_kargo": "Argo CD + Kargo", "flux": "Flux"}
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SCP_LIKE = re.compile(r"^(?P<user>[^@/\s:]+@)?(?P<host>[^@/\s:]+):(?!//)(?P<path>.+)$")


# --- naming and paths --------------------------------------------------------------------


def repo_root(path: str) -> str:
    """The tenant's base path in its repository, as a prefix ("" or "some/dir/")."""
    cleaned = path.strip().strip("/")
    if not cleaned:
        return ""
    parts = cleaned.split("/")
    if any(part in ("", ".", "..") or "\\" in part for part in parts):
        raise ValueError(
            f"GitOps base path {path!r} must be a relative path inside the repository "
            "(no '.', '..' or empty parts)"
        )
    return cleaned + "/"


def app_dir(inputs: PlanInput) -> str:
    """Everything Berth writes for one application lives under this directory."""
    if not _DNS_LABEL.fullmatch(inputs.app or ""):
        raise ValueError(f"application name {inputs.app!r} is not a DNS label")
    return f"{repo_root(inputs.tenant.repo_path)}apps/{inputs.app}/"


def scope(inputs: PlanInput) -> tuple[str, ...]:
    """The directories a write for these inputs may change (and reads before it does)."""
    return (app_dir(inputs),) if inputs.app else ()


def environment_dir(ns: NamespaceSpec) -> str:
    """A tier's environment has the tier's directory; an ephemeral one a directory of its
    own inside it (`review/review-42`)."""
    return f"{ns.tier.slug}/{ns.environment}" if ns.environment else ns.tier.slug


def overlay_path(inputs: PlanInput, ns: NamespaceSpec) -> str:
    return f"{app_dir(inputs)}overlays/{environment_dir(ns)}"


def application_name(inputs: PlanInput, ns: NamespaceSpec) -> str:
    """Named after the namespace; an ephemeral environment's after itself, as several may
    share a namespace."""
    if ns.environment:
        return fit(f"{inputs.tenant.slug}-{inputs.app}-{ns.environment}")
    return ns.name


def flux_name(inputs: PlanInput, ns: NamespaceSpec) -> str:
    return fit(f"{inputs.app}-{ns.environment}") if ns.environment else inputs.app


def stage_name(ns: NamespaceSpec) -> str:
    return fit(f"{ns.tier.slug}-{ns.environment}") if ns.environment else ns.tier.slug


def public_url(url: str) -> str:
    """A repository URL fit to write into a file: never a password or token in it."""
    parts = urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url  # scp-like git@host:path carries a user name, never a secret
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    # SSH names a login (git@); for HTTP(S) anything before @ is a credential.
    netloc = f"{user}@{host}" if parts.scheme == "ssh" and user else host
    return urlunsplit(parts._replace(netloc=netloc))


def flux_url(url: str) -> str:
    """Flux wants ssh:// where git accepts the scp-like form git@host:path."""
    url = public_url(url)
    match = _SCP_LIKE.match(url)
    if match and not urlsplit(url).scheme:
        return f"ssh://{match['user'] or ''}{match['host']}/{match['path']}"
    return url


def uses_kargo(inputs: PlanInput) -> bool:
    """Mirrors provisioning.plan.render: the Kargo project exists only for projects."""
    return inputs.engine == "argocd_kargo" and bool(inputs.project) and inputs.cluster.has_kargo


def writes_argocd(inputs: PlanInput) -> bool:
    return uses_argocd(inputs.engine) and bool(inputs.cluster.argocd_namespace)


# --- file contents -----------------------------------------------------------------------


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


def _managed(request_id: int, documents: list[dict[str, Any]]) -> str:
    body = (
        "# To take this file over, delete the first line: Berth then never changes it.\n"
        + _dump(documents)
    )
    return managed_header(request_id) + body


def _skeleton(request_id: int, comment: str, document: dict[str, Any]) -> str:
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


def _body(content: str) -> str:
    """Everything after the first line: what a managed file says, whichever request wrote it."""
    return content.partition("\n")[2]


def skeleton_untouched(content: str) -> bool:
    """A skeleton still exactly as Berth wrote it (its digest line matches its content)."""
    _, _, rest = content.partition("\n")
    digest_line, _, body = rest.partition("\n")
    return digest_line == f"{DIGEST_MARK}{_digest(body)}"


# --- manifests ---------------------------------------------------------------------------


def _labels(inputs: PlanInput, ns: NamespaceSpec | None = None) -> dict[str, str]:
    # Not `app.kubernetes.io/managed-by: berth`: the team's controllers apply these objects,
    # and Berth's admission policy protects what carries that label from everyone but Berth.
    labels = {LABEL_TENANT: inputs.tenant.slug, LABEL_PART_OF: inputs.app}
    if ns is not None:
        labels[LABEL_TIER] = ns.tier.slug
    if inputs.project:
        labels[LABEL_PROJECT] = inputs.project
    return labels


def application(inputs: PlanInput, ns: NamespaceSpec) -> dict[str, Any]:
    """One Argo CD Application per environment, in the tenant's apps namespace."""
    metadata: dict[str, Any] = {
        "name": application_name(inputs, ns),
        "namespace": argocd_apps_namespace(inputs.tenant.slug),
        "labels": _labels(inputs, ns),
        # Deleting the Application (its file removed on decommission) deletes what it made.
        "finalizers": ["resources-finalizer.argocd.argoproj.io"],
    }
    if uses_kargo(inputs):
        stage = f"{kargo_project_name(inputs.tenant.slug, inputs.project)}:{stage_name(ns)}"
        metadata["annotations"] = {"kargo.akuity.io/authorized-stage": stage}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": metadata,
        "spec": {
            "project": inputs.tenant.slug,
            "source": {
                "repoURL": public_url(inputs.tenant.repo_url),
                "targetRevision": inputs.tenant.repo_branch,
                "path": overlay_path(inputs, ns),
            },
            "destination": {"server": IN_CLUSTER_SERVER, "namespace": ns.name},
            "syncPolicy": {
                "automated": {"prune": True, "selfHeal": True},
                "syncOptions": ["CreateNamespace=false"],
            },
        },
    }


def flux_objects(inputs: PlanInput, ns: NamespaceSpec) -> list[dict[str, Any]]:
    """Flux source and Kustomization in the environment's namespace, run as its Flux SA."""
    labels = _labels(inputs, ns)
    name = flux_name(inputs, ns)
    return [
        {
            "apiVersion": "source.toolkit.fluxcd.io/v1",
            "kind": "GitRepository",
            "metadata": {"name": name, "namespace": ns.name, "labels": labels},
            "spec": {
                "interval": "1m0s",
                "url": flux_url(inputs.tenant.repo_url),
                "ref": {"branch": inputs.tenant.repo_branch},
            },
        },
        {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": name, "namespace": ns.name, "labels": labels},
            "spec": {
                "interval": "10m0s",
                "retryInterval": "1m0s",
                "timeout": "5m0s",
                "path": f"./{overlay_path(inputs, ns)}",
                "prune": True,
                "sourceRef": {"kind": "GitRepository", "name": name},
                # Flux impersonates the tenant's own account: it can do no more than the team.
                "serviceAccountName": GITOPS_SERVICE_ACCOUNT,
                "targetNamespace": ns.name,
            },
        },
    ]


def image_repository(inputs: PlanInput, template: str) -> str:
    return template.format(tenant=inputs.tenant.slug, app=inputs.app)


def warehouse(inputs: PlanInput, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "kargo.akuity.io/v1alpha1",
        "kind": "Warehouse",
        "metadata": {
            "name": inputs.app,
            "namespace": kargo_project_name(inputs.tenant.slug, inputs.project),
            "labels": _labels(inputs),
        },
        "spec": {
            "interval": "5m0s",
            "freightCreationPolicy": "Automatic",
            "subscriptions": [
                {
                    "image": {
                        "repoURL": image,
                        "imageSelectionStrategy": "SemVer",
                        "discoveryLimit": 20,
                    }
                }
            ],
        },
    }


def promotion_order(namespaces: Iterable[NamespaceSpec]) -> list[NamespaceSpec]:
    return sorted(namespaces, key=lambda ns: (ns.tier.is_ephemeral, ns.tier.position, ns.tier.slug))


def stages(inputs: PlanInput, image: str) -> list[dict[str, Any]]:
    """dev → staging → prod in tier order; ephemeral tiers take Freight straight from the
    Warehouse and feed nothing."""
    project = kargo_project_name(inputs.tenant.slug, inputs.project)
    documents = []
    upstream = ""
    for ns in promotion_order(inputs.namespaces):
        stage = stage_name(ns)
        if ns.tier.is_ephemeral or not upstream:
            sources: dict[str, Any] = {"direct": True}
        else:
            sources = {"stages": [upstream]}
        if not ns.tier.is_ephemeral:
            upstream = stage
        steps: list[dict[str, Any]] = [
            {
                "uses": "git-clone",
                "config": {
                    "repoURL": "${{ vars.gitRepo }}",
                    "checkout": [{"branch": "${{ vars.gitBranch }}", "path": "./out"}],
                },
            },
            {
                "uses": "kustomize-set-image",
                "as": "update-image",
                "config": {
                    "path": f"./out/{overlay_path(inputs, ns)}",
                    "images": [
                        {
                            "image": "${{ vars.imageRepo }}",
                            "tag": "${{ imageFrom(vars.imageRepo).Tag }}",
                        }
                    ],
                },
            },
            {
                "uses": "git-commit",
                "as": "commit",
                "config": {
                    "path": "./out",
                    "message": "${{ outputs['update-image'].commitMessage }}",
                },
            },
            {"uses": "git-push", "config": {"path": "./out"}},
        ]
        if writes_argocd(inputs):
            steps.append(
                {
                    "uses": "argocd-update",
                    "config": {
                        "apps": [
                            {
                                "name": application_name(inputs, ns),
                                "namespace": argocd_apps_namespace(inputs.tenant.slug),
                                "sources": [
                                    {
                                        "repoURL": "${{ vars.gitRepo }}",
                                        "desiredRevision": "${{ outputs.commit.commit }}",
                                    }
                                ],
                            }
                        ]
                    },
                }
            )
        documents.append(
            {
                "apiVersion": "kargo.akuity.io/v1alpha1",
                "kind": "Stage",
                "metadata": {"name": stage, "namespace": project, "labels": _labels(inputs, ns)},
                "spec": {
                    "requestedFreight": [
                        {"origin": {"kind": "Warehouse", "name": inputs.app}, "sources": sources}
                    ],
                    "promotionTemplate": {
                        "spec": {
                            "vars": [
                                {"name": "gitRepo", "value": public_url(inputs.tenant.repo_url)},
                                {"name": "gitBranch", "value": inputs.tenant.repo_branch},
                                {"name": "imageRepo", "value": image},
                            ],
                            "steps": steps,
                        }
                    },
                },
            }
        )
    return documents


def _kustomization(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", **fields}


def base_skeleton(inputs: PlanInput) -> tuple[str, dict[str, Any]]:
    comment = (
        f"The manifests of {inputs.app} that every environment shares: add them here and\n"
        "list them under resources. Each environment's overlay (../overlays/<tier>) builds\n"
        "on this base."
    )
    return comment, _kustomization(resources=[])


def overlay_skeleton(inputs: PlanInput, ns: NamespaceSpec) -> tuple[str, dict[str, Any]]:
    comment = (
        f"What differs in {environment_dir(ns)} (namespace {ns.name}): patches, replicas, "
        "image tags.\nThis directory is what gets deployed into that namespace."
    )
    up = "../" * (environment_dir(ns).count("/") + 2)
    return comment, _kustomization(namespace=ns.name, resources=[f"{up}base"])


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
        if inputs.engine == "flux":
            managed[f"{here}{where}/flux.yaml"] = flux_objects(inputs, ns)
    if uses_kargo(inputs):
        image = image_repository(inputs, image_repository_template)
        managed[f"{here}kargo/warehouse.yaml"] = [warehouse(inputs, image)]
        managed[f"{here}kargo/stages.yaml"] = stages(inputs, image)
    built = [doc for docs in managed.values() for doc in docs]
    built += [doc for _, doc in skeletons.values()]
    for document in built:
        group = document["apiVersion"].rpartition("/")[0]
        if (group, document["kind"]) not in TENANT_KINDS:  # pragma: no cover - a bug guard
            raise ValueError(f"{document['kind']} must never go into a tenant's repository")
    files = {path: _managed(inputs.request_id, docs) for path, docs in managed.items()}
    files.update(
        (path, _skeleton(inputs.request_id, comment, doc))
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
        elif _body(have) != _body(content):
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


# --- commit messages -----------------------------------------------------------------------


def commit_message(
    *,
    kind: str,
    request_id: int,
    tenant: str,
    app: str,
    engine: str,
    namespaces: Iterable[str] = (),
    changed: Mapping[str, str],
    notes: Iterable[str] = (),
    approvers: Iterable[str] = (),
    reason: str = "",
    environment: str = "",
) -> str:
    """What changed and why, ending in the trailers Berth-Request and Approved-by.
    `namespaces` are the ones the request itself creates, changes or removes."""
    names = list(namespaces)
    first = (names or [app])[0]
    subject, verb = {
        "namespace": (f"Add {first} (namespace request #{request_id})", "add"),
        "project": (f"Add project {app} (project request #{request_id})", "add"),
        "environment": (
            f"Add {first} to project {app} (environment request #{request_id})",
            "add",
        ),
        "decommission": (f"Remove {first} (decommission request #{request_id})", "remove"),
        "quota_change": (f"Update {first} (quota change request #{request_id})", "update"),
        "ephemeral": (
            f"Add {environment} of {app} in {first} (ephemeral environment request "
            f"#{request_id})",
            "add",
        ),
        "end_environment": (
            f"Remove {environment} of {app} from {first} (end request #{request_id})",
            "remove",
        ),
    }.get(kind, (f"Update {app} (request #{request_id})", "update"))
    why = f"{kind.replace('_', ' ')} request #{request_id}"
    paragraphs = [
        subject,
        f"Berth keeps the {ENGINE_LABELS.get(engine, engine)} definitions of {app} for "
        f"tenant {tenant} in step with what was approved in {why}"
        + (f", which asked to {verb} {', '.join(names)}." if names else "."),
    ]
    if reason.strip():
        paragraphs.append(f"Reason given: {reason.strip()}")
    paragraphs.append(
        "Files:\n" + "\n".join(f"  {change:<9} {path}" for path, change in changed.items())
    )
    notes = list(notes)
    if notes:
        paragraphs.append("Left as they are:\n" + "\n".join(f"  {note}" for note in notes))
    trailers = [f"Berth-Request: {request_id}"]
    trailers += [f"Approved-by: {who}" for who in (list(approvers) or ["policy"])]
    paragraphs.append("\n".join(trailers))
    return "\n\n".join(paragraphs) + "\n"
