"""A newcomer's first command: `make run` prints its URL once the web server answers, and the
identity provider that signing in starts at answers too. It starts `make run` for real."""


def test_make_run_prints_its_url_when_the_web_server_answers(make_run_answering):
    run = make_run_answering
    health = run["health"]

    assert run["line"] == f"Berth is running at {run['url']}/"
    assert not isinstance(health, Exception), f"{run['line']}, yet /healthz: {health}"
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    # Signing in starts at the identity provider: it answers too.
    assert not isinstance(run["provider"], Exception), run["provider"]
    assert run["provider"].status_code == 200
