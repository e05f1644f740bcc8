"""Environment rules (GitLab CI `rules:` style) on their own, without a database: which
namespace an environment gets (the first matching rule wins, a fixed name is shared,
variables are made DNS-safe, too long names keep a stable hash), a refusing rule's reason,
and bad rules refused with what is wrong."""

from __future__ import annotations

import pytest

from tenants import environment_rules
from tenants.models import EnvironmentRule

VARIABLES = {
    "tenant": "payments",
    "project": "shop",
    "env_slug": "review-42",
    "branch": "feature/Cart",
    "mr_id": "42",
}


def rule(
    position: int, condition: str = "", namespace: str = "", refuse: bool = False, message: str = ""
) -> EnvironmentRule:
    return EnvironmentRule(
        position=position,
        condition=condition,
        namespace_template=namespace,
        refuse=refuse,
        message=message,
    )


# --- the rules themselves (no database) -------------------------------------------------------


def test_without_rules_every_environment_gets_its_own_namespace():
    choice = environment_rules.choose([], VARIABLES)
    assert choice.namespace == "payments-shop-review-42"
    assert not choice.shared
    assert choice.rule_position is None


def test_first_matching_rule_wins_and_a_fixed_name_is_shared():
    rules = [
        rule(1, 'env_slug == "production"', "payments-shop-production"),
        rule(2, 'env_slug.startsWith("review")', "payments-review-apps"),
        rule(3, "", "$TENANT-$PROJECT-$ENV_SLUG"),
    ]
    choice = environment_rules.choose(rules, VARIABLES)
    assert (choice.namespace, choice.shared, choice.rule_position) == (
        "payments-review-apps",
        True,
        2,
    )
    staging = environment_rules.choose(rules, {**VARIABLES, "env_slug": "staging"})
    assert (staging.namespace, staging.shared, staging.rule_position) == (
        "payments-shop-staging",
        False,
        3,
    )


def test_variables_are_made_dns_safe_and_braces_work():
    choice = environment_rules.choose([rule(1, "", "${TENANT}-$PROJECT-$BRANCH")], VARIABLES)
    assert choice.namespace == "payments-shop-feature-cart"


def test_a_refusing_rule_says_why_and_no_match_gives_none():
    rules = [
        rule(1, 'branch == "main"', refuse=True, message="main deploys through staging"),
        rule(2, 'mr_id != ""', "$TENANT-$PROJECT-mr-$MR_ID"),
    ]
    assert environment_rules.choose(rules, {**VARIABLES, "branch": "main"}).refused == (
        "main deploys through staging"
    )
    assert environment_rules.choose(rules, VARIABLES).namespace == "payments-shop-mr-42"
    assert environment_rules.choose(rules, {**VARIABLES, "mr_id": ""}) is None


def test_too_long_names_keep_their_start_and_end_in_a_stable_hash():
    long_slug = "review-" + "very-long-feature-name-" * 4
    first = environment_rules.choose([], {**VARIABLES, "env_slug": long_slug})
    again = environment_rules.choose([], {**VARIABLES, "env_slug": long_slug})
    other = environment_rules.choose([], {**VARIABLES, "env_slug": long_slug + "x"})
    assert len(first.namespace) == 63
    assert first.namespace == again.namespace
    assert first.namespace != other.namespace
    assert first.namespace.startswith("payments-shop-review-very-long")
    assert first.namespace[:50] == other.namespace[:50]  # readable part, then the hash


@pytest.mark.parametrize(
    ("condition", "namespace", "expected"),
    [
        ("env_slug ==", "$TENANT-x", "does not compile"),
        ("request.tier == 'dev'", "$TENANT-x", "may use only these variables"),
        ("env_slug", "$TENANT-x", "must be true or false"),
        ("", "$TENANT-$NOPE", "unknown variable(s) NOPE"),
        ("", "other-$ENV_SLUG", "outside the tenant's prefix"),
        ("", "kube-system", "reserved"),
        ("", "$ 1", "names no variable"),
        ("", "", "needs a namespace"),
    ],
)
def test_bad_rules_are_refused_with_what_is_wrong(condition, namespace, expected):
    with pytest.raises(environment_rules.RuleError, match=None) as caught:
        environment_rules.check_rule(
            tenant="payments", condition=condition, namespace=namespace, refuse=False
        )
    assert expected in str(caught.value)
