"""Quantities as Kubernetes parses them, stored exactly: nothing becomes a zero quota, nothing
is rounded, and the error says the accepted form and the least amount, in the API and in
the forms alike."""

import pytest

from tenants import demo
from tenants.models import Request, User
from tenants.quantities import QuantityError, cpu_to_millis, memory_to_mib, storage_to_gib
from tests.support.tenants_api import REQUESTS, namespace_request


@pytest.mark.parametrize(
    ("given", "millis"),
    [
        ("500m", 500),
        ("2", 2000),
        ("1.5", 1500),
        ("+1", 1000),
        (2, 2000),
        ("1e3", 1_000_000),
        ("0.001", 1),
        (".5", 500),
    ],
)
def test_cpu_in_any_kubernetes_form_is_whole_millicores(given, millis):
    assert cpu_to_millis(given) == millis


@pytest.mark.parametrize(
    ("given", "mib"),
    [
        ("512Mi", 512),
        ("4Gi", 4096),
        ("1048576", 1),
        ("1Ti", 1048576),
        ("2097152k", 2000),
    ],
)
def test_memory_in_any_kubernetes_form_is_whole_mib(given, mib):
    assert memory_to_mib(given) == mib


@pytest.mark.parametrize(
    ("function", "given", "says"),
    [
        (cpu_to_millis, "0", "at least 1m"),
        (cpu_to_millis, "0m", "at least 1m"),
        (cpu_to_millis, "-0", "negative"),
        (cpu_to_millis, "-1", "negative"),
        (cpu_to_millis, "1n", "write 1m"),
        (cpu_to_millis, "0.0001", "0.1m: CPU is counted in whole millicores"),
        (cpu_to_millis, "1_000m", "not a Kubernetes quantity"),
        (cpu_to_millis, "١٠٠m", "ASCII digits"),
        (cpu_to_millis, "1e3m", "not a Kubernetes quantity"),
        (cpu_to_millis, "lots", "not a Kubernetes quantity"),
        (cpu_to_millis, "inf", "not a Kubernetes quantity"),
        (cpu_to_millis, "1e99999999", "too large"),
        (cpu_to_millis, True, "not a Kubernetes quantity"),
        (memory_to_mib, "1Ki", "write 1Mi"),
        (memory_to_mib, "0.5Mi", "write 1Mi"),
        (
            memory_to_mib,
            "100M",
            "95.367431640625Mi: memory is counted in whole MiB (e.g. 512Mi or "
            "4Gi); write 95Mi or 96Mi",
        ),
        (memory_to_mib, "0", "at least 1Mi"),
        (storage_to_gib, "500Mi", "write 1Gi"),
        (storage_to_gib, "1.5Gi", "write 1Gi or 2Gi"),
    ],
)
def test_quantities_that_kubernetes_or_a_quota_would_not_hold_are_refused(function, given, says):
    with pytest.raises(QuantityError, match=None) as refused:
        function(given)
    assert says in str(refused.value)


def test_storage_may_be_none_at_all():
    assert storage_to_gib("0") == 0


@pytest.fixture
def demo_developer(db):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    return User.objects.get(username="dev")


def test_the_api_refuses_a_zero_quota_saying_the_least_and_saves_nothing(demo_developer):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(demo_developer)
    response = client.post(REQUESTS, namespace_request(cpu="0.0001", memory="100M"), format="json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert "0.1m: CPU is counted in whole millicores" in str(body["errors"])
    assert "write 95Mi or 96Mi" in str(body["errors"])
    assert not Request.objects.exists()


def test_the_form_refuses_the_same_with_the_same_words(client, demo_developer):
    client.force_login(demo_developer)
    page = client.post(
        "/tenants/payments/request/namespace/",
        {
            "app": "shop",
            "tier": "dev",
            "cluster": "sandbox",
            "cpu": "1_000m",
            "memory": "1Ki",
        },
    ).content.decode()
    assert "is not a Kubernetes quantity" in page
    assert "write 1Mi" in page
    assert not Request.objects.exists()
