# Tiers bind Berth's own ClusterRoles (provisioning.guardrails) instead of Kubernetes' edit
# and view, which let a team delete its default-deny NetworkPolicy; clusters say whether
# their Argo CD impersonates the tenant's GitOps ServiceAccount.

from django.db import migrations, models

# The old defaults and what replaces them. Only tiers still on exactly these names move:
# a tier an admin pointed at some other ClusterRole keeps it.
RENAMED = {"edit": "berth-tenant-edit", "view": "berth-tenant-view"}
ROLE_FIELDS = ("owner_cluster_role", "member_cluster_role", "viewer_cluster_role")


def _rename(apps, mapping):
    EnvironmentTier = apps.get_model("tenants", "EnvironmentTier")
    for field in ROLE_FIELDS:
        for old, new in mapping.items():
            EnvironmentTier.objects.filter(**{field: old}).update(**{field: new})


def forwards(apps, schema_editor):
    _rename(apps, RENAMED)


def backwards(apps, schema_editor):
    _rename(apps, {new: old for old, new in RENAMED.items()})


class Migration(migrations.Migration):

    dependencies = [
        ("tenants", "0006_apitoken"),
    ]

    operations = [
        migrations.AddField(
            model_name="cluster",
            name="argocd_impersonation",
            field=models.BooleanField(
                default=False,
                help_text="Argo CD here (2.13 or later) has "
                "application.sync.impersonation.enabled: "
                "tenants' syncs run as each namespace's berth-gitops ServiceAccount.",
                verbose_name="Argo CD impersonation",
            ),
        ),
        migrations.AlterField(
            model_name="environmenttier",
            name="member_cluster_role",
            field=models.CharField(default="berth-tenant-edit", max_length=100),
        ),
        migrations.AlterField(
            model_name="environmenttier",
            name="owner_cluster_role",
            field=models.CharField(default="berth-tenant-edit", max_length=100),
        ),
        migrations.AlterField(
            model_name="environmenttier",
            name="viewer_cluster_role",
            field=models.CharField(default="berth-tenant-view", max_length=100),
        ),
        migrations.RunPython(forwards, backwards),
    ]
