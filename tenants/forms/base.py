"""What every page form refuses before its fields see the submission: control characters
(tenants.text), each as an error on its field. Page forms derive from Form or ModelForm
here, not from Django's."""

from __future__ import annotations

from django import forms

from tenants.text import control_character


class RefusesControlCharacters:
    """A field whose submitted text holds a control character is invalid, with an error
    naming the character; so is the form, and nothing is stored. Multi-line fields (text
    areas; password fields, which may carry a key) may hold tabs and line breaks.

    Checked on the submission itself, before the fields clean it: a choice field would look
    a NUL up in the database, which PostgreSQL answers with a server error."""

    def full_clean(self) -> None:
        refused = self._control_characters() if self.is_bound else {}
        if refused:
            # The refused fields are cleaned as if left empty; their errors say why. What
            # was sent is not shown back either.
            self.data = self.data.copy()
            for name in refused:
                self.data.pop(self[name].html_name, None)
        super().full_clean()
        for name, message in refused.items():
            self._errors.pop(name, None)
            self.add_error(name, message)

    def _control_characters(self) -> dict[str, str]:
        refused = {}
        for name, field in self.fields.items():
            if field.disabled:
                continue
            multiline = isinstance(field.widget, forms.Textarea | forms.PasswordInput)
            sent = self[name].data
            for value in sent if isinstance(sent, list | tuple) else [sent]:
                found = isinstance(value, str) and control_character(value, multiline=multiline)
                if found:
                    refused[name] = f"This field holds {found}: remove it."
                    break
        return refused


class Form(RefusesControlCharacters, forms.Form):
    pass


class ModelForm(RefusesControlCharacters, forms.ModelForm):
    pass
