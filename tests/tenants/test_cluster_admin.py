import pytest

from kubesandbox import KubeSandbox
from tests.support.factories import ClusterFactory, UserFactory


@pytest.fixture
def superuser(db):
    user = UserFactory(username="root", is_staff=True, is_superuser=True)
    user.set_password("break-glass-password")
    user.save()
    return user


def test_connection_check_reports_the_cluster_version(client, superuser):
    with KubeSandbox() as sandbox:
        cluster = ClusterFactory(name="sandbox", api_url=sandbox.url)
        client.force_login(superuser)
        response = client.post(
            "/admin/tenants/cluster/",
            {"action": "test_connection", "_selected_action": [cluster.pk], "index": "0"},
            follow=True,
        )
    assert "Sandbox: connected, Kubernetes v" in response.content.decode()


def test_connection_check_explains_an_unreachable_cluster(client, superuser):
    cluster = ClusterFactory(name="gone", api_url="http://127.0.0.1:9")
    client.force_login(superuser)
    response = client.post(
        "/admin/tenants/cluster/",
        {"action": "test_connection", "_selected_action": [cluster.pk], "index": "0"},
        follow=True,
    )
    assert (
        "Gone: cluster unreachable: the API server refused the connection"
        in response.content.decode()
    )


def test_cluster_form_never_shows_the_stored_credentials(client, superuser):
    cluster = ClusterFactory(name="prod-eu", credentials="super-secret-token-value")
    client.force_login(superuser)
    page = client.get(f"/admin/tenants/cluster/{cluster.pk}/change/").content.decode()
    assert "super-secret-token-value" not in page
    assert "leave blank to keep" in page
