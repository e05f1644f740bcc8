"""Forms of ephemeral environments (extend, end) and of a tenant's environment rules."""

from __future__ import annotations

from typing import Any

from django import forms

from tenants.forms.base import Form


class ExtendEnvironmentForm(Form):
    ttl = forms.CharField(
        label="Live for",
        max_length=20,
        help_text="From now, e.g. 30m, 2h or 3d; never past its maximum.",
    )

    def clean_ttl(self) -> int:
        """The TTL in seconds."""
        from tenants.quantities import QuantityError, ttl_to_seconds

        try:
            return ttl_to_seconds(self.cleaned_data["ttl"])
        except QuantityError as exc:
            raise forms.ValidationError(str(exc)) from exc


class EndEnvironmentForm(Form):
    reason = forms.CharField(
        max_length=500,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Optional; recorded with its end request.",
    )


RULE_KEYS = ("if", "namespace", "refuse", "message")


def rules_to_yaml(rules: list[Any]) -> str:
    """EnvironmentRule rows as the YAML the rules editor takes (GitLab `rules:` style)."""
    import yaml

    rows = []
    for rule in rules:
        row: dict[str, Any] = {}
        if rule.condition:
            row["if"] = rule.condition
        if rule.refuse:
            row["refuse"] = True
        else:
            row["namespace"] = rule.namespace_template
        if rule.message:
            row["message"] = rule.message
        rows.append(row)
    if not rows:
        return ""
    return yaml.safe_dump(rows, sort_keys=False, allow_unicode=True, width=1000)


class EnvironmentRulesForm(Form):
    """The tenant's environment rules as YAML; the service checks each rule's meaning."""

    rules = forms.CharField(
        label="Rules (YAML)",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 12, "class": "code", "spellcheck": "false"}),
        help_text="A list; each rule has if, namespace, refuse and message. Empty: every "
        "environment gets the default template.",
    )

    def clean_rules(self) -> list[dict[str, Any]]:
        import yaml

        text = self.cleaned_data["rules"]
        try:
            parsed = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise forms.ValidationError(f"This is not valid YAML{where}: {problem}.") from exc
        if parsed is None:
            return []
        if not isinstance(parsed, list):
            raise forms.ValidationError(
                "The rules must be a YAML list: start each rule with '- ', as in GitLab's rules:."
            )
        problems, rules = [], []
        for number, entry in enumerate(parsed, start=1):
            if not isinstance(entry, dict):
                problems.append(
                    f"Rule {number}: a rule is a mapping of if, namespace, refuse "
                    f"and message, not {yaml.safe_dump(entry).strip()[:60]!r}."
                )
                continue
            unknown = [str(key) for key in entry if key not in RULE_KEYS]
            if unknown:
                hint = (
                    " (for GitLab's when: never, write refuse: true)" if "when" in unknown else ""
                )
                problems.append(
                    f"Rule {number}: unknown key {', '.join(unknown)}{hint}; a rule "
                    f"may have {', '.join(RULE_KEYS)}."
                )
                continue
            if "refuse" in entry and not isinstance(entry["refuse"], bool):
                problems.append(f"Rule {number}: refuse is true or false.")
                continue
            rule = {key: entry[key] for key in RULE_KEYS if key in entry}
            if isinstance(rule.get("if"), bool):  # `if: true` reads as a YAML boolean
                rule["if"] = "true" if rule["if"] else "false"
            for key in ("if", "namespace", "message"):
                if rule.get(key) is not None and not isinstance(rule[key], str):
                    problems.append(f"Rule {number}: {key} must be text.")
            rules.append(rule)
        if problems:
            raise forms.ValidationError(problems)
        return rules


class TryEnvironmentRulesForm(Form):
    """Variables of an imagined environment, to see which rule it meets (nothing is saved)."""

    project = forms.CharField(max_length=63, required=False)
    env_slug = forms.CharField(label="Environment slug", max_length=63, required=False)
    branch = forms.CharField(max_length=255, required=False)
    mr_id = forms.CharField(label="Merge request id", max_length=20, required=False)

    def variables(self) -> dict[str, str]:
        data = self.cleaned_data if self.is_valid() else {}
        return {name: data.get(name) or "" for name in self.fields}
