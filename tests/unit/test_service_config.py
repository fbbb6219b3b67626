"""service/config.py: service.toml is typed and strict; every mistake is an error naming its key."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from autograder.service.config import ConfigError, Policy, load, parse

GOOD = """
[service]
exchange = "/srv/nbgrader/exchange"
course = "attention101"
assignment = "attention"
state = "/var/lib/autograder-service"
secret_file = "/etc/autograder/secret"
instructors = "instructors"
poll_seconds = 1.0
dask = ""
concurrent_batches = 2

[policy]
attempts = 3
period = "day"
over_limit = "wait"
due = 2026-12-20T23:59:00+00:00
before_due = "checks"
after_due = "all"
"""


def test_the_contracts_example_reads(tmp_path):
    path = tmp_path / "service.toml"
    path.write_text(GOOD)
    config = load(path)
    assert config.course == "attention101" and config.assignment == "attention"
    assert str(config.exchange) == "/srv/nbgrader/exchange" and config.poll_seconds == 1.0 and config.dask == ""
    assert config.concurrent_batches == 2
    assert config.policy == Policy(3, "day", "wait", datetime(2026, 12, 20, 23, 59, tzinfo=timezone.utc), "checks", "all")


def test_the_policy_table_may_be_left_out():
    config = parse({"service": {"exchange": "/e", "course": "c", "assignment": "a", "state": "/s", "secret_file": "/k"}})
    assert config.policy == Policy() and config.instructors == "instructors"


def table(**changes):
    import tomllib

    data = tomllib.loads(GOOD)
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        if value is None:
            del data[section][key]
        else:
            data[section][key] = value
    return data


@pytest.mark.parametrize("changes, named", [
    ({"service__atempts": 3}, "unknown key service.atempts"),
    ({"policy__atempts": 3}, "unknown key policy.atempts"),
    ({"service__course": None}, "service.course is required"),
    ({"service__exchange": "relative/path"}, "service.exchange"),
    ({"service__course": "a+b"}, "service.course"),
    ({"service__poll_seconds": "1"}, "service.poll_seconds"),
    ({"service__poll_seconds": 0}, "service.poll_seconds"),
    ({"service__concurrent_batches": 0}, "service.concurrent_batches"),
    ({"service__concurrent_batches": 1.5}, "service.concurrent_batches"),
    ({"service__concurrent_batches": True}, "service.concurrent_batches"),
    ({"policy__attempts": -1}, "policy.attempts"),
    ({"policy__attempts": True}, "policy.attempts"),
    ({"policy__period": "month"}, "policy.period"),
    ({"policy__over_limit": "drop"}, "policy.over_limit"),
    ({"policy__before_due": "everything"}, "policy.before_due"),
    ({"policy__due": "2026-12-20T23:59:00"}, "policy.due"),
    ({"policy__due": "tomorrow"}, "policy.due"),
])
def test_each_mistake_names_its_key(changes, named):
    with pytest.raises(ConfigError, match=named.replace("+", r"\+")):
        parse(table(**changes))


def test_an_unknown_table_is_named():
    data = table()
    data["polcy"] = {}
    with pytest.raises(ConfigError, match="unknown key polcy"):
        parse(data)


def test_a_due_date_as_text_with_its_offset_reads():
    config = parse(table(policy__due="2026-12-21T01:59:00+02:00"))
    assert config.policy.due == datetime(2026, 12, 20, 23, 59, tzinfo=timezone.utc)


def test_not_toml_is_a_clear_error(tmp_path):
    path = tmp_path / "service.toml"
    path.write_text("[service\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(path)


def test_the_secret_is_read_from_its_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret\n")
    config = parse(table(service__secret_file=str(secret)))
    assert config.secret() == "s3cret"
    secret.write_text("\n")
    with pytest.raises(ConfigError, match="not empty"):
        config.secret()


def test_the_student_id_of_a_hub_user_follows_its_template():
    assert parse(table()).student_of("alice") == "alice"
    assert parse(table(service__student_id="jupyter-{name}")).student_of("alice") == "jupyter-alice"
    for wrong in ("jupyter", "{name}-{name}", "a+{name}", "{user}"):
        with pytest.raises(ConfigError, match="service.student_id"):
            parse(table(service__student_id=wrong))


def test_the_release_graded_against_is_what_the_students_fetched(tmp_path):
    """Default: the exchange's outbound/<assignment>/ where nbgrader released it; else the package's own (None);
    a configured folder wins, and must be an absolute path."""
    service = {"exchange": str(tmp_path), "course": "c", "assignment": "attention", "state": str(tmp_path / "s"),
               "secret_file": str(tmp_path / "secret")}
    assert parse({"service": service}).release_folder() is None
    outbound = tmp_path / "c" / "outbound" / "attention"
    outbound.mkdir(parents=True)
    (outbound / "attention.ipynb").write_text("{}")
    assert parse({"service": service}).release_folder() == outbound
    assert parse({"service": {**service, "release": "/srv/r"}}).release_folder() == Path("/srv/r")
    with pytest.raises(ConfigError, match="service.release"):
        parse({"service": {**service, "release": "relative/r"}})
