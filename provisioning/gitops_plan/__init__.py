"""The GitOps files a tenant's repository holds for one application, rendered as plain data.

Pure, like `provisioning.plan`: inputs are the same frozen dataclasses (a `PlanInput` built
by `provisioning.inputs.gitops_input_for`, which lists every live environment of the
application), output is `{path: content}`. No I/O, no string templates: manifests are dicts
dumped with PyYAML in sorted key order, so the same inputs always give the same bytes.

Only tenant-owned definitions are rendered here (Argo CD Applications, Kargo Warehouse and
Stages, Flux Kustomizations, kustomize files), and each cluster's index
(`clusters/<cluster>/kustomization.yaml`), which the tenant's roots on that cluster apply
(provisioning.plan.tenant). Anything that grants or
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

    layout     paths and names
    documents  the definitions themselves
    files      managed files and skeletons; render, converge, diff
    message    the commit message
"""

from provisioning.gitops_plan.documents import application, flux_kustomization, stages, warehouse
from provisioning.gitops_plan.files import (
    changes,
    cluster_objects,
    converge,
    diff_files,
    documents,
    index_changes,
    index_entries,
    is_managed,
    is_skeleton,
    render_files,
    render_index,
)
from provisioning.gitops_plan.layout import TENANT_KINDS, app_dir, index_path, overlay_path, scope
from provisioning.gitops_plan.message import commit_message

__all__ = [
    "TENANT_KINDS",
    "app_dir",
    "application",
    "changes",
    "cluster_objects",
    "commit_message",
    "converge",
    "diff_files",
    "documents",
    "flux_kustomization",
    "index_changes",
    "index_entries",
    "index_path",
    "is_managed",
    "is_skeleton",
    "overlay_path",
    "render_files",
    "render_index",
    "scope",
    "stages",
    "warehouse",
]
