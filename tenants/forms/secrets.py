"""A model form whose secret fields are written, never shown back: the admin's tenant and
cluster forms."""

from __future__ import annotations

from django import forms

from tenants.forms.base import ModelForm


class WriteOnlySecretForm(ModelForm):
    """Secrets are never shown back; leaving the field blank keeps the stored value."""

    secret_fields: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in self.secret_fields:
            stored = bool(self.instance.pk and getattr(self.instance, name))
            self.fields[name] = forms.CharField(
                required=False,
                widget=forms.PasswordInput(render_value=False),
                help_text="Stored encrypted; leave blank to keep the current value."
                if stored
                else "Stored encrypted.",
            )

    def clean(self):
        cleaned = super().clean()
        for name in self.secret_fields:
            if not cleaned.get(name) and self.instance.pk:
                cleaned[name] = getattr(self.instance, name)
        return cleaned
