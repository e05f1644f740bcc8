"""Forms of requests: one per kind a person can ask for, and the decision forms of a
request's page (approve bound to a plan digest, reject with a reason, comment).
"""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.choices import GitOpsEngine, NamespaceState, RequestKind
from tenants.forms.base import Form
from tenants.models import Namespace, Tenant, User
from tenants.outlook import tier_outlook
from tenants.payloads import APP_NAME_MAX

QUANTITY_HELP = (
    "A Kubernetes quantity: CPU in whole millicores, e.g. 500m or 2 (at least 1m); "
    "memory in whole MiB, e.g. 512Mi or 4Gi (at least 1Mi)."
)


class RequestForm(Form):
    """Base for the per-kind forms; `payload()` is what the services validate."""

    kind: str = ""
    title: str = ""

    def __init__(
        self, *args: Any, tenant: Tenant, requester: User | None = None, **kwargs: Any
    ) -> None:
        self.tenant = tenant
        self.requester = requester
        super().__init__(*args, **kwargs)

    def payload(self) -> dict[str, Any]:
        return {name: value for name, value in self.cleaned_data.items() if value not in ("", None)}

    def _tier_choices(self) -> list[tuple[str, str]]:
        return [(t.slug, t.name) for t in self.tenant.allowed_tiers.order_by("position")]

    def _say_what_each_tier_implies(self, field: str) -> None:
        """Below a tier field, what a request for each of its tiers goes through as the
        approval rules and merge-request settings stand (tenants.outlook), for the person
        asking: that prod waits for a platform admin and a pull request, say."""
        if self.requester is None:
            return
        names = dict(self.fields[field].choices)
        tiers = self.tenant.allowed_tiers.filter(slug__in=list(names)).order_by("position")
        said = tier_outlook(
            tenant=self.tenant, requester=self.requester, kind=self.kind, tiers=tiers
        )
        self.fields[field].notes = [f"{names[slug]}: {words}" for slug, words in said.items()]
        if not self.fields[field].help_text:
            self.fields[field].help_text = "As the approval rules stand, a request for each tier:"

    def _first_permanent_tier(self) -> str | None:
        """What a tier field starts on: a namespace meant to stay, not a review app's."""
        return (
            self.tenant.allowed_tiers.filter(is_ephemeral=False)
            .order_by("position")
            .values_list("slug", flat=True)
            .first()
        )

    def _cluster_choices(self) -> list[tuple[str, str]]:
        return [(c.name, c.display_name or c.name) for c in self.tenant.allowed_clusters.all()]

    def _live_namespaces(self) -> list[tuple[str, str]]:
        names = Namespace.objects.filter(
            tenant=self.tenant, state=NamespaceState.ACTIVE
        ).values_list("name", flat=True)
        return [(name, name) for name in names]


class QuotaFields(Form):
    cpu = forms.CharField(label="CPU", max_length=20, initial="1", help_text=QUANTITY_HELP)
    memory = forms.CharField(max_length=20, initial="2Gi")
    storage = forms.CharField(max_length=20, initial="0Gi", required=False)


class NamespaceRequestForm(RequestForm, QuotaFields):
    kind = RequestKind.NAMESPACE
    title = "Request a namespace"
    app = forms.CharField(
        label="Application name",
        max_length=APP_NAME_MAX,
        help_text="Lower-case letters, digits and dashes. The namespace will be "
        "<tenant>-<app>-<tier>, shortened with a stable hash if that is over 63 characters.",
    )
    tier = forms.ChoiceField()
    cluster = forms.ChoiceField()
    field_order = ["app", "tier", "cluster", "cpu", "memory", "storage"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tier"].choices = self._tier_choices()
        self.fields["tier"].initial = self._first_permanent_tier()
        self.fields["cluster"].choices = self._cluster_choices()
        self._say_what_each_tier_implies("tier")


class ProjectRequestForm(RequestForm):
    kind = RequestKind.PROJECT
    title = "Request an application project"
    app = forms.CharField(label="Application name", max_length=APP_NAME_MAX)
    engine = forms.ChoiceField(label="GitOps engine", choices=GitOpsEngine.choices)
    cluster = forms.ChoiceField()
    tiers = forms.MultipleChoiceField(
        label="Environments",
        widget=forms.CheckboxSelectMultiple,
        help_text="One namespace per environment, promoted in this order. Tick more only "
        "when you need them; as the approval rules stand, a request for each:",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tiers"].choices = self._tier_choices()
        # The lowest tier only: staging and prod each bring their approvals to the request.
        first = self._first_permanent_tier()
        self.fields["tiers"].initial = [first] if first else []
        self.fields["cluster"].choices = self._cluster_choices()
        self.fields["engine"].initial = self.tenant.gitops_engine
        self._say_what_each_tier_implies("tiers")


class EnvironmentRequestForm(RequestForm, QuotaFields):
    kind = RequestKind.ENVIRONMENT
    title = "Add an environment to a project"
    project = forms.ChoiceField()
    tier = forms.ChoiceField()
    cluster = forms.ChoiceField()
    field_order = ["project", "tier", "cluster", "cpu", "memory", "storage"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [
            (p.name, p.name) for p in self.tenant.projects.order_by("name")
        ]
        self.fields["tier"].choices = self._tier_choices()
        self.fields["tier"].initial = self._first_permanent_tier()
        self.fields["cluster"].choices = self._cluster_choices()
        self._say_what_each_tier_implies("tier")


class QuotaChangeRequestForm(RequestForm, QuotaFields):
    kind = RequestKind.QUOTA_CHANGE
    title = "Change a namespace's quota"
    namespace = forms.ChoiceField()
    field_order = ["namespace", "cpu", "memory", "storage"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["namespace"].choices = self._live_namespaces()


class DecommissionRequestForm(RequestForm):
    kind = RequestKind.DECOMMISSION
    title = "Decommission a namespace"
    namespace = forms.ChoiceField()
    reason = forms.CharField(max_length=500, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["namespace"].choices = self._live_namespaces()


class ProjectDecommissionRequestForm(RequestForm):
    kind = RequestKind.PROJECT_DECOMMISSION
    title = "Decommission a project on a cluster"
    project = forms.ChoiceField()
    cluster = forms.ChoiceField()
    reason = forms.CharField(max_length=500, widget=forms.Textarea(attrs={"rows": 3}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [
            (p.name, p.name) for p in self.tenant.projects.order_by("name")
        ]
        self.fields["project"].help_text = (
            "Its namespaces there go, its GitOps files go (its roots prune what they "
            "deployed first), its Kargo project goes; the tenant's last project on the "
            "cluster takes the tenant's roots and credentials with it."
        )
        self.fields["cluster"].choices = self._cluster_choices()


class TenantDecommissionRequestForm(RequestForm):
    kind = RequestKind.TENANT_DECOMMISSION
    title = "Decommission the tenant on a cluster"
    cluster = forms.ChoiceField(
        help_text="Every namespace of the tenant there goes, with its GitOps files, Kargo "
        "projects, roots, AppProject and credentials."
    )
    reason = forms.CharField(max_length=500, widget=forms.Textarea(attrs={"rows": 3}))
    retire = forms.BooleanField(
        required=False,
        label="Retire the tenant once this cluster is cleaned",
        help_text="Only for its last cluster. A retired tenant takes no request and leaves "
        "its members' lists; its records and audit trail stay.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["cluster"].choices = self._cluster_choices()


TTL_HELP = "How long it lives, e.g. 30m, 2h or 3d; owners may extend it later."


def _ttl_label(tier) -> str:
    from django.conf import settings

    from tenants.quantities import seconds_to_duration

    default = tier.default_ttl or settings.BERTH_EPHEMERAL_DEFAULT_TTL
    longest = tier.max_ttl or settings.BERTH_EPHEMERAL_MAX_TTL
    return (
        f"{tier.name}: {seconds_to_duration(int(default.total_seconds()))} by default, "
        f"at most {seconds_to_duration(int(longest.total_seconds()))}"
    )


class EphemeralRequestForm(RequestForm):
    """A short-lived environment (a review app); the tenant's environment rules name its
    namespace (tenants.environment_rules), shown before submitting."""

    kind = RequestKind.EPHEMERAL
    title = "Start an ephemeral environment"
    project = forms.ChoiceField()
    env_slug = forms.CharField(
        label="Environment slug",
        max_length=63,
        help_text="As CI_ENVIRONMENT_SLUG, e.g. review-42: lower-case letters, digits, dashes.",
    )
    branch = forms.CharField(max_length=255, required=False)
    mr_id = forms.CharField(label="Merge request id", max_length=20, required=False)
    ttl = forms.CharField(
        label="Time to live",
        max_length=20,
        required=False,
        help_text=TTL_HELP + " Empty: the tier's default.",
    )
    tier = forms.ChoiceField()
    cluster = forms.ChoiceField(required=False)
    cpu = forms.CharField(
        label="CPU",
        max_length=20,
        required=False,
        help_text="Empty: the tier's default. " + QUANTITY_HELP,
    )
    memory = forms.CharField(max_length=20, required=False)
    storage = forms.CharField(max_length=20, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [
            (p.name, p.name) for p in self.tenant.projects.order_by("name")
        ]
        if not self.fields["project"].choices:
            self.fields["project"].help_text = "The tenant has no project yet: request one first."
        tiers = self.tenant.allowed_tiers.filter(is_ephemeral=True).order_by("position", "slug")
        self.fields["tier"].choices = [(t.slug, _ttl_label(t)) for t in tiers]
        self.fields["cluster"].choices = [
            ("", "Where the project's environments are"),
            *self._cluster_choices(),
        ]


REQUEST_FORMS: dict[str, type[RequestForm]] = {
    form.kind: form
    for form in (
        NamespaceRequestForm,
        ProjectRequestForm,
        EnvironmentRequestForm,
        QuotaChangeRequestForm,
        DecommissionRequestForm,
        EphemeralRequestForm,
        ProjectDecommissionRequestForm,
        TenantDecommissionRequestForm,
    )
}


class RejectForm(Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Required: tell the requester what to change.",
    )


class ApproveForm(Form):
    plan_digest = forms.CharField(max_length=64, widget=forms.HiddenInput)
    note = forms.CharField(
        max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


class _TickedRows(forms.MultipleChoiceField):
    """Ticked rows of a queue whose rows are not known in advance; parsed by the form."""

    def valid_value(self, value: str) -> bool:
        return True


class ApproveTogetherForm(Form):
    """The queue's bulk approval: rows ticked as "<request id>:<plan digest>"."""

    selected = _TickedRows(required=True)
    note = forms.CharField(max_length=2000, required=False, label="Note (optional)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["selected"].error_messages["required"] = "Select the requests to approve."

    def clean_selected(self) -> list[tuple[int, str]]:
        decisions: dict[int, str] = {}
        for value in self.cleaned_data["selected"]:
            request_id, _, digest = value.partition(":")
            if not request_id.isdigit() or len(request_id) > 12 or not digest or len(digest) > 64:
                raise forms.ValidationError("A selected row did not say which plan it approves.")
            decisions[int(request_id)] = digest
        return sorted(decisions.items())


class CommentForm(Form):
    body = forms.CharField(
        label="Comment", max_length=4000, widget=forms.Textarea(attrs={"rows": 3})
    )
