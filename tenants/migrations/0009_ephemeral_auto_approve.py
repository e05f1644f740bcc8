"""Ephemeral environments within budget are approved without a person, whatever the tier's
slug: budgets are checked before any rule, and they expire by themselves."""

from django.db import migrations

RULES = [
    dict(position=15, name="ephemeral-environments-auto-approve", outcome="auto_approve",
         condition='request.kind == "ephemeral" && request.ephemeral',
         description="Review apps and other ephemeral environments within budget."),
]


def create_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    for rule in RULES:
        ApprovalRule.objects.get_or_create(name=rule["name"], defaults=rule)


def remove_rules(apps, schema_editor):
    ApprovalRule = apps.get_model("tenants", "ApprovalRule")
    ApprovalRule.objects.filter(name__in=[rule["name"] for rule in RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("tenants", "0008_ephemeral_environments")]
    operations = [migrations.RunPython(create_rules, remove_rules)]
