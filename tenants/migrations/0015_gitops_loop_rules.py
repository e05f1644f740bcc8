"""Rules for the requests about a tenant's whole footprint on a cluster: removing a project
or a tenant is the platform team's call; applying a tenant's objects again after a platform
admin changed the tenant needs no second look (the change itself is in the audit log)."""

from django.db import migrations

RULES = [
    dict(position=5, name="whole-project-or-tenant-removal-needs-platform-admin",
         outcome="require", approver_role="platform_admin",
         condition='request.kind in ["project_decommission", "tenant_decommission"]',
         description="Removing a project or a tenant from a cluster, with everything it has "
                     "there."),
    dict(position=6, name="tenant-objects-follow-platform-admins", outcome="auto_approve",
         condition='request.kind == "tenant_sync" && request.requester_platform_admin',
         description="A platform admin changed the tenant: its objects on each cluster follow "
                     "the records (roots, AppProject, credentials, groups, domains)."),
]


def create_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    for rule in RULES:
        ApprovalRule.objects.get_or_create(name=rule["name"], defaults=rule)


def remove_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    ApprovalRule.objects.filter(name__in=[rule["name"] for rule in RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("tenants", "0014_gitops_loop")]
    operations = [migrations.RunPython(create_rules, remove_rules)]
