"""Claim every namespace name Berth already uses: live namespaces (by what they are for),
each Kargo project's and each tenant's Argo CD applications namespace, and every cluster's
platform namespaces. Names are read from the records where they exist; the two Berth
computes (Kargo, applications) with the naming these namespaces were created with. A name
two things already share keeps the first claim; the registry refuses such pairs from now on."""

import hashlib

from django.conf import settings
from django.db import migrations

# tenants.naming as it stood when these namespaces were named (a 6-character hash).
OLD_HASH_LENGTH = 6
DNS_LABEL_MAX = 63
PLATFORM = ("default", "kube-system", "kube-public", "kube-node-lease", "flux-system", "kargo")


def old_namespace_name(tenant, app, tier):
    full = f"{tenant}-{app}-{tier}"
    if len(full) <= DNS_LABEL_MAX:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:OLD_HASH_LENGTH]
    room = DNS_LABEL_MAX - len(tenant) - len(tier) - OLD_HASH_LENGTH - 3
    app_prefix = app[: max(room, 0)].rstrip("-")
    parts = [tenant, app_prefix, digest, tier] if app_prefix else [tenant, digest, tier]
    return "-".join(parts)[:DNS_LABEL_MAX]


def claim_existing(apps, schema_editor):
    Claim = apps.get_model("tenants", "NamespaceClaim")
    Cluster = apps.get_model("tenants", "Cluster")
    Namespace = apps.get_model("tenants", "Namespace")
    Project = apps.get_model("tenants", "Project")
    Environment = apps.get_model("tenants", "EphemeralEnvironment")
    taken = set(Claim.objects.filter(released_at__isnull=True).values_list("cluster_id", "name"))

    def claim(cluster_id, name, **owner):
        if (cluster_id, name) in taken:
            return
        taken.add((cluster_id, name))
        Claim.objects.create(cluster_id=cluster_id, name=name, **owner)

    for cluster in Cluster.objects.all():
        for name in (*PLATFORM, cluster.argocd_namespace, cluster.ingress_namespace):
            if name:
                claim(cluster.pk, name, purpose="platform")
        claim(cluster.pk, settings.BERTH_NAMESPACE, purpose="berth")

    live = Namespace.objects.exclude(state="decommissioned").select_related("tier", "project")
    for namespace in live:
        environment = Environment.objects.filter(namespace=namespace).order_by("pk").first()
        owner = {"tenant_id": namespace.tenant_id, "namespace_id": namespace.pk,
                 "request_id": namespace.request_id}
        if environment is not None and namespace.project_id is None:
            owner.update(purpose="shared")
        elif environment is not None and environment.owns_namespace:
            owner.update(purpose="ephemeral", app=environment.project.name,
                         environment=environment.slug)
        else:
            app = namespace.project.name if namespace.project_id else ""
            if not app and namespace.request_id:
                app = namespace.request.payload.get("app", "")
            owner.update(purpose="tier", app=app, tier=namespace.tier.slug)
        claim(namespace.cluster_id, namespace.name, **owner)

    for project in Project.objects.filter(gitops_engine="argocd_kargo").select_related("tenant"):
        clusters = set(Namespace.objects.filter(project=project).exclude(
            state="decommissioned").values_list("cluster_id", flat=True))
        for cluster_id in clusters:
            claim(cluster_id, old_namespace_name(project.tenant.slug, project.name, "kargo"),
                  purpose="kargo", tenant_id=project.tenant_id, app=project.name)

    Tenant = apps.get_model("tenants", "Tenant")
    for tenant in Tenant.objects.all():
        clusters = set(tenant.allowed_clusters.values_list("pk", flat=True))
        clusters |= set(Namespace.objects.filter(tenant=tenant).values_list("cluster_id",
                                                                              flat=True))
        for cluster_id in clusters:
            claim(cluster_id, f"{tenant.slug}-apps", purpose="argocd_apps", tenant_id=tenant.pk)


class Migration(migrations.Migration):
    dependencies = [("tenants", "0010_namespace_claims")]
    operations = [migrations.RunPython(claim_existing, migrations.RunPython.noop)]
