"""Approval rules for sleep schedules (request.kind "sleep"), before the general ones: an
owner setting what the namespace's tier lets owners set is approved at once; anything else
(a member asking, a schedule beyond the tier's leave) goes to a platform admin."""

from django.db import migrations

RULES = [
    dict(
        position=4,
        name="sleep-owner-within-tier-auto-approve",
        outcome="auto_approve",
        condition='request.kind == "sleep" && request.sleep_within_tier '
        '&& request.requester_role == "owner"',
        description="An owner sets their namespace's sleep schedule as far as its tier allows.",
    ),
    dict(
        position=5,
        name="sleep-needs-platform-admin",
        outcome="require",
        approver_role="platform_admin",
        condition='request.kind == "sleep"',
        description="Any other sleep schedule (beyond what the tier lets owners set, or asked "
        "by someone else than an owner): a platform admin decides.",
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
    dependencies = [("tenants", "0036_showback_asleep")]
    operations = [migrations.RunPython(create_rules, remove_rules)]
