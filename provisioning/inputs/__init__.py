"""Read the database into the frozen inputs `provisioning.plan` renders from.

The only database access on the way to a plan; everything after it is pure. A request's
plan input is what its kind brings (`provisioning.inputs.kinds`, one module per kind)
with what every plan reads alike (`reads`: read once per batch; `specs`: Berth's records
as the plan describes them); `gitops` reads what an application's files are rendered from.
"""

from provisioning.inputs.gitops import apps_of_request, gitops_input_for
from provisioning.inputs.plan import plan_input_for, plan_inputs_for
from provisioning.inputs.reads import claims_of, prefetch, shared_reads
from provisioning.inputs.specs import (
    GITOPS_LIVE_STATES,
    app_of,
    apps_on,
    cluster_spec,
    clusters_of,
    environment_takes_namespace,
    kargo_project,
    kept_input,
    namespace_input,
    namespace_spec,
    pinned_tier_spec,
    repo_credential,
    tenant_engines,
    tenant_spec,
    tier_spec,
)

__all__ = [
    "GITOPS_LIVE_STATES",
    "app_of",
    "apps_of_request",
    "apps_on",
    "claims_of",
    "cluster_spec",
    "clusters_of",
    "environment_takes_namespace",
    "gitops_input_for",
    "kargo_project",
    "kept_input",
    "namespace_input",
    "namespace_spec",
    "pinned_tier_spec",
    "plan_input_for",
    "plan_inputs_for",
    "prefetch",
    "repo_credential",
    "shared_reads",
    "tenant_engines",
    "tenant_spec",
    "tier_spec",
]
