"""Who signs in: matched by `sub`, refreshed from claims; passwords for break-glass only."""

import pytest
from django.contrib.auth import authenticate

from portal.auth.errors import SignInRefused
from portal.auth.identity import groups_from_claims, sign_in
from tenants.models import AuditEvent, User
from tests.support.factories import TenantFactory, UserFactory

PASSWORD = "a-long-enough-password-for-tests"


def claims(sub="idp-subject-1", **extra):
    return {
        "sub": sub,
        "preferred_username": "dana",
        "email": "dana@example.com",
        "given_name": "Dana",
        "family_name": "Developer",
        "groups": [],
        **extra,
    }


@pytest.fixture(autouse=True)
def admin_groups(settings):
    settings.BERTH_PLATFORM_ADMIN_GROUPS = ["platform-admins"]
    settings.OIDC_GROUPS_CLAIM = "groups"


def test_same_email_with_a_different_subject_is_a_different_user(db):
    first, _ = sign_in(claims=claims(sub="idp-subject-a"))
    second, _ = sign_in(claims=claims(sub="idp-subject-b"))

    assert first.pk != second.pk
    assert first.email == second.email == "dana@example.com"


def test_changed_email_with_the_same_subject_is_the_same_user_and_the_email_is_refreshed(db):
    before, _ = sign_in(claims=claims(email="dana@old.example.com"))
    after, _ = sign_in(claims=claims(email="dana@new.example.com"))

    assert after.pk == before.pk
    after.refresh_from_db()
    assert after.email == "dana@new.example.com"
    assert User.objects.count() == 1


def test_an_existing_user_is_never_matched_by_email(db):
    existing = UserFactory(username="dana", email="dana@example.com", oidc_subject="someone-else")

    user, _ = sign_in(claims=claims(sub="idp-subject-new"))

    assert user.pk != existing.pk


def test_name_is_refreshed_from_the_claims_at_each_sign_in(db):
    sign_in(claims=claims())
    user, _ = sign_in(claims=claims(given_name="Dana", family_name="Deployer"))

    user.refresh_from_db()
    assert user.get_full_name() == "Dana Deployer"


def test_new_username_comes_from_preferred_username_and_is_made_unique_when_taken(db):
    UserFactory(username="dana")
    UserFactory(username="dana-2")

    user, _ = sign_in(claims=claims(preferred_username="dana"))

    assert user.username == "dana-3"


def test_username_falls_back_to_the_email_and_drops_unsafe_characters(db):
    user, _ = sign_in(claims=claims(preferred_username="", email="dana smith@example.com"))
    assert user.username == "dana-smith"


@pytest.mark.parametrize("subject", [None, "", "   "])
def test_claims_without_a_subject_are_refused(db, subject):
    given = claims()
    if subject is None:
        del given["sub"]
    else:
        given["sub"] = subject

    with pytest.raises(SignInRefused) as refused:
        sign_in(claims=given)

    assert refused.value.code == "subject"
    assert not User.objects.exists()


def test_a_deactivated_user_is_refused(db):
    UserFactory(username="gone", oidc_subject="idp-subject-1", is_active=False)

    with pytest.raises(SignInRefused) as refused:
        sign_in(claims=claims())

    assert refused.value.code == "inactive"


def test_signing_in_syncs_memberships_and_the_platform_admin_flag(db):
    TenantFactory(slug="payments", member_groups=["payments-devs"])

    user, groups = sign_in(
        claims=claims(groups=["payments-devs", "platform-admins"]), source_ip="::1"
    )

    assert groups == ["payments-devs", "platform-admins"]
    assert user.is_platform_admin
    assert list(user.memberships.values_list("tenant__slug", flat=True)) == ["payments"]


def test_the_first_sign_in_creates_the_user_and_is_audited(db):
    user, _ = sign_in(claims=claims(), source_ip="192.0.2.1")

    event = AuditEvent.objects.get(action="user.create")
    assert event.actor == user
    assert event.after == {"username": "dana", "oidc_subject": "idp-subject-1"}
    assert event.source_ip == "192.0.2.1"


@pytest.mark.parametrize(
    ("claim", "given", "expected"),
    [
        ("groups", {"groups": ["b", "a", "a"]}, ["a", "b"]),
        ("groups", {"groups": "only-one"}, ["only-one"]),
        ("groups", {}, []),
        ("roles", {"roles": ["r"], "groups": ["g"]}, ["r"]),
        ("realm_access.roles", {"realm_access": {"roles": ["x"]}}, ["x"]),
        ("groups", {"groups": [1, None, "ok"]}, ["ok"]),
    ],
)
def test_groups_are_read_from_the_configured_claim(claim, given, expected):
    assert groups_from_claims(given, claim) == expected


# -- passwords: break-glass only -------------------------------------------------------------
def test_users_who_sign_in_at_the_provider_never_get_a_usable_password(db):
    user, _ = sign_in(claims=claims())
    assert not user.has_usable_password()


def test_a_password_someone_set_is_made_unusable_at_the_next_provider_sign_in(db):
    user = UserFactory(username="dana", oidc_subject="idp-subject-1")
    user.set_password(PASSWORD)
    user.save()

    sign_in(claims=claims())

    user.refresh_from_db()
    assert not user.has_usable_password()


def test_non_superuser_with_a_usable_password_cannot_sign_in_by_password(db, client):
    user = UserFactory(username="staffer", is_staff=True)
    user.set_password(PASSWORD)
    user.save()

    assert authenticate(username="staffer", password=PASSWORD) is None
    response = client.post("/admin/login/", {"username": "staffer", "password": PASSWORD})
    assert response.status_code == 200  # the form again, with an error
    assert "_auth_user_id" not in client.session


def test_break_glass_superuser_signs_in_with_a_password_at_admin(db, client):
    User.objects.create_superuser("admin", "admin@example.com", PASSWORD)

    response = client.post("/admin/login/?next=/", {"username": "admin", "password": PASSWORD})

    assert response.status_code == 302
    assert client.session["_auth_user_id"]
    assert client.get("/").status_code == 200
