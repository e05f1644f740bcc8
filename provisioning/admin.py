"""Admin pages of what the provisioner owns: the commits it pushed, and the clusters it talks to
(registered here, beside the engine, because their actions call the cluster)."""

from django.contrib import admin, messages
from django.db import transaction
from django.utils.html import format_html

from provisioning import tasks
from provisioning.bootstrap import install_change
from provisioning.jobs import cluster_client, discover_namespaces
from provisioning.kube import KubeError
from provisioning.models import GitCommit
from tenants.choices import NamePurpose
from tenants.forms.secrets import WriteOnlySecretForm
from tenants.models import Cluster
from tenants.name_registry import name_problem
from tenants.queue import enqueue
from tenants.selectors.guardrails import guardrails_state
from tenants.services.clusters import register_platform_namespaces
from tenants.signals import cluster_registered


class ClusterForm(WriteOnlySecretForm):
    secret_fields = ("credentials",)

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk:  # a new cluster's names are all free
            for field in ("argocd_namespace", "ingress_namespace"):
                name = cleaned.get(field)
                problem = name and name_problem(
                    self.instance, name, purpose=NamePurpose.PLATFORM, tenant=None
                )
                if problem:
                    self.add_error(field, problem)
        return cleaned


@admin.register(GitCommit)
class GitCommitAdmin(admin.ModelAdmin):
    """What Berth pushed to tenants' repositories: a record, never edited by hand."""

    list_display = ("sha", "branch", "repo_url", "request", "pushes", "created_at")
    list_filter = ("branch",)
    search_fields = ("sha", "repo_url", "message")
    raw_id_fields = ("request",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    form = ClusterForm
    list_display = (
        "name",
        "api_url",
        "auth_method",
        "plan_only",
        "is_sandbox",
        "argocd_impersonation",
        "guardrails_column",
    )
    actions = ["test_connection", "install_guardrails", "claim_found_namespaces"]
    readonly_fields = ("guardrails_digest", "guardrails_installed_at", "guardrails_change")

    @admin.display(description="Guardrails")
    def guardrails_column(self, cluster: Cluster) -> str:
        return guardrails_state(cluster)

    @admin.display(description="What installing guardrails would change")
    def guardrails_change(self, cluster: Cluster) -> str:
        """Read off the cluster when the page opens, so an install is decided on its diff
        (the action "Install guardrails" on the list applies it)."""
        if not cluster.pk or cluster.plan_only:
            return (
                "Nothing: nothing is ever applied to a plan-only cluster."
                if cluster.plan_only
                else "—"
            )
        try:
            diff = install_change(cluster)
        except KubeError as error:
            return f"The cluster could not be read: {error.message}"
        return (
            format_html('<pre class="diff">{}</pre>', diff)
            if diff
            else "Nothing: the guardrails there are current."
        )

    def save_model(self, request, obj, form, change):
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            register_platform_namespaces(obj)
            if not change or "api_url" in form.changed_data:
                cluster_id = obj.pk
                transaction.on_commit(
                    lambda: cluster_registered.send(sender=Cluster, cluster_id=cluster_id)
                )

    @admin.action(description="Test connection to the selected clusters")
    def test_connection(self, request, queryset):
        for cluster in queryset:
            try:
                version = cluster_client(cluster).version()
            except KubeError as error:
                self.message_user(request, f"{cluster.name}: {error.message}", level=messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"{cluster.name}: connected, Kubernetes {version}",
                    level=messages.SUCCESS,
                )

    @admin.action(description="Claim the namespaces already on the selected clusters")
    def claim_found_namespaces(self, request, queryset):
        for cluster in queryset:
            try:
                claimed = discover_namespaces(cluster)
            except KubeError as error:
                self.message_user(request, f"{cluster.name}: {error.message}", level=messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"{cluster.name}: {len(claimed)} namespace(s) claimed as found "
                    f"on the cluster{': ' + ', '.join(claimed) if claimed else ''}.",
                    level=messages.SUCCESS,
                )

    @admin.action(description="Install guardrails (Berth's tenant roles and admission policies)")
    def install_guardrails(self, request, queryset):
        """A worker installs them (tasks.install_guardrails): the Guardrails column says when
        they are current, the audit log what was applied or why not."""
        for cluster in queryset:
            if cluster.plan_only:
                self.message_user(
                    request,
                    f"{cluster.name} is plan-only: nothing is ever applied to it",
                    level=messages.ERROR,
                )
            elif enqueue(tasks.install_guardrails, cluster.pk, request.user.pk):
                self.message_user(
                    request,
                    f"{cluster.name}: guardrail install queued; a worker applies "
                    "them (the Guardrails column shows when they are current; installing "
                    "needs rights to create ClusterRoles and admission policies, see "
                    "docs/guardrails.md).",
                    level=messages.SUCCESS,
                )
            else:
                self.message_user(
                    request,
                    f"{cluster.name}: the install was not queued: the "
                    "task queue is unreachable. Try again once it is back.",
                    level=messages.ERROR,
                )
