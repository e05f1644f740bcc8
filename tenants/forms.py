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


TTL_HELP = "How long it lives, e.g. 30m, 2h or 3d; owners may extend it later."


def _ttl_label(tier) -> str:  # noqa: ANN001 - EnvironmentTier
    from django.conf import settings

    from tenants.quantities import seconds_to_duration

    default = tier.default_ttl or settings.BERTH_EPHEMERAL_DEFAULT_TTL
    longest = tier.max_ttl or settings.BERTH_EPHEMERAL_MAX_TTL
    return (f"{tier.name}: {seconds_to_duration(int(default.total_seconds()))} by default, "
            f"at most {seconds_to_duration(int(longest.total_seconds()))}")


class EphemeralRequestForm(RequestForm):
    """A short-lived environment (a review app); the tenant's environment rules name its
    namespace (tenants.environment_rules), shown before submitting."""

    kind = RequestKind.EPHEMERAL
    title = "Start an ephemeral environment"
    project = forms.ChoiceField()
    env_slug = forms.CharField(
        label="Environment slug", max_length=63,
        help_text="As CI_ENVIRONMENT_SLUG, e.g. review-42: lower-case letters, digits, dashes.",
    )
    branch = forms.CharField(max_length=255, required=False)
    mr_id = forms.CharField(label="Merge request id", max_length=20, required=False)
    ttl = forms.CharField(label="Time to live", max_length=20, required=False,
                          help_text=TTL_HELP + " Empty: the tier's default.")
    tier = forms.ChoiceField()
    cluster = forms.ChoiceField(required=False)
    cpu = forms.CharField(label="CPU", max_length=20, required=False,
                          help_text="Empty: the tier's default. " + QUANTITY_HELP)
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
            ("", "Where the project's environments are"), *self._cluster_choices()
        ]


REQUEST_FORMS: dict[str, type[RequestForm]] = {
    form.kind: form
    for form in (NamespaceRequestForm, ProjectRequestForm, EnvironmentRequestForm,
                 QuotaChangeRequestForm, DecommissionRequestForm, EphemeralRequestForm)
}


# --- ephemeral environments -------------------------------------------------------------------


class ExtendEnvironmentForm(forms.Form):
    ttl = forms.CharField(label="Live for", max_length=20,
                          help_text="From now, e.g. 30m, 2h or 3d; never past its maximum.")

    def clean_ttl(self) -> int:
        """The TTL in seconds."""
        from tenants.quantities import QuantityError, ttl_to_seconds

        try:
            return ttl_to_seconds(self.cleaned_data["ttl"])
        except QuantityError as exc:
            raise forms.ValidationError(str(exc)) from exc


class EndEnvironmentForm(forms.Form):
    reason = forms.CharField(max_length=500, required=False,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Optional; recorded with its end request.")


RULE_KEYS = ("if", "namespace", "refuse", "message")


def rules_to_yaml(rules: list[Any]) -> str:
    """EnvironmentRule rows as the YAML the rules editor takes (GitLab `rules:` style)."""
    import yaml

    rows = []
    for rule in rules:
        row: dict[str, Any] = {}
        if rule.condition:
            row["if"] = rule.condition
        if rule.refuse:
            row["refuse"] = True
        else:
            row["namespace"] = rule.namespace_template
        if rule.message:
            row["message"] = rule.message
        rows.append(row)
    if not rows:
        return ""
    return yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=1000)


class EnvironmentRulesForm(forms.Form):
    """The tenant's environment rules as YAML; the service checks each rule's meaning."""

    rules = forms.CharField(
        label="Rules (YAML)", required=False, strip=False,
        widget=forms.Textarea(attrs={"rows": 12, "class": "code", "spellcheck": "false"}),
        help_text="A list; each rule has if, namespace, refuse and message. Empty: every "
        "environment gets the default template.",
    )

    def clean_rules(self) -> list[dict[str, Any]]:
        import yaml

        text = self.cleaned_data["rules"]
        try:
            parsed = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise forms.ValidationError(f"This is not valid YAML{where}: {problem}.") from exc
        if parsed is None:
            return []
        if not isinstance(parsed, list):
            raise forms.ValidationError(
                "The rules must be a YAML list: start each rule with '- ', as in GitLab's rules:."
            )
        problems, rules = [], []
        for number, entry in enumerate(parsed, start=1):
            if not isinstance(entry, dict):
                problems.append(f"Rule {number}: a rule is a mapping of if, namespace, refuse "
                                f"and message, not {yaml.safe_dump(entry).strip()[:60]!r}.")
                continue
            unknown = [str(key) for key in entry if key not in RULE_KEYS]
            if unknown:
                hint = (" (for GitLab's when: never, write refuse: true)"
                        if "when" in unknown else "")
                problems.append(f"Rule {number}: unknown key {', '.join(unknown)}{hint}; a rule "
                                f"may have {', '.join(RULE_KEYS)}.")
                continue
            if "refuse" in entry and not isinstance(entry["refuse"], bool):
                problems.append(f"Rule {number}: refuse is true or false.")
                continue
            rule = {key: entry[key] for key in RULE_KEYS if key in entry}
            if isinstance(rule.get("if"), bool):  # `if: true` reads as a YAML boolean
                rule["if"] = "true" if rule["if"] else "false"
            for key in ("if", "namespace", "message"):
                if rule.get(key) is not None and not isinstance(rule[key], str):
                    problems.append(f"Rule {number}: {key} must be text.")
            rules.append(rule)
        if problems:
            raise forms.ValidationError(problems)
        return rules


class TryEnvironmentRulesForm(forms.Form):
    """Variables of an imagined environment, to see which rule it meets (nothing is saved)."""

    project = forms.CharField(max_length=63, required=False)
    env_slug = forms.CharField(label="Environment slug", max_length=63, required=False)
    branch = forms.CharField(max_length=255, required=False)
    mr_id = forms.CharField(label="Merge request id", max_length=20, required=False)

    def variables(self) -> dict[str, str]:
        data = self.cleaned_data if self.is_valid() else {}
        return {name: data.get(name) or "" for name in self.fields}


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
