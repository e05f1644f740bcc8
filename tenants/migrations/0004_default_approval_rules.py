"""The approval rules a new installation starts with; platform admins edit them in the UI."""

from django.db import migrations

DEFAULT_RULES = [
    dict(position=10, name="viewers-cannot-request", outcome="deny",
         condition='request.requester_role == "viewer"',
         description="Viewers may look but not ask.",
         message="Viewers cannot make requests; ask a member or owner of the tenant."),
    dict(position=20, name="dev-and-review-auto-approve", outcome="auto_approve",
         condition='request.tiers.all(t, t in ["dev", "review"]) && '
                   'request.kind != "quota_change"',
         description="Development and review environments within budget (budgets are "
                     "enforced before any rule)."),
    dict(position=30, name="prod-needs-platform-admin", outcome="require",
         condition='"prod" in request.tiers', approver_role="platform_admin",
         description="Only the platform team lets things into production."),
    dict(position=40, name="staging-needs-tenant-owner", outcome="require",
         condition='"staging" in request.tiers', approver_role="tenant_owner",
         description="A tenant owner approves staging."),
    dict(position=1000, name="everything-else-needs-platform-admin", outcome="require",
         condition="true", approver_role="platform_admin",
         description="Anything no rule above decided."),
]


def create_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    for rule in DEFAULT_RULES:
        ApprovalRule.objects.get_or_create(name=rule["name"], defaults=rule)


def remove_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    ApprovalRule.objects.filter(name__in=[rule["name"] for rule in DEFAULT_RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("tenants", "0003_approval_workflow")]
    operations = [migrations.RunPython(create_rules, remove_rules)]
