from django.core.management import call_command

from tenants.choices import Role
from tenants.models import Cluster, EnvironmentTier, Membership, Tenant, User


def test_seed_creates_demo_world_and_running_it_twice_changes_nothing(db):
    models = (Tenant, User, Membership, EnvironmentTier, Cluster)
    call_command("seed_demo")
    counts = [model.objects.count() for model in models]

    call_command("seed_demo")

    assert [model.objects.count() for model in models] == counts
    assert set(EnvironmentTier.objects.values_list("slug", flat=True)) == {
        "dev",
        "staging",
        "prod",
        "review",
    }
    assert Cluster.objects.get().is_sandbox
    assert User.objects.get(username="pat").is_platform_admin
    assert Membership.objects.get(user__username="dev").tenant.slug == "payments"
    assert Membership.objects.get(user__username="olivia").role == Role.OWNER
    assert not User.objects.get(username="dev").has_usable_password()
