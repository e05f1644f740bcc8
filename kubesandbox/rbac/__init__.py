"""RBAC: the authorizer, escalation prevention, ClusterRole aggregation and the bootstrap
roles every cluster has, after the upstream RBAC authorizer's documented behaviour.

``system:masters`` may do anything without any binding (as upstream, it short-circuits).
Everyone else may do what the stored Roles, ClusterRoles, RoleBindings and
ClusterRoleBindings grant. Writing a Role or ClusterRole that grants more than the writer
holds needs the ``escalate`` verb on it; a binding to a role whose permissions the writer
does not hold needs ``bind`` on that role.

``rules`` holds the rule algebra and the refusal messages, ``authorizer`` the store-backed
``Authorizer`` (escalation checks included), ``aggregation`` the aggregation controller,
``bootstrap`` the default policy.
"""

from .aggregation import aggregation_controller
from .authorizer import Authorizer
from .bootstrap import bootstrap_objects
from .rules import Attributes, forbidden_message

__all__ = [
    "Attributes",
    "Authorizer",
    "aggregation_controller",
    "bootstrap_objects",
    "forbidden_message",
]
