"""Reading GET /metrics as Prometheus would: every sample by name and labels."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

GIT_FAILURES = ("berth_git_push_failures_total", ())


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples
