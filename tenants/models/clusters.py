"""The clusters Berth provisions onto: how it reaches each, and what its quota costs there."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models
from django.utils import timezone

from tenants.choices import ClusterAuth, GuardrailsMode
from tenants.fields import EncryptedTextField
from tenants.pricing import PRICE_FIELDS, price_problems
from tenants.validators import validate_dns_label

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}


def _endpoint(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = "loopback" if host in _LOOPBACK else host
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: URLValidator says so
        port = 0
    return host, port


def points_at_berth(url: str) -> bool:
    """Whether `url` is Berth's own web address: a cluster there would have Berth send its
    credentials to itself."""
    if _endpoint(url) == _endpoint(settings.BERTH_BASE_URL):
        return True
    host, port = _endpoint(url)
    named = {
        name.lower()
        for name in settings.ALLOWED_HOSTS
        if name not in _LOOPBACK and not name.startswith(".") and name != "*"
    }
    return host in named and port in (80, 443)


class Cluster(models.Model):
    """A target cluster and how Berth reaches it."""

    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    display_name = models.CharField(max_length=200, blank=True)
    api_url = models.CharField(
        "API server URL",
        max_length=500,
        blank=True,
        validators=[URLValidator(schemes=["http", "https"])],
    )
    auth_method = models.CharField(
        max_length=20, choices=ClusterAuth.choices, default=ClusterAuth.TOKEN
    )
    credentials = EncryptedTextField(
        blank=True, help_text="Bearer token or kubeconfig, per the auth method; encrypted at rest."
    )
    ca_certificate = models.TextField("CA certificate (PEM)", blank=True)
    argocd_namespace = models.CharField(
        max_length=63, default="argocd", blank=True, validators=[validate_dns_label]
    )
    argocd_url = models.URLField(
        "Argo CD URL",
        blank=True,
        validators=[URLValidator(schemes=["https", "http"])],
        help_text="Where people open this cluster's Argo CD (https://argocd.example.com): "
        "Backstage's catalog links each namespace to its Application there.",
    )
    has_kargo = models.BooleanField(default=False)
    has_flux = models.BooleanField(default=False)
    # Found by Berth (provisioning.jobs.discovery.discover_hibernation): kube-green's
    # SleepInfo is served here, so namespaces sleep through it rather than by Berth.
    has_kube_green = models.BooleanField(
        "kube-green", default=False, help_text="Found by Berth: kube-green's SleepInfo is served."
    )
    ingress_namespace = models.CharField(
        max_length=63,
        default="ingress-nginx",
        validators=[validate_dns_label],
        help_text="Namespace of the ingress controller whose traffic tenants' namespaces accept.",
    )
    plan_only = models.BooleanField(
        default=False, help_text="Render plans for this cluster but never apply them."
    )
    is_sandbox = models.BooleanField(
        default=False, help_text="A local Kubernetes API stand-in, for development."
    )
    argocd_repository_secrets = models.BooleanField(
        "writes Argo CD repository Secrets",
        default=True,
        help_text="Berth writes each tenant's repository credential into Argo CD's namespace "
        "(scoped to the tenant's AppProject). That needs write access to Secrets there (the "
        "chart's rbac.argocdRepositorySecrets); off: register tenants' repositories in Argo CD "
        "yourself.",
    )
    argocd_impersonation = models.BooleanField(
        "Argo CD impersonation",
        default=False,
        help_text="Argo CD here (2.13 or later) has application.sync.impersonation.enabled: "
        "tenants' syncs run as each namespace's berth-gitops ServiceAccount.",
    )
    guardrails = models.CharField(
        max_length=20,
        choices=GuardrailsMode.choices,
        default=GuardrailsMode.BERTH,
        help_text="Berth's: tenant namespaces are provisioned only once Berth's admission "
        "policies and tenant roles are installed and current here. The platform's own: "
        "you fence tenants with your own admission control, and Berth does not check it.",
    )
    # What "Install guardrails" last put here: the digest of those objects, and when.
    guardrails_digest = models.CharField(max_length=64, blank=True)
    guardrails_installed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.api_url and points_at_berth(self.api_url):
            raise ValidationError(
                {
                    "api_url": (
                        f"{self.api_url} is Berth's own address ({settings.BERTH_BASE_URL}), not a "
                        "Kubernetes API server."
                    )
                }
            )


class ClusterPrice(models.Model):
    """What a unit of allocated quota costs on one cluster from `effective_from` until the
    cluster's next prices (showback, tenants.charging): set by platform admins, from now or
    a later date, never backwards, so a month already counted never moves."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="prices")
    effective_from = models.DateTimeField()
    currency = models.CharField(max_length=3, default="EUR")
    cpu_core_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    memory_gib_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    storage_gib_month = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    namespace_month = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    # A sleeping namespace's compute (hibernation): its quota is held, nothing runs.
    asleep_cpu_core_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    asleep_memory_gib_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "effective_from"], name="one_price_list_per_cluster_and_start"
            )
        ]
        ordering = ["cluster", "effective_from"]

    def __str__(self) -> str:
        return f"prices on {self.cluster} from {self.effective_from:%Y-%m-%d %H:%M}"

    def clean(self) -> None:
        problems = price_problems(
            {name: getattr(self, name) for name in [*PRICE_FIELDS, "currency"]}
        )
        if self.effective_from and self.effective_from < timezone.now():
            problems["effective_from"] = (
                "Prices apply from now or a later date, never backwards: add new prices "
                "rather than change those already in force."
            )
        if problems:
            raise ValidationError(problems)
