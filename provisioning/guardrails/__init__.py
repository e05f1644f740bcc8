"""Guardrails that hold: nothing a tenant can edit may widen its own permissions.

Pure data and pure checks, no I/O (docs/guardrails.md explains the model):

- **Roles** (`roles`). The ClusterRoles Berth ships, bound to tenant groups by the tiers and
  to every namespace's GitOps ServiceAccount by the plan: `berth-tenant-edit` (Kubernetes
  1.30's `edit` minus writes to ResourceQuota, LimitRange, Roles and RoleBindings, minus
  `impersonate` and ServiceAccount tokens) and `berth-tenant-view` (`view`, plus reading
  Roles and RoleBindings). Every rule spells out its groups, resources and verbs: no
  wildcards, so a new API can never become writable by accident.
- **Admission** (`admission`). ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1,
  Kubernetes >= 1.30) in CEL: objects labelled `app.kubernetes.io/managed-by: berth` are
  created, changed and deleted by Berth alone; Ingress hosts and cert-manager Certificate
  names stay inside the tenant's allowed domains, and Flux in a tenant's namespaces applies
  as the tenant from the tenant's repository (parameters: ConfigMaps Berth applies in each
  tenant namespace). `bootstrap_objects`: roles, policies and bindings, the same for every
  tenant, applied once per cluster by `provisioning.bootstrap`.
- **Checks** (`checks`). Berth's own rules for every object of a tenant's plan, which
  `provisioning.validation.validate_plan` runs with the schema checks before the first API
  call.
"""

from provisioning.guardrails.admission import (
    BERTH_SERVICE_ACCOUNT,
    CERTIFICATE_DOMAINS_POLICY,
    CERTIFICATE_VALIDATIONS,
    CONTROLLER_USERS,
    FLUX_POLICY,
    INGRESS_DOMAINS_POLICY,
    INGRESS_VALIDATIONS,
    KARGO_CONTROLLER,
    PROTECT_POLICY,
    PROTECTED_RESOURCES,
    ROOT_RESOURCES,
    ROOTS_POLICY,
    admission_policies,
    berth_labels,
    berth_username,
    binding,
    bootstrap_objects,
    flux_policy,
    policy_bindings,
    protect_policy,
    roots_policy,
)
from provisioning.guardrails.checks import (
    CLUSTER_SCOPED,
    PLAN_KINDS,
    appproject_permits,
    appproject_problems,
    guardrail_problems,
)
from provisioning.guardrails.roles import (
    ADMISSION_GROUP,
    BERTH_ROLES,
    EDIT_RULES,
    LEAKY_ROLES,
    PART_OF,
    RBAC_GROUP,
    READ,
    ROLE_RULES,
    ROLE_SUMMARIES,
    VIEW_RULES,
    WRITE,
    cluster_roles,
    describe_role,
    role_verbs,
    role_writes,
)

__all__ = [
    "ADMISSION_GROUP",
    "BERTH_ROLES",
    "BERTH_SERVICE_ACCOUNT",
    "CERTIFICATE_DOMAINS_POLICY",
    "CERTIFICATE_VALIDATIONS",
    "CLUSTER_SCOPED",
    "CONTROLLER_USERS",
    "FLUX_POLICY",
    "EDIT_RULES",
    "INGRESS_DOMAINS_POLICY",
    "INGRESS_VALIDATIONS",
    "KARGO_CONTROLLER",
    "LEAKY_ROLES",
    "PART_OF",
    "PLAN_KINDS",
    "PROTECTED_RESOURCES",
    "ROOT_RESOURCES",
    "ROOTS_POLICY",
    "PROTECT_POLICY",
    "RBAC_GROUP",
    "READ",
    "ROLE_RULES",
    "ROLE_SUMMARIES",
    "VIEW_RULES",
    "WRITE",
    "admission_policies",
    "appproject_permits",
    "appproject_problems",
    "berth_labels",
    "berth_username",
    "binding",
    "bootstrap_objects",
    "flux_policy",
    "policy_bindings",
    "cluster_roles",
    "describe_role",
    "guardrail_problems",
    "protect_policy",
    "roots_policy",
    "role_verbs",
    "role_writes",
]
