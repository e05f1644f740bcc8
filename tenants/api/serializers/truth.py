"""A tenant's truth table over the API."""

from __future__ import annotations

from rest_framework import serializers

STATES = ["in_sync", "drifted", "missing_in_git", "missing_in_cluster", "orphan"]


class TruthRowSerializer(serializers.Serializer):
    source = serializers.ChoiceField(
        choices=["cluster", "git"], help_text="A cluster object, or a file of the repository."
    )
    cluster = serializers.CharField()
    object = serializers.CharField(help_text="Kind/namespace/name, or the file's path.")
    namespace = serializers.CharField()
    state = serializers.ChoiceField(choices=STATES)
    detail = serializers.CharField(help_text="What differs, or why it is an orphan.")
    db = serializers.CharField(
        help_text="What Berth's records render: the object's or file's digest."
    )
    git = serializers.CharField(
        help_text='For a file the branch holds: "at <commit>"; "" when absent or not a file.'
    )
    live = serializers.CharField(
        help_text="What the cluster holds: absent, present, whether Berth owns fields."
    )
    engine = serializers.CharField(help_text="The GitOps engine's status of it, if it has one.")


class TruthQuerySerializer(serializers.Serializer):
    # Empty: no filter, as an empty form field reads.
    namespace = serializers.RegexField(
        r"^[a-z0-9-]{0,63}\Z",
        required=False,
        allow_blank=True,
        help_text="Only this namespace's objects and files.",
    )
    project = serializers.RegexField(
        r"^[a-z0-9-]{0,63}\Z",
        required=False,
        allow_blank=True,
        help_text="Only this project's objects and files.",
    )


class TruthTableSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    taken_at = serializers.DateTimeField(source="table.taken_at", allow_null=True)
    problems = serializers.ListField(child=serializers.CharField(), source="table.problems")
    counts = serializers.DictField(child=serializers.IntegerField())
    rows = TruthRowSerializer(many=True)
    upgrades = serializers.ListField(
        child=serializers.CharField(),
        help_text="Namespaces whose tier has a newer definition "
        'than the one they run ("payments-web-dev runs dev v1; v2 available"): an upgrade '
        "campaign rolls it out; never drift.",
    )

    def to_representation(self, instance):
        if instance.table is None:  # not taken yet
            return {
                "tenant": instance.tenant.slug,
                "taken_at": None,
                "problems": [],
                "counts": instance.counts,
                "rows": [],
                "upgrades": instance.upgrades,
            }
        return super().to_representation(instance)


class RepairSerializer(serializers.Serializer):
    requests = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The tenant_sync requests filed (none when "
        "one is already open for every cluster).",
    )
