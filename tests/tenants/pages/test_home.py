import pytest

from tenants.choices import Role
from tests.support.factories import MembershipFactory, TenantFactory, UserFactory


def test_anonymous_visitor_is_sent_to_sign_in(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_member_sees_only_their_own_tenants(client, developer, tenant):
    TenantFactory(slug="search", name="Search team")
    client.force_login(developer)

    response = client.get("/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "payments" in page
    assert "search" not in page
    assert "member" in page


def test_platform_admin_sees_every_tenant(client, platform_admin, tenant):
    TenantFactory(slug="search")
    client.force_login(platform_admin)

    page = client.get("/").content.decode()

    assert "payments" in page and "search" in page
    assert "platform admin" in page


def test_user_without_tenant_is_told_what_to_ask_for(client, db):
    client.force_login(UserFactory(username="newcomer"))
    response = client.get("/")
    assert response.status_code == 200
    assert "You are not in any tenant yet" in response.content.decode()


@pytest.mark.parametrize("rows", [1, 8])
def test_home_page_query_count_does_not_grow_with_tenants(
    client, db, django_assert_max_num_queries, rows
):
    user = UserFactory(username="busy")
    for i in range(rows):
        MembershipFactory(user=user, tenant=TenantFactory(slug=f"t{i}"), role=Role.OWNER)
    client.force_login(user)
    # session, user, tenants, roles, and whether the top bar links the audit log
    with django_assert_max_num_queries(5):
        assert client.get("/").status_code == 200
