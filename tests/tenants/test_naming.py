import re

import pytest
from django.core.exceptions import ValidationError

from tenants.models import Cluster, Tenant
from tenants.naming import namespace_name, platform_names, reserved_coverage, was_truncated
from tenants.validators import validate_dns_label


def test_short_names_are_tenant_app_tier():
    assert namespace_name("payments", "checkout", "prod") == "payments-checkout-prod"
    assert not was_truncated("payments", "checkout", "prod")


def test_long_names_are_truncated_to_63_with_a_stable_hash_keeping_tenant_and_tier():
    app = "a-very-long-application-name-for-the-quarterly-reporting"
    name = namespace_name("payments", app, "staging")

    assert len(name) <= 63
    assert name.startswith("payments-a-very-long-application")
    assert name.endswith("-staging")
    # 48 bits of the full name's SHA-256 just before the tier.
    assert re.fullmatch(r"[0-9a-f]{12}", name.split("-")[-2])
    assert name == namespace_name("payments", app, "staging")  # deterministic
    validate_dns_label(name)
    assert was_truncated("payments", app, "staging")


def test_long_names_that_share_a_prefix_still_differ():
    base = "reporting-service-for-the-finance-department-"
    first = namespace_name("payments", base + "eu", "dev")
    second = namespace_name("payments", base + "us", "dev")
    assert first != second
    assert len(first) <= 63 and len(second) <= 63


def test_truncation_never_leaves_a_dash_before_the_hash():
    # The cut falls right after a dash in the app name.
    name = namespace_name("tenant-with-long-slug", "ab-" + "c" * 40, "review")
    assert "--" not in name
    validate_dns_label(name)


def test_tenant_slug_that_extends_another_with_a_dash_is_refused(db):
    Tenant.objects.create(slug="pay", name="Pay")
    with pytest.raises(ValidationError, match="share a namespace prefix"):
        Tenant(slug="pay-eu", name="Pay EU").clean()


def test_tenant_slug_that_another_extends_is_refused(db):
    Tenant.objects.create(slug="pay-eu", name="Pay EU")
    with pytest.raises(ValidationError, match="share a namespace prefix"):
        Tenant(slug="pay", name="Pay").clean()


def test_tenant_slugs_sharing_letters_but_not_a_dash_prefix_are_fine(db):
    Tenant.objects.create(slug="pay", name="Pay")
    Tenant(slug="payroll", name="Payroll").clean()


@pytest.mark.parametrize(
    ("slug", "covered"),
    [
        ("kube", "names starting with 'kube-'"),
        ("flux", "flux-system"),
        ("ingress", "ingress-nginx"),
        ("berth", "berth-system"),
        ("argocd", "names starting with 'argocd'"),
        ("default", "'default' is the namespace Kubernetes uses"),
    ],
)
def test_a_slug_whose_prefix_reaches_a_name_every_cluster_keeps_is_refused(slug, covered):
    assert covered in reserved_coverage(slug, berth_namespace="berth-system")


@pytest.mark.parametrize("slug", ["payments", "ingressive", "kub", "argo", "certs", "berthold"])
def test_a_slug_covering_no_kept_name_passes(slug):
    assert reserved_coverage(slug, berth_namespace="berth-system") is None


def test_the_names_kept_on_every_cluster_follow_the_clusters_defaults():
    """A cluster registered as it comes claims its Argo CD and ingress namespaces for the
    platform: those names are kept before any cluster is registered."""
    names = platform_names(berth_namespace="berth-system")
    for field in ("argocd_namespace", "ingress_namespace"):
        assert Cluster._meta.get_field(field).default in names
