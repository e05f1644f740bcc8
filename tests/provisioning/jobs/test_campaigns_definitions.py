"""Tier definition versions, what upgrade campaigns move namespaces between: a tier's
definition is numbered once per distinct change (a change back names the old number again),
each namespace shows the version it runs and whether an upgrade is due, and saving a tier in
Django's admin numbers its new definition."""

from __future__ import annotations

from tenants.models import EnvironmentTier, Namespace, User
from tests.support.gitops_loop import submit, work


def test_a_tier_definition_is_numbered_once_per_change_and_namespaces_show_what_they_run(
    gitops_world, client
):
    from tenants.services.definitions import current_tier_revision
    from tests.support.api import api

    submit(
        gitops_world,
        "namespace",
        app="shop",
        tier="dev",
        cluster="sandbox",
        cpu="250m",
        memory="256Mi",
    )
    work()
    dev = EnvironmentTier.objects.get(slug="dev")
    shop = Namespace.objects.get(name="payments-shop-dev")
    assert (shop.tier_revision.number, shop.bundle_revision.number) == (1, 1)
    assert current_tier_revision(tier=dev).number == 1  # the same definition: no new number
    owner = api(User.objects.get(username="olivia"))
    shown = owner.get(f"/api/v1/namespaces/{shop.pk}/").json()["definition"]
    assert shown == {"tier_version": 1, "bundle_version": 1, "current": True, "behind": []}

    dev.pod_security_level = "restricted"
    dev.save()
    shown = owner.get(f"/api/v1/namespaces/{shop.pk}/").json()["definition"]
    assert shown["current"] is False
    assert shown["behind"] == ["the dev tier's definition has changed since v1"]
    client.force_login(gitops_world["owner"])
    page = client.get(f"/namespaces/{shop.pk}/").content.decode()
    assert "dev v1 · bundle v1" in page and "upgrade due" in page
    assert current_tier_revision(tier=dev).number == 2
    # Back as it was: the definition v1 names again, so namespaces on v1 are current (a
    # rollback or a revert is never dressed up as an upgrade).
    dev.pod_security_level = "baseline"
    dev.save()
    assert current_tier_revision(tier=dev).number == 1
    assert api(gitops_world["admin"]).get("/api/v1/tiers/dev/").json()["version"] == 1
    assert owner.get(f"/api/v1/namespaces/{shop.pk}/").json()["definition"]["current"] is True
    dev.container_default_memory_mib = 1024  # a definition not seen before: the next number
    dev.save()
    assert current_tier_revision(tier=dev).number == 3


def test_saving_a_tier_in_the_admin_numbers_its_new_definition(gitops_world, client):
    dev = EnvironmentTier.objects.get(slug="dev")
    before = dev.revisions.count()
    staff = gitops_world["admin"]
    staff.is_staff = staff.is_superuser = True  # Django's admin is for staff
    staff.save()
    client.force_login(staff)
    url = f"/admin/tenants/environmenttier/{dev.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form.initial.get(name) for name in form.fields}
    data = {
        name: "" if value is None else value for name, value in data.items() if value is not False
    }
    data["container_default_memory_mib"] = 1536
    saved = client.post(url, data, follow=True).content.decode()
    latest = dev.revisions.order_by("-number").first()
    assert latest.number == before + 1
    assert latest.definition["container_default_memory_mib"] == 1536
    assert f"Tier dev is now at definition v{latest.number}" in saved
