"""Policy what-if: how long replaying a proposed rule set over past decisions takes.

    python bench/policy_whatif.py [--count 10000]

Makes N past decisions in memory (requests of every kind, tier, size and requester role,
each with the `request` attributes the rules saw, decided by the default rules a fresh
database holds), then replays a proposal over them as the Policy page and
POST /api/v1/policy/what-if do (tenants.whatif.replay: compiled once, no database inside
the loop): the default rules with one edited and one added. Prints the replay's wall time,
the changes it found, and, last, the ratio of the time to the 2 s allowed for 10,000
requests (scaled to N). Exits 1 when the replay found no change (the proposal changes
decisions by construction) or changes it should not have.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ALLOWED_SECONDS_PER_10000 = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()

    from common import start_django

    start_django(
        Path(tempfile.mkdtemp(prefix="berth-bench-whatif-")), database="berth_bench_whatif"
    )
    from dataclasses import replace

    from tenants import whatif
    from tenants.selectors.whatif import rules_in_force

    current = rules_in_force()
    past = decisions(args.count, current)

    # The proposal: staging now needs a platform admin, and big prod asks are denied.
    proposed = [
        replace(rule, approver_role="platform_admin")
        if rule.name == "staging-needs-tenant-owner"
        else rule
        for rule in current
    ]
    proposed.insert(
        0,
        whatif.ProposedRule(
            name="no-big-prod",
            condition='"prod" in request.tiers && request.cpu_millis > 8000',
            outcome="deny",
            message="Ask for at most 8 cores in prod.",
        ),
    )

    started = time.perf_counter()
    found = whatif.replay(proposed, past)
    wall = time.perf_counter() - started

    print(f"{args.count} past decisions, {len(proposed)} proposed rules")
    print(f"  replay     {wall:.3f} s ({wall / args.count * 1e6:.0f} µs each)")
    for change, count in found.counts.items():
        print(f"  {whatif.CHANGE_LABELS[change]:32} {count}")
    print(f"  unchanged  {args.count - found.changed}")
    unexpected = set(found.counts) - {"require_to_deny", "approver_changed"}
    allowed = ALLOWED_SECONDS_PER_10000 * args.count / 10_000
    print(f"ratio replay / allowed ({allowed:.2f} s)  {wall / allowed:.2f}")
    if not found.changed or unexpected:
        print(f"unexpected changes: {sorted(unexpected)}" if unexpected else "no change found")
        sys.exit(1)


def decisions(count: int, rules: list) -> list:
    """`count` requests as the rules saw them, each decided by `rules` (as they were)."""
    from tenants import whatif

    chooser = random.Random(7)  # noqa: S311 - varied test data, not a secret
    kinds = ["namespace", "project", "quota_change", "ephemeral", "decommission"]
    tier_sets = [["dev"], ["staging"], ["prod"], ["dev", "staging", "prod"], ["review"]]
    roles = ["owner", "member", "member", "member"]
    now = datetime.now(UTC)
    seen = []
    for number in range(count):
        tiers = chooser.choice(tier_sets)
        seen.append(
            {
                "kind": chooser.choice(kinds),
                "tenant": f"team-{number % 40}",
                "tier": tiers[-1],
                "tiers": tiers,
                "cluster": chooser.choice(["sandbox", "prod-eu"]),
                "cpu_millis": chooser.choice([500, 1000, 4000, 16000]),
                "memory_mib": chooser.choice([512, 2048, 8192]),
                "storage_gib": 0,
                "ephemeral": tiers == ["review"],
                "requester": f"dev{number % 300}",
                "requester_role": chooser.choice(roles),
                "requester_groups": [f"team-{number % 40}-devs"],
                "requester_platform_admin": False,
            }
        )
    return [
        whatif.PastDecision(
            tenant=attributes["tenant"],
            kind=attributes["kind"],
            decided_at=now - timedelta(minutes=number),
            attributes=attributes,
            decided=decided,
            request_id=number + 1,
        )
        for number, (attributes, decided) in enumerate(
            zip(seen, whatif.decide_each(rules, seen), strict=True)
        )
    ]


if __name__ == "__main__":
    main()
