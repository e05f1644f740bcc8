"""Onboarding a tenant in one form."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.choices import GitOpsEngine
from tenants.forms.base import Form


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.replace("\n", ",").split(",") if item.strip()]


class TenantOnboardingForm(Form):
    """Everything a new team needs, in one form for platform admins."""

    slug = forms.CharField(max_length=20, help_text="DNS label; every namespace starts with it.")
    name = forms.CharField(max_length=200)
    owner_groups = forms.CharField(required=False, help_text="Comma-separated OIDC groups.")
    member_groups = forms.CharField(required=False)
    viewer_groups = forms.CharField(required=False)
    repo_url = forms.CharField(
        label="GitOps repository URL",
        max_length=500,
        required=False,
        help_text="https://host/org/repo.git, ssh://git@host/org/repo.git or git@host:org/repo.git",
    )
    branch = forms.CharField(max_length=200, initial="main")
    path = forms.CharField(label="Base path in the repository", max_length=300, required=False)
    credentials = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="HTTPS token or SSH deploy key; stored encrypted, never shown again.",
    )
    known_hosts = forms.CharField(
        label="SSH known_hosts",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="For an SSH repository read by Flux: the host's key, as `ssh-keyscan <host>` "
        "prints it.",
    )
    engine = forms.ChoiceField(label="GitOps engine", choices=GitOpsEngine.choices)
    commit_url = forms.CharField(
        label="Commit link",
        max_length=500,
        required=False,
        help_text="The repository's page of one commit, with {sha} where the hash goes, e.g. "
        "https://forge.example/org/repo/commit/{sha}; commits are shown as links.",
    )
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

    def _quantity(self, field: str, convert) -> int:
        from tenants.quantities import QuantityError

        try:
            return convert(self.cleaned_data[field])
        except QuantityError as exc:
            raise forms.ValidationError({field: str(exc)}) from exc

    def clean(self) -> dict[str, Any]:
        from django.core.validators import validate_email

        from tenants import quantities
        from tenants.selectors.groups import groups_of_other_tenants
        from tenants.validators import GROUP_FIELDS, validate_tenant_groups

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
        try:
            validate_tenant_groups(
                {field: _split(cleaned[field]) for field in GROUP_FIELDS},
                others=groups_of_other_tenants(),
            )
        except forms.ValidationError as exc:
            self.add_error(None, exc)
        return cleaned

    @property
    def repository_warnings(self) -> list[str]:
        """What the chosen engine cannot read of the repository URL: said, not refused (a
        URL git reads is the tenant's to keep), before anyone approves a request."""
        from tenants.repository_readers import unreadable

        data = getattr(self, "cleaned_data", {})
        return unreadable(data.get("engine", ""), data.get("repo_url", ""))

    # The repository fields: the checks the API, the admin and Tenant.clean() make too.
    def clean_repo_url(self) -> str:
        from tenants.validators import validate_repo_url

        validate_repo_url(self.cleaned_data["repo_url"])
        return self.cleaned_data["repo_url"]

    def clean_branch(self) -> str:
        from tenants.validators import validate_branch

        validate_branch(self.cleaned_data["branch"])
        return self.cleaned_data["branch"]

    def clean_path(self) -> str:
        from tenants.validators import clean_repo_path

        return clean_repo_path(self.cleaned_data["path"])

    def clean_commit_url(self) -> str:
        from tenants.validators import validate_commit_url_template

        value = self.cleaned_data["commit_url"].strip()
        validate_commit_url_template(value)
        return value

    def service_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "slug": data["slug"],
            "name": data["name"],
            "groups": {
                "owner": _split(data["owner_groups"]),
                "member": _split(data["member_groups"]),
                "viewer": _split(data["viewer_groups"]),
            },
            "repo_url": data["repo_url"],
            "branch": data["branch"],
            "path": data["path"],
            "credentials": data["credentials"],
            "known_hosts": data["known_hosts"],
            "engine": data["engine"],
            "commit_url": data["commit_url"],
            "budget_limits": data["budget"],
            "clusters": list(data["clusters"]),
            "tiers": list(data["tiers"]),
            "allowed_domains": _split(data["allowed_domains"]),
            "notify_emails": _split(data["notify_emails"]),
        }
