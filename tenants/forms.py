"""Web forms. They shape input for people; the rules live in tenants.payloads and the
services, which the REST API calls too, so the two cannot disagree."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.choices import (
    ApproverRole,
    GitOpsEngine,
    NamespaceState,
    PolicyOutcome,
    RequestKind,
)
from tenants.models import ApprovalRule, Namespace, Tenant
from tenants.payloads import APP_NAME_MAX
from tenants.policy import PolicyError, compile_condition

QUANTITY_HELP = "A Kubernetes quantity, e.g. 500m or 2 for CPU, 512Mi or 4Gi for memory."


class RequestForm(forms.Form):
    """Base for the per-kind forms; `payload()` is what the services validate."""

    kind: str = ""
    title: str = ""

    def __init__(self, *args: Any, tenant: Tenant, **kwargs: Any) -> None:
        self.tenant = tenant
        super().__init__(*args, **kwargs)

    def payload(self) -> dict[str, Any]:
        return {name: value for name, value in self.cleaned_data.items() if value not in ("", None)}

    def _tier_choices(self) -> list[tuple[str, str]]:
        return [(t.slug, t.name) for t in self.tenant.allowed_tiers.order_by("position")]

    def _cluster_choices(self) -> list[tuple[str, str]]:
        return [(c.name, c.display_name or c.name) for c in self.tenant.allowed_clusters.all()]

    def _live_namespaces(self) -> list[tuple[str, str]]:
        names = Namespace.objects.filter(
            tenant=self.tenant, state=NamespaceState.ACTIVE
        ).values_list("name", flat=True)
        return [(name, name) for name in names]


class QuotaFields(forms.Form):
    cpu = forms.CharField(label="CPU", max_length=20, initial="1", help_text=QUANTITY_HELP)
    memory = forms.CharField(max_length=20, initial="2Gi")
    storage = forms.CharField(max_length=20, initial="0Gi", required=False)


class NamespaceRequestForm(RequestForm, QuotaFields):
    kind = RequestKind.NAMESPACE
    title = "Request a namespace"
    app = forms.CharField(
        label="Application name", max_length=APP_NAME_MAX,
        help_text="Lower-case letters, digits and dashes. The namespace will be "
        "<tenant>-<app>-<tier>, shortened with a stable hash if that is over 63 characters.",
    )
    tier = forms.ChoiceField()
    cluster = forms.ChoiceField()
    field_order = ["app", "tier", "cluster", "cpu", "memory", "storage"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tier"].choices = self._tier_choices()
        self.fields["cluster"].choices = self._cluster_choices()


class ProjectRequestForm(RequestForm):
    kind = RequestKind.PROJECT
    title = "Request an application project"
    app = forms.CharField(label="Application name", max_length=APP_NAME_MAX)
    engine = forms.ChoiceField(label="GitOps engine", choices=GitOpsEngine.choices)
    cluster = forms.ChoiceField()
    tiers = forms.MultipleChoiceField(
        label="Environments", widget=forms.CheckboxSelectMultiple,
        help_text="One namespace per environment, promoted in this order.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = self._tier_choices()
        self.fields["tiers"].choices = choices
        self.fields["tiers"].initial = [s for s, _ in choices if s in ("dev", "staging", "prod")]
        self.fields["cluster"].choices = self._cluster_choices()
        self.fields["engine"].initial = self.tenant.gitops_engine


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
        self.fields["cluster"].choices = self._cluster_choices()


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


REQUEST_FORMS: dict[str, type[RequestForm]] = {
    form.kind: form
    for form in (NamespaceRequestForm, ProjectRequestForm, EnvironmentRequestForm,
                 QuotaChangeRequestForm, DecommissionRequestForm)
}


class RejectForm(forms.Form):
    reason = forms.CharField(
        max_length=2000, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Required: tell the requester what to change.",
    )


class ApproveForm(forms.Form):
    plan_digest = forms.CharField(max_length=64, widget=forms.HiddenInput)
    note = forms.CharField(max_length=2000, required=False,
                           widget=forms.Textarea(attrs={"rows": 2}))


class CommentForm(forms.Form):
    body = forms.CharField(label="Comment", max_length=4000,
                           widget=forms.Textarea(attrs={"rows": 3}))


class ApprovalRuleForm(forms.ModelForm):
    class Meta:
        model = ApprovalRule
        fields = ["position", "name", "description", "condition", "outcome",
                  "approvals_required", "approver_role", "message", "enabled"]
        widgets = {"condition": forms.Textarea(attrs={"rows": 3, "class": "code"})}

    def clean_condition(self) -> str:
        condition = self.cleaned_data["condition"]
        try:
            compile_condition(condition)
        except PolicyError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return condition

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("outcome") == PolicyOutcome.DENY and not cleaned.get("message"):
            self.add_error("message", "A deny rule needs a message telling people why.")
        if (cleaned.get("outcome") == PolicyOutcome.REQUIRE
                and cleaned.get("approver_role") not in ApproverRole.values):
            self.add_error("approver_role", "Choose who must approve.")
        return cleaned


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.replace("\n", ",").split(",") if item.strip()]


class TenantOnboardingForm(forms.Form):
    """Everything a new team needs, in one form for platform admins."""

    slug = forms.CharField(max_length=20, help_text="DNS label; every namespace starts with it.")
    name = forms.CharField(max_length=200)
    owner_groups = forms.CharField(required=False, help_text="Comma-separated OIDC groups.")
    member_groups = forms.CharField(required=False)
    viewer_groups = forms.CharField(required=False)
    repo_url = forms.CharField(label="GitOps repository URL", max_length=500, required=False,
                               help_text="https://, ssh:// or file://")
    branch = forms.CharField(max_length=200, initial="main")
    path = forms.CharField(label="Base path in the repository", max_length=300, required=False)
    credentials = forms.CharField(
        required=False, widget=forms.PasswordInput(render_value=False),
        help_text="HTTPS token or SSH deploy key; stored encrypted, never shown again.",
    )
    engine = forms.ChoiceField(label="GitOps engine", choices=GitOpsEngine.choices)
    cpu = forms.CharField(label="CPU budget", initial="8")
    memory = forms.CharField(label="Memory budget", initial="16Gi")
    storage = forms.CharField(label="Storage budget", initial="100Gi")
    namespaces = forms.IntegerField(label="Namespace budget", min_value=1, initial=10)
    clusters = forms.ModelMultipleChoiceField(
        queryset=None, widget=forms.CheckboxSelectMultiple, required=False
    )
    tiers = forms.ModelMultipleChoiceField(
        queryset=None, widget=forms.CheckboxSelectMultiple, required=False
    )
    allowed_domains = forms.CharField(required=False, help_text="Comma-separated DNS domains.")
    notify_emails = forms.CharField(required=False, help_text="Comma-separated addresses.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from tenants.models import Cluster, EnvironmentTier

        super().__init__(*args, **kwargs)
        self.fields["clusters"].queryset = Cluster.objects.all()
        self.fields["tiers"].queryset = EnvironmentTier.objects.all()

    def _quantity(self, field: str, convert) -> int:  # noqa: ANN001
        from tenants.quantities import QuantityError

        try:
            return convert(self.cleaned_data[field])
        except QuantityError as exc:
            raise forms.ValidationError({field: str(exc)}) from exc

    def clean(self) -> dict[str, Any]:
        from django.core.validators import validate_email

        from tenants import quantities

        cleaned = super().clean()
        if self.errors:
            return cleaned
        cleaned["budget"] = {
            "cpu_millis": self._quantity("cpu", quantities.cpu_to_millis),
            "memory_mib": self._quantity("memory", quantities.memory_to_mib),
            "storage_gib": self._quantity("storage", quantities.storage_to_gib),
            "namespaces": cleaned["namespaces"],
        }
        for address in _split(cleaned.get("notify_emails", "")):
            try:
                validate_email(address)
            except forms.ValidationError:
                self.add_error("notify_emails", f"{address} is not an e-mail address.")
        return cleaned

    def service_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "slug": data["slug"], "name": data["name"],
            "groups": {"owner": _split(data["owner_groups"]),
                       "member": _split(data["member_groups"]),
                       "viewer": _split(data["viewer_groups"])},
            "repo_url": data["repo_url"], "branch": data["branch"], "path": data["path"],
            "credentials": data["credentials"], "engine": data["engine"],
            "budget_limits": data["budget"], "clusters": list(data["clusters"]),
            "tiers": list(data["tiers"]), "allowed_domains": _split(data["allowed_domains"]),
            "notify_emails": _split(data["notify_emails"]),
        }
