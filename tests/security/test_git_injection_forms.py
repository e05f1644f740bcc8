"""A tenant's GitOps repository URL, branch and base path never reach git as an option, a
shell or a path outside the repository, through the pages and the model: the onboarding
page, the Django admin and Tenant.clean refuse a hostile value with a message naming the
field, nothing stored, nothing run; the admin takes a good repository."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from tenants.models import Tenant, User
from tests.support.admin_forms import admin_add_form, onboarding_form
from tests.support.security_git import CORPUS, FORM_FIELD, names_the_field, stored

pytestmark = pytest.mark.usefixtures("production_git")


@pytest.mark.parametrize(("field", "value"), CORPUS)
def test_the_onboarding_page_refuses_a_hostile_repository_value(
    client, api_world, marker, field, value
):
    client.force_login(api_world.admin)
    form = {
        **onboarding_form(
            slug="ledger", name="Ledger team", repo_url="https://git.example.com/l.git", path=""
        ),
        FORM_FIELD[field]: value,
    }

    response = client.post("/tenants/new/", form)

    assert response.status_code == 200  # the form again, with the error
    said = response.context["form"].errors.get(FORM_FIELD[field])
    assert said and names_the_field(list(said)), response.context["form"].errors
    assert not Tenant.objects.filter(slug="ledger").exists()
    assert not marker.exists()


@pytest.fixture
def superuser(db):
    return User.objects.create_superuser("root", "root@example.com", "break-glass-password")


def test_the_admin_adds_a_tenant_with_a_good_repository(client, superuser):
    client.force_login(superuser)
    response = client.post(
        "/admin/tenants/tenant/add/", admin_add_form(gitops_path="clusters/./prod/")
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert stored("ledger")["gitops_path"] == "clusters/prod"


@pytest.mark.parametrize(("field", "value"), CORPUS)
def test_the_admin_refuses_a_hostile_repository_value(client, superuser, marker, field, value):
    client.force_login(superuser)

    response = client.post("/admin/tenants/tenant/add/", admin_add_form(**{field: value}))

    assert response.status_code == 200
    said = response.context["adminform"].form.errors.get(field)
    assert said and names_the_field(list(said)), response.context["adminform"].form.errors
    assert not Tenant.objects.filter(slug="ledger").exists()
    assert not marker.exists()


@pytest.mark.parametrize(("field", "value"), CORPUS)
def test_the_model_refuses_a_hostile_repository_value_whoever_saves_it(api_world, field, value):
    tenant = Tenant.objects.get(slug="search")
    setattr(tenant, field, value)

    with pytest.raises(ValidationError) as refused:
        tenant.full_clean()

    assert field in refused.value.message_dict, refused.value
    assert names_the_field(refused.value.message_dict[field])
