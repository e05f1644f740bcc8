"""A person's own choices: the notifications they want e-mailed."""

from __future__ import annotations

from django import forms

from tenants.forms.base import Form
from tenants.notifications import EVENT_CHOICES


class NotificationsForm(Form):
    """Ticked: e-mailed. Berth keeps what is not ticked (muted), so a new event reaches
    people until they turn it off."""

    wanted = forms.MultipleChoiceField(
        label="E-mail me when",
        choices=EVENT_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    @classmethod
    def for_user(cls, user, data=None) -> NotificationsForm:
        muted = set(user.muted_notifications or [])
        return cls(data, initial={"wanted": [e for e, _ in EVENT_CHOICES if e not in muted]})

    def muted(self) -> list[str]:
        wanted = set(self.cleaned_data["wanted"])
        return [event for event, _ in EVENT_CHOICES if event not in wanted]
