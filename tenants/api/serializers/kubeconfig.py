"""A namespace's kubeconfig over the API: the query and the answer."""

from __future__ import annotations

from rest_framework import serializers

from tenants.selectors.kubeconfig import CREDENTIALS, KUBELOGIN
from tenants.validators import validate_dns_label


class KubeconfigQuerySerializer(serializers.Serializer):
    credentials = serializers.ChoiceField(
        choices=list(CREDENTIALS),
        default=KUBELOGIN,
        required=False,
        help_text="Who gets your ID token for kubectl: kubelogin (kubectl oidc-login, the "
        "default) or berth (berth token --exec).",
    )
    cluster = serializers.CharField(
        required=False,
        max_length=63,
        validators=[validate_dns_label],
        help_text="The cluster, when a namespace of this name is live on more than one.",
    )


class AttemptSerializer(serializers.Serializer):
    command = serializers.CharField()
    expect = serializers.CharField(help_text="What it should answer, for your role.")


class KubeconfigSerializer(serializers.Serializer):
    namespace = serializers.CharField(source="namespace.name")
    namespace_id = serializers.IntegerField(source="namespace.pk")
    cluster = serializers.CharField(source="namespace.cluster.name")
    state = serializers.CharField(source="namespace.state")
    credentials = serializers.ChoiceField(choices=list(CREDENTIALS))
    filename = serializers.CharField(help_text="A name to save it under.")
    kubeconfig = serializers.CharField(
        source="text",
        help_text="The kubeconfig, as YAML: "
        "the cluster's server and CA, a context whose default "
        "namespace is this one, a user signing in through the "
        "identity provider. It holds no secret.",
    )
    role = serializers.CharField(
        source="access.role",
        allow_null=True,
        help_text="Your role in the namespace's tenant, or your live access grant's role there.",
    )
    cluster_role = serializers.CharField(
        source="access.cluster_role",
        help_text='The ClusterRole the namespace\'s tier binds to that role ("" without one).',
    )
    summary = serializers.CharField(
        source="access.summary", help_text="What it lets you do, in plain words."
    )
    try_ = serializers.ListField(
        child=AttemptSerializer(),
        source="attempts",
        help_text="Two commands to try it, and their answers.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["try"] = fields.pop("try_")  # a Python keyword
        return fields
