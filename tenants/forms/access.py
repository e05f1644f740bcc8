"""Ask for access (/access/grants/new/): one of a namespace's tier's roles, for a while, and
why. The choices follow the namespace named (the tier's roles with their ClusterRoles, the
usual durations within its bounds); tenants.services.request_access decides the rest."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants import quantities
from tenants.choices import NamespaceState, Role
from tenants.forms.base import Form
from tenants.models import Namespace

# The durations offered, in minutes, where the tier's bounds allow them.
USUAL_MINUTES = (15, 30, 60, 120, 240, 480)
DEFAULT_MINUTES = 60


def live_namespace(name: str) -> Namespace | None:
    """The live namespace of this name (the first cluster's, where it is live on more than
    one: the service asks to name the cluster then)."""
    if not name:
        return None
    return (
        Namespace.objects.filter(name=name, state=NamespaceState.ACTIVE)
        .select_related("tier", "cluster", "tenant")
        .order_by("cluster__name")
        .first()
    )


def duration_choices(shortest: int, longest: int) -> list[tuple[str, str]]:
    minutes = sorted({m for m in USUAL_MINUTES if shortest <= m <= longest} | {shortest, longest})
    return [(quantities.seconds_to_duration(m * 60), _for_people(m)) for m in minutes]


def _for_people(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{minutes} minutes"
    said = f"{hours} hour{'s' if hours > 1 else ''}"
    return f"{said} {rest} minutes" if rest else said


class AccessRequestForm(Form):
    namespace = forms.CharField(
        max_length=63,
        help_text="A live namespace, of your tenant or another: its tenant decides.",
    )
    role = forms.ChoiceField(help_text="What you may do there: the role's ClusterRole.")
    duration = forms.ChoiceField(
        help_text="Your time starts once the request is approved; the binding goes at its end."
    )
    reason = forms.CharField(
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="The incident or ticket, and what you will do there.",
    )

    def __init__(self, *args: Any, target: Namespace | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.target = target
        if target is not None:
            tier = target.tier
            self.fields["namespace"].widget = forms.HiddenInput()
            self.fields["role"].choices = [
                (role, f"{role} ({cluster_role})")
                for role, cluster_role in tier.access_roles().items()
            ]
            self.fields["role"].initial = Role.VIEWER
            choices = duration_choices(tier.access_min_minutes, tier.access_max_minutes)
            self.fields["duration"].help_text = (
                f"From {choices[0][1]} to {choices[-1][1]} on {tier.name} namespaces. "
                + str(self.fields["duration"].help_text)
            )
        else:
            # Which roles and how long: the tier says, once the namespace is known.
            self.fields["role"].choices = [(role, role) for role in Role.values]
            choices = duration_choices(USUAL_MINUTES[0], USUAL_MINUTES[-1])
        self.fields["duration"].choices = choices
        usual = quantities.seconds_to_duration(DEFAULT_MINUTES * 60)
        self.fields["duration"].initial = usual if usual in dict(choices) else choices[0][0]
