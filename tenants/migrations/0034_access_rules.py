"""Approval rules for access on request (request.kind "access"), before every other rule:
an elevated role (prod-edit) needs two platform admins; a member of the tenant may read its
namespaces for a while without asking anyone; everything else about a tenant's namespaces
is its owners' call, outsiders included. Nobody decides their own request, whatever a rule
says (tenants.selectors.rights.why_cannot_decide)."""

from django.db import migrations

BASE_ROLES = '["owner", "member", "viewer"]'
RULES = [
    dict(
        position=1,
        name="access-elevated-role-needs-two-platform-admins",
        outcome="require",
        approvals_required=2,
        approver_role="platform_admin",
        condition=f'request.kind == "access" && !(request.access_role in {BASE_ROLES})',
        description="A tier's elevated role (e.g. prod-edit) for a while: two platform admins, "
        "neither of them the requester.",
    ),
    dict(
        position=2,
        name="access-viewer-of-own-tenant-auto-approve",
        outcome="auto_approve",
        condition='request.kind == "access" && request.access_role == "viewer" '
        '&& request.requester_role != ""',
        description="Reading one of one's own tenant's namespaces for a while.",
    ),
    dict(
        position=3,
        name="access-needs-tenant-owner",
        outcome="require",
        approver_role="tenant_owner",
        condition='request.kind == "access"',
        description="Any other access to a tenant's namespace, outsiders' included: one of the "
        "owning tenant's owners decides.",
    ),
]


def create_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    for rule in RULES:
        ApprovalRule.objects.get_or_create(name=rule["name"], defaults=rule)


def remove_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    ApprovalRule.objects.filter(name__in=[rule["name"] for rule in RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("tenants", "0033_access_grants")]
    operations = [migrations.RunPython(create_rules, remove_rules)]
