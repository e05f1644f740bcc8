"""Berth's ValidatingAdmissionPolicies, enforced by an API server (the stand-in) that holds
them: domains. An Ingress or a cert-manager Certificate names only hosts under its tenant's
allowed domains, read from the berth-allowed-domains ConfigMap of its namespace; without
that list the request is refused, and the tenant cannot widen its own."""

import pytest

from tests.support.guardrails_admission import (
    BOOTSTRAP,
    DANA,
    PARAMETERS,
    admitted,
    certificate,
    ingress,
    live_cluster,
)


@pytest.mark.parametrize(
    ("obj", "allowed"),
    [
        pytest.param(ingress("shop.payments.example.com"), True, id="ingress-subdomain"),
        pytest.param(ingress("payments.example.com"), True, id="ingress-the-domain-itself"),
        pytest.param(ingress("*.payments.example.com"), True, id="ingress-wildcard-under-domain"),
        pytest.param(ingress("api.pay.example.org"), True, id="ingress-second-domain-any-case"),
        pytest.param(ingress("shop.search.example.com"), False, id="ingress-other-tenants-domain"),
        pytest.param(ingress("evilpayments.example.com"), False, id="ingress-look-alike"),
        pytest.param(ingress("payments.example.com.evil.io"), False, id="ingress-suffix-trick"),
        pytest.param(ingress("*.example.com"), False, id="ingress-wildcard-above-domain"),
        pytest.param(
            ingress("shop.payments.example.com", "www.example.net"),
            False,
            id="ingress-one-bad-rule",
        ),
        pytest.param(ingress(None), False, id="ingress-rule-without-host"),
        pytest.param(
            ingress("shop.payments.example.com", tls=["shop.payments.example.com"]),
            True,
            id="ingress-tls-inside",
        ),
        pytest.param(
            ingress("shop.payments.example.com", tls=["bank.example.com"]),
            False,
            id="ingress-tls-outside",
        ),
        pytest.param(ingress(default_backend=True), False, id="ingress-catch-all-default-backend"),
        pytest.param(
            ingress("shop.search.example.com", namespace="search-web-dev"),
            True,
            id="ingress-each-tenant-its-own-domains",
        ),
        pytest.param(
            ingress("shop.payments.example.com", namespace="quiet-app-dev"),
            False,
            id="ingress-tenant-without-domains",
        ),
        pytest.param(
            ingress("newcomer.example.com", namespace="newcomer-app-dev"),
            False,
            id="ingress-namespace-without-its-domains-fails-closed",
        ),
        pytest.param(
            ingress("anything.example.com", namespace="ingress-nginx"),
            True,
            id="ingress-platform-namespace-not-a-tenants",
        ),
        pytest.param(
            certificate("shop.payments.example.com", "payments.example.com"),
            True,
            id="certificate-inside",
        ),
        pytest.param(
            certificate("shop.payments.example.com", "bank.example.com"),
            False,
            id="certificate-one-bad-dns-name",
        ),
        pytest.param(
            certificate("shop.payments.example.com", common_name="bank.example.com"),
            False,
            id="certificate-bad-common-name",
        ),
    ],
)
def test_domain_policies(cluster, obj, allowed):
    created = {**obj, "metadata": {**obj["metadata"], "name": "new"}}
    admitted(cluster, "CREATE", DANA, obj=created).expect(allowed)


def test_an_update_is_checked_like_a_create(cluster):
    good, bad = ingress("shop.payments.example.com"), ingress("bank.example.com")
    assert not admitted(cluster, "UPDATE", DANA, obj=bad, old=good).allowed
    assert admitted(cluster, "UPDATE", DANA, obj=good, old=good).allowed


def test_a_missing_domain_list_refuses_instead_of_allowing():
    without = live_cluster(BOOTSTRAP, parameters=PARAMETERS[1:])
    try:
        result = admitted(
            without,
            "CREATE",
            DANA,
            obj={
                **ingress("shop.payments.example.com"),
                "metadata": {"name": "new", "namespace": "payments-shop-dev"},
            },
        )
    finally:
        without.close()
    assert not result.allowed
    assert "no params found" in result.reasons[0]


def test_the_tenant_cannot_widen_its_own_domain_list(cluster):
    mine = PARAMETERS[0]
    wider = {**mine, "data": {**mine["data"], "bank.example.com": "allowed"}}
    result = admitted(cluster, "UPDATE", DANA, obj=wider, old=mine)
    assert not result.allowed
    assert any("only Berth creates, changes or deletes it" in r for r in result.reasons)
