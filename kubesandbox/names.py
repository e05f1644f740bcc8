"""Names, label keys and values and annotation keys, checked with the apiserver's rules."""

from __future__ import annotations

import re

from .resources import NAME_DNS1035, NAME_LABEL, NAME_PATH_SEGMENT

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(\.{_LABEL})*"
_DNS1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"

LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    f"regex used for validation is '{_LABEL}')"
)
SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    f"regex used for validation is '{_SUBDOMAIN}')"
)
DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    f"'abc-123', regex used for validation is '{_DNS1035}')"
)
QUALIFIED_MESSAGE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    f"used for validation is '{_QUALIFIED_NAME}')"
)
LABEL_VALUE_MESSAGE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    f"'my_value',  or '12345', regex used for validation is '({_QUALIFIED_NAME})?')"
)

Cause = tuple[str, str, str]


def _value_invalid(field: str, value: str, message: str) -> Cause:
    return ("FieldValueInvalid", field, f'Invalid value: "{value}": {message}')


def name_problems(rule: str, name: str, field: str = "metadata.name") -> list[Cause]:
    if rule == NAME_PATH_SEGMENT:
        for bad in ("/", "%"):
            if bad in name:
                return [_value_invalid(field, name, f"may not contain '{bad}'")]
        if name in (".", ".."):
            return [_value_invalid(field, name, f"may not be '{name}'")]
        return []
    pattern, message, limit = {
        NAME_LABEL: (_LABEL, LABEL_MESSAGE, 63),
        NAME_DNS1035: (_DNS1035, DNS1035_MESSAGE, 63),
    }.get(rule, (_SUBDOMAIN, SUBDOMAIN_MESSAGE, 253))
    problems = []
    if len(name) > limit:
        problems.append(_value_invalid(field, name, f"must be no more than {limit} characters"))
    if not re.fullmatch(pattern, name):
        problems.append(_value_invalid(field, name, message))
    return problems


def _qualified_name_problems(field: str, key: str) -> list[Cause]:
    prefix, slash, name = key.rpartition("/")
    problems = []
    if slash and (len(prefix) > 253 or not re.fullmatch(_SUBDOMAIN, prefix)):
        problems.append(_value_invalid(field, key, f"prefix part {SUBDOMAIN_MESSAGE}"))
    if len(name) > 63 or not re.fullmatch(_QUALIFIED_NAME, name):
        problems.append(_value_invalid(field, key, QUALIFIED_MESSAGE))
    return problems


def string_map_problems(field: str, value: object, *, labels: bool) -> list[Cause]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [("FieldValueInvalid", field, "Invalid value: must be a map of strings")]
    problems = []
    for key, item in value.items():
        problems += _qualified_name_problems(field, key)
        if not isinstance(item, str):
            problems.append(
                ("FieldValueInvalid", f"{field}[{key}]", "Invalid value: must be a string")
            )
        elif labels and (len(item) > 63 or not re.fullmatch(f"({_QUALIFIED_NAME})?", item)):
            problems.append(_value_invalid(field, item, LABEL_VALUE_MESSAGE))
    return problems
