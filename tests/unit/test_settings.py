"""Settings travel one way, typed, by field name: a run's (`WorkerSettings`, to its workers over a socket and
to Dask workers in the grading plugin) and a sandbox's (`SandboxConfig`, to the zygote), each with the run's
`Limits`. Each reads back what it wrote, and refuses a key it does not have or lacks one it needs."""

from __future__ import annotations

import dataclasses
import json
import socket

import pytest

from autograder.pool import batch, worker
from autograder.pool.worker import WorkerSettings
from autograder.isolation.fields import SettingsError
from autograder.isolation.limits import Limits, SandboxConfig
from autograder.isolation.policy import View

LIMITS = Limits(call_seconds=7.5, budget_seconds=90.0, leash_seconds=2.0, cpu_seconds=30, memory_bytes=2**29,
                file_bytes=2**20, processes=64, scratch_bytes=2**22, gpu_memory_fraction=0.25)
VIEW = View(expose=("/usr", "/lib"), hide=("/usr/lib/secret",), devices=("/dev/null", "/dev/nvidia0"))
EXAMPLES = [
    LIMITS,
    VIEW,
    WorkerSettings(secret="course secret", limits=LIMITS, secrets=("/reports", "/class"), allow_weak=True,
                   cpu_slots=(5, 6, 7)),
    SandboxConfig(LIMITS, VIEW, preload=("torch", "numpy"), public={"helpers.py": b"X = 1\n\x00\xff"},
                  fonts={"fontlist-v390.json": b"{}"}),
    WorkerSettings(),
    SandboxConfig(Limits(), View((), (), ())),
]


@pytest.mark.parametrize("settings", EXAMPLES, ids=lambda s: type(s).__name__)
def test_each_settings_class_reads_back_what_it_wrote_through_json(settings):
    data = json.loads(json.dumps(settings.to_json()))
    again = type(settings).from_json(data)
    assert again == settings
    assert [type(getattr(again, f.name)) for f in dataclasses.fields(again)] == \
        [type(getattr(settings, f.name)) for f in dataclasses.fields(settings)]  # tuples stay tuples, bytes bytes


def test_every_field_travels_by_its_name():
    assert set(LIMITS.to_json()) == {f.name for f in dataclasses.fields(Limits)}
    assert WorkerSettings(limits=LIMITS).to_json()["limits"]["memory_bytes"] == 2**29
    assert SandboxConfig(LIMITS, VIEW).to_json()["limits"] == LIMITS.to_json()  # the zygote gets the same object


@pytest.mark.parametrize("settings", EXAMPLES, ids=lambda s: type(s).__name__)
def test_an_unknown_key_is_refused_by_name(settings):
    with pytest.raises(SettingsError, match="unknown key 'sandbox'"):
        type(settings).from_json({**settings.to_json(), "sandbox": {"memory_bytes": 1}})


def test_a_missing_key_is_refused_by_name_not_filled_with_a_default():
    data = WorkerSettings(limits=LIMITS).to_json()
    del data["limits"]["processes"]
    with pytest.raises(SettingsError, match=r"WorkerSettings\.limits: missing key 'processes'"):
        WorkerSettings.from_json(data)


@pytest.mark.parametrize("field, value", [("processes", "64"), ("processes", 64.0), ("processes", True),
                                          ("call_seconds", "7"), ("call_seconds", None)])
def test_a_value_of_another_type_is_refused(field, value):
    with pytest.raises(SettingsError, match=rf"Limits\.{field}: expected"):
        Limits.from_json({**LIMITS.to_json(), field: value})


def test_a_list_of_limits_by_position_is_refused():
    with pytest.raises(SettingsError, match="expected an object"):
        SandboxConfig.from_json({**SandboxConfig(LIMITS, VIEW).to_json(), "limits": [30, 2**29, 2**20, 64, 2**22]})


def test_a_worker_reads_the_run_s_settings_from_its_socket():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        settings = WorkerSettings(secret="s", limits=LIMITS, secrets=("/reports",))
        worker._send(ours, {"settings": settings.to_json()})
        assert worker._settings(theirs) == settings


def test_a_worker_told_settings_it_cannot_read_says_why_and_stops():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        worker._send(ours, {"settings": {**WorkerSettings().to_json(), "sandbox": {}}})
        with pytest.raises(SystemExit):
            worker._settings(theirs)
        assert "unknown key 'sandbox'" in worker._receive(ours)["fatal"]


def test_the_dask_plugin_carries_the_settings_as_plain_data():
    cluster = pytest.importorskip("autograder.pool.cluster")
    settings = WorkerSettings(secret="s", limits=LIMITS)
    plugin = cluster.WorkerOnDask(settings)
    assert json.loads(json.dumps(plugin.settings)) == plugin.settings
    assert WorkerSettings.from_json(plugin.settings) == settings


def test_a_local_run_fits_only_the_limits_left_at_their_defaults():
    fitted = batch.fitted_limits(Limits(call_seconds=5), workers=3, memory_limit=2**33)
    assert fitted.call_seconds == 5
    assert fitted.gpu_memory_fraction == 1 / 4
    assert fitted.memory_bytes == max(batch.MIN_SANDBOX_MEMORY_BYTES, min(Limits().memory_bytes, 2**33 // 2 // 6))
    given = Limits(memory_bytes=2**28, gpu_memory_fraction=0.5)
    assert batch.fitted_limits(given, workers=3, memory_limit=2**33) == given
    assert batch.fitted_limits(Limits(), workers=1, memory_limit=None).memory_bytes == Limits().memory_bytes
