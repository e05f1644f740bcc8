import factory

from tenants.choices import Role
from tenants.models import Cluster, EnvironmentTier, Membership, Request, Tenant, User


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    oidc_subject = factory.Sequence(lambda n: f"sub-{n}")


class ClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cluster
        django_get_or_create = ("name",)

    name = "sandbox"
    api_url = "http://127.0.0.1:6550"


class TierFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EnvironmentTier
        django_get_or_create = ("slug",)

    slug = "dev"
    name = factory.LazyAttribute(lambda t: t.slug.title())


class TenantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Tenant
        django_get_or_create = ("slug",)
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"team{n}")
    name = factory.LazyAttribute(lambda t: f"Team {t.slug}")
    member_groups = factory.LazyAttribute(lambda t: [f"{t.slug}-devs"])

    @factory.post_generation
    def open_to(self, create, extracted, **kwargs):
        """Allow the default cluster and dev tier unless told otherwise."""
        if not create:
            return
        clusters, tiers = extracted or ([ClusterFactory()], [TierFactory()])
        self.allowed_clusters.set(clusters)
        self.allowed_tiers.set(tiers)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    tenant = factory.SubFactory(TenantFactory)
    role = Role.MEMBER


class RequestFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Request

    tenant = factory.SubFactory(TenantFactory)
    kind = "namespace"
    payload = factory.LazyFunction(
        lambda: {
            "app": "shop",
            "tier": "dev",
            "cluster": "sandbox",
            "cpu_millis": 1000,
            "memory_mib": 2048,
            "storage_gib": 0,
        }
    )
    requester = factory.SubFactory(UserFactory)
