from tests.support.make_run import make_run_answering  # noqa: F401 - a fixture
