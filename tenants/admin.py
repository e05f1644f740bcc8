from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.utils import timezone

from tenants.choices import NamespaceState, SleepMode
from tenants.client_address import client_ip
from tenants.egress import forge_url_problem, webhook_url_problem
from tenants.forms.secrets import WriteOnlySecretForm
from tenants.models import (
    Allocation,
    Approval,
    AuditEvent,
    ClusterPrice,
    EnvironmentTier,
    Membership,
    MonthlyCharge,
    Namespace,
    NamespaceClaim,
    Project,
    Request,
    Run,
    Tenant,
    User,
)
from tenants.name_registry import name_problem
from tenants.selectors.groups import groups_of_other_tenants
from tenants.services.access import end_unentitled_grants
from tenants.services.definitions import current_tier_revision
from tenants.services.deploy_tokens import end_unentitled_deploy_tokens
from tenants.services.names import claim_tenant_names, tenant_names
from tenants.services.onboarding import SYNCED_FIELDS, emptied_roles, request_tenant_sync
from tenants.services.prices import FIELDS as PRICE_FIELDS
from tenants.services.prices import set_cluster_prices
from tenants.services.sleep import settle_sleep_soon
from tenants.tasks import REPOSITORY_FIELDS, request_repository_check
from tenants.validators import (
    GROUP_FIELDS,
    clean_repo_path,
    validate_branch,
    validate_repo_url,
    validate_tenant_groups,
)


class TenantForm(WriteOnlySecretForm):
    secret_fields = ("gitops_credentials", "forge_token", "forge_webhook_secret")
    confirm_removals = forms.BooleanField(
        required=False,
        label="Yes, remove everyone in the emptied roles",
        help_text="Needed when a change empties a role's groups while people hold that role.",
    )

    def clean_webhook_url(self) -> str:
        url = self.cleaned_data.get("webhook_url", "")
        problem = webhook_url_problem(url)
        if problem:
            raise forms.ValidationError(problem)
        return url.strip()

    def clean_forge_api_url(self) -> str:
        url = self.cleaned_data.get("forge_api_url", "")
        problem = forge_url_problem(url)
        if problem:
            raise forms.ValidationError(problem)
        return url.strip()

    # The repository fields: the checks the onboarding form, the API and Tenant.clean() make.
    def clean_gitops_repo_url(self) -> str:
        validate_repo_url(self.cleaned_data["gitops_repo_url"])
        return self.cleaned_data["gitops_repo_url"]

    def clean_gitops_branch(self) -> str:
        validate_branch(self.cleaned_data["gitops_branch"])
        return self.cleaned_data["gitops_branch"]

    def clean_gitops_path(self) -> str:
        return clean_repo_path(self.cleaned_data["gitops_path"])

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk and not cleaned.get("confirm_removals"):
            roles = [f"{role}_groups" for role in ("owner", "member", "viewer")]
            emptied = emptied_roles(
                self.instance, {field: cleaned[field] for field in roles if field in cleaned}
            )
            for field, people in emptied.items():
                self.add_error(
                    field,
                    f"This removes every {field.removesuffix('_groups')}: "
                    f"{people} people lose the role at their next sign-in. Tick the "
                    "confirmation below to do it.",
                )
        slug = cleaned.get("slug") or self.instance.slug
        for cluster in cleaned.get("allowed_clusters") or ():
            for name, purpose in (tenant_names(slug) if slug else {}).items():
                problem = name_problem(
                    cluster,
                    name,
                    purpose=purpose,
                    tenant=self.instance if self.instance.pk else None,
                )
                if problem:
                    self.add_error("allowed_clusters", problem)
        groups = {field: cleaned[field] for field in GROUP_FIELDS if field in cleaned}
        try:
            validate_tenant_groups(
                groups, others=groups_of_other_tenants(self.instance if self.instance.pk else None)
            )
        except forms.ValidationError as exc:
            self.add_error(None, exc)
        return cleaned


@admin.register(User)
class BerthUserAdmin(UserAdmin):
    fieldsets = (
        *UserAdmin.fieldsets,
        ("Identity provider", {"fields": ("oidc_subject", "is_platform_admin")}),
    )
    list_display = ("username", "email", "oidc_subject", "is_platform_admin", "is_superuser")


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    form = TenantForm
    list_display = ("slug", "name", "gitops_repo_url", "budget_namespaces")
    search_fields = ("slug", "name")
    filter_horizontal = ("allowed_clusters", "allowed_tiers")
    inlines = [MembershipInline]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        for cluster in form.instance.allowed_clusters.all():
            claim_tenant_names(form.instance, cluster)
        if not change or REPOSITORY_FIELDS & set(form.changed_data):
            request_repository_check(form.instance)  # a worker answers; the page shows it
        changed = sorted(SYNCED_FIELDS & set(form.changed_data))
        if changed or not change:
            reason = (
                f"Tenant changed in the admin: {', '.join(changed)}."
                if change
                else f"Tenant {form.instance.slug} added in the admin."
            )
            made = request_tenant_sync(tenant=form.instance, actor=request.user, reason=reason)
            if made:
                self.message_user(
                    request,
                    "Its objects on "
                    + ", ".join(r.payload["cluster"] for r in made)
                    + " follow in requests "
                    + ", ".join(f"#{r.pk}" for r in made)
                    + ".",
                )


OFFERED_ROLE_FIELDS = {
    "owner_cluster_role",
    "member_cluster_role",
    "viewer_cluster_role",
    "elevated_role",
    "elevated_cluster_role",
}


# A tier's schedule: what its namespaces follow unless they have their own.
SLEEP_SCHEDULE_FIELDS = (
    "sleep_weekdays",
    "sleep_at",
    "wake_at",
    "sleep_time_zone",
    "sleep_after_idle_hours",
)
HIBERNATION_FIELDS = (*SLEEP_SCHEDULE_FIELDS, "sleep_owner_choice", "wake_max_hours")


@admin.register(EnvironmentTier)
class EnvironmentTierAdmin(admin.ModelAdmin):
    list_display = (
        "slug",
        "name",
        "pod_security_level",
        "is_ephemeral",
        "changes_by_pull_request",
    )

    def get_fieldsets(self, request, obj=None):
        rest = [name for name in self.get_fields(request, obj) if name not in HIBERNATION_FIELDS]
        return [
            (None, {"fields": rest}),
            (
                "Hibernation",
                {
                    "fields": HIBERNATION_FIELDS,
                    "description": "The sleep schedule of this tier's namespaces, unless one "
                    "has its own (blank days: they never sleep); what their owners may change "
                    "of it without a platform admin; how long Wake now lasts at most. A "
                    "changed schedule is followed at once.",
                },
            ),
        ]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and set(SLEEP_SCHEDULE_FIELDS) & set(form.changed_data):
            # Its namespaces that follow it sleep or wake as it now says, once this commits.
            following = list(
                obj.namespaces.filter(
                    state=NamespaceState.ACTIVE, sleep_mode=SleepMode.TIER
                ).values_list("pk", flat=True)
            )
            for namespace_id in following:
                settle_sleep_soon(namespace_id)
            if following:
                self.message_user(
                    request,
                    f"{len(following)} namespace(s) of {obj.slug} follow its new sleep "
                    "schedule now.",
                )
        if change and {"deploy_tokens_allowed", "member_cluster_role"} & set(form.changed_data):
            # Tokens no longer allowed, or bound to a member role the tier no longer gives.
            ended = end_unentitled_deploy_tokens(tier=obj)
            if ended:
                self.message_user(
                    request, f"{len(ended)} live deploy token(s) of {obj.slug} revoked."
                )
        # A grant bound to a ClusterRole the tier no longer offers ends with it, now.
        if change and set(form.changed_data) & OFFERED_ROLE_FIELDS:
            ended = end_unentitled_grants(tier=obj)
            if ended:
                self.message_user(request, f"{len(ended)} access grant(s) of {obj.slug} ended.")
        known = obj.revisions.count()
        revision = current_tier_revision(tier=obj)
        if change and revision.number > known:
            self.message_user(
                request,
                f"Tier {obj.slug} is now at definition v{revision.number}. "
                "Namespaces made under earlier versions keep them until an "
                "upgrade campaign rolls this one out (Upgrades).",
            )


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "tenant", "gitops_engine")
    list_select_related = ("tenant",)


@admin.register(Namespace)
class NamespaceAdmin(admin.ModelAdmin):
    list_display = ("name", "tenant", "tier", "cluster", "state", "expires_at")
    list_filter = ("state", "tier", "cluster")
    list_select_related = ("tenant", "tier", "cluster")
    search_fields = ("name",)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows only Berth's services write: shown here, never added or edited by hand."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class UndeletableAdmin(ReadOnlyAdmin):
    """Records kept for good: not even deleted by hand."""

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ApprovalInline(admin.TabularInline):
    model = Approval
    extra = 0
    can_delete = False
    readonly_fields = ("approver", "decision", "reason", "plan_digest", "created_at")

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Request)
class RequestAdmin(ReadOnlyAdmin):
    """Read-only: states change through the workflow's services, never by editing a row."""

    list_display = ("id", "kind", "tenant", "requester", "state", "created_at")
    list_filter = ("state", "kind", "tenant")
    list_select_related = ("tenant", "requester")
    inlines = [ApprovalInline]


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ("id", "request", "state", "attempts", "started_at", "finished_at")
    list_filter = ("state",)


@admin.register(AuditEvent)
class AuditEventAdmin(UndeletableAdmin):
    list_display = ("created_at", "actor_label", "action", "object_type", "object_id", "source_ip")
    list_filter = ("action", "object_type")
    search_fields = ("actor_label", "object_id", "object_repr")


@admin.register(NamespaceClaim)
class NamespaceClaimAdmin(UndeletableAdmin):
    """The namespace registry: read here, written only by Berth's services (a claim changed
    by hand could hand a name to the wrong owner)."""

    list_display = (
        "name",
        "cluster",
        "purpose",
        "tenant",
        "app",
        "tier",
        "environment",
        "request",
        "released_at",
    )
    list_filter = ("purpose", "cluster")
    search_fields = ("name", "app")
    list_select_related = ("cluster", "tenant")


@admin.register(ClusterPrice)
class ClusterPriceAdmin(admin.ModelAdmin):
    """Showback prices per cluster (platform admins); checked by ClusterPrice.clean, saved
    and audited by the service the API uses."""

    # The fields the service saves, and nothing else: the admin edits what it audits.
    list_display = ("cluster", "effective_from", *PRICE_FIELDS, "updated_at")
    list_filter = ("cluster",)
    fields = ("cluster", "effective_from", *PRICE_FIELDS)

    def get_changeform_initial_data(self, request) -> dict:
        return {"effective_from": timezone.now(), **super().get_changeform_initial_data(request)}

    def save_model(self, request, obj, form, change) -> None:
        saved = set_cluster_prices(
            actor=request.user,
            cluster=obj.cluster,
            values={name: getattr(obj, name) for name in PRICE_FIELDS},
            effective_from=max(obj.effective_from, timezone.now()),
            source_ip=client_ip(request),
        )
        obj.pk = saved.pk


@admin.register(Allocation)
class AllocationAdmin(UndeletableAdmin):
    """Showback's history: what each namespace held, from when to when."""

    list_display = ("namespace", "tenant", "cluster", "cpu_millis", "memory_mib", "storage_gib")
    list_display += ("started_at", "started_by", "ended_at", "ended_by")
    list_filter = ("cluster", "started_by", "ended_by")
    search_fields = ("namespace__name", "tenant__slug")
    list_select_related = ("namespace", "tenant", "cluster")


@admin.register(MonthlyCharge)
class MonthlyChargeAdmin(UndeletableAdmin):
    """Closed months' rows: never changed; corrections are adjustments (API)."""

    list_display = ("month", "kind", "tenant", "namespace_name", "cluster_name", "currency")
    list_display += ("cost", "charged_from", "charged_until", "note")
    list_filter = ("month", "kind", "currency")
    search_fields = ("namespace_name", "tenant__slug", "note")
    list_select_related = ("tenant",)
