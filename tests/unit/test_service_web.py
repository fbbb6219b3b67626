"""service/web.py: who asks decides what is shown. The hub's login is faked (HubOAuthenticated.get_current_user
patched to read a test header); everything else is the service's tornado application as served."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from unittest import mock

import pytest
from tornado.testing import AsyncHTTPTestCase

from autograder.api import CheckResult, GradedSubmission
from autograder.service.config import Policy, ServiceConfig
from autograder.service.exchange import Found
from autograder.service.queue import Queue
from autograder.service.web import Site, make_app

PREFIX = "/services/autograder/"
NOW = datetime(2026, 12, 10, 12, 0, tzinfo=timezone.utc)
HIDDEN = "expected 0.7311 at [3, 1]"
USERS = {"alice": {"kind": "user", "name": "alice", "groups": []},
         "bob": {"kind": "user", "name": "bob", "groups": ["students"]},
         "teacher": {"kind": "user", "name": "teacher", "groups": ["instructors"]},
         "svc": {"kind": "service", "name": "alice"}}


def fake_user(handler):
    """The hub's user model for the name in the test's X-Test-User header; None (not logged in) without one."""
    return USERS.get(handler.request.headers.get("X-Test-User", ""))


class ServicePage(AsyncHTTPTestCase):
    def get_app(self):
        self.folder = self._folder()
        queue = Queue(self.folder / "state")
        stamp = NOW - timedelta(hours=1)
        queue.record([Found(f"{name}+attention+{stamp} UTC", name, stamp + timedelta(minutes=i), name, True)
                      for i, name in enumerate(["alice", "bob", "<script>x</script>"])], NOW)
        for row in queue.next_batch(Policy(), NOW, size=8):
            queue.finish(row.id, GradedSubmission(f"s{row.id}", [
                CheckResult("masks", f"{row.student}'s check", 2, row.student == "alice"),
                CheckResult("scaling", "scores", 3, False, [HIDDEN])]), NOW)
        config = ServiceConfig(self.folder / "exchange", "course101", "attention", self.folder / "state",
                               self.folder / "secret", policy=Policy(before_due="checks", due=NOW + timedelta(days=3)))
        self.patch = mock.patch("jupyterhub.services.auth.HubOAuthenticated.get_current_user", fake_user)
        self.patch.start()
        return make_app(Site(queue, config, lambda: NOW), PREFIX)

    def _folder(self):
        import tempfile
        from pathlib import Path

        self._tmp = tempfile.TemporaryDirectory()
        return Path(self._tmp.name)

    def tearDown(self):
        self.patch.stop()
        super().tearDown()
        self._tmp.cleanup()

    def get(self, path, user=None):
        headers = {"X-Test-User": user} if user else {}
        return self.fetch(PREFIX + path, headers=headers, follow_redirects=False)

    def test_a_student_sees_only_their_own(self):
        mine = json.loads(self.get("api/mine", "alice").body)
        assert mine["user"] == "alice" and len(mine["submissions"]) == 1
        (entry,) = mine["submissions"]
        assert entry["state"] == "graded" and (entry["score"], entry["out_of"]) == (2, 5)
        assert [c["passed"] for c in entry["checks"]] == [True, False]
        text = self.get("api/mine", "alice").body.decode()
        assert "bob" not in text and HIDDEN not in text  # checks: no hidden inputs before the due date
        page = self.get("", "alice").body.decode()
        assert "alice&#x27;s check" in page and "bob" not in page and HIDDEN not in page

    def test_no_query_reaches_another_students_data(self):
        for path in ("api/mine?user=bob", "api/mine?student=bob", "?user=bob"):
            assert "bob&#x27;s" not in self.get(path, "alice").body.decode()
            assert "bob's" not in self.get(path, "alice").body.decode()
        assert self.get("api/mine/bob", "alice").code == 404
        assert self.get("bob", "alice").code == 404

    def test_the_instructor_sees_the_class(self):
        data = json.loads(self.get("api/class", "teacher").body)
        assert sorted(e["student"] for e in data["submissions"]) == ["<script>x</script>", "alice", "bob"]
        page = self.get("", "teacher").body.decode()
        assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>" not in page  # escaped
        assert "3 graded" in page

    def test_a_student_gets_403_on_the_class(self):
        assert self.get("api/class", "bob").code == 403
        assert self.get("api/class", "alice").code == 403

    def test_no_login_gets_nothing(self):
        for path in ("api/mine", "api/class"):
            response = self.get(path)
            assert response.code == 403 and b"alice" not in response.body
        page = self.get("")
        assert page.code == 302 and b"alice" not in page.body  # the page redirects to the hub's login

    def test_a_service_token_is_no_student(self):
        assert self.get("api/mine", "svc").code == 403

    def test_headers_forbid_scripts_and_caching(self):
        response = self.get("", "alice")
        assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("prefix", ["/services/autograder/", "/services/autograder", "services/autograder/"])
def test_any_spelling_of_the_prefix_routes_alike(prefix, tmp_path):
    config = ServiceConfig(tmp_path, "c", "a", tmp_path / "state", tmp_path / "s")
    app = make_app(Site(Queue(tmp_path / "state"), config, lambda: NOW), prefix)
    patterns = [rule.matcher.regex.pattern for rule in app.wildcard_router.rules]
    assert patterns[0] == r"/services/autograder/$"


def test_a_hub_user_sees_the_submissions_of_their_student_id(tmp_path):
    """TLJH names alice's account `jupyter-alice`, and nbgrader her submissions after it: `student_id` maps."""
    queue = Queue(tmp_path / "state")
    queue.record([Found(f"{name}+attention+{NOW} UTC", name, NOW, name, True) for name in ("jupyter-alice", "alice")],
                 NOW)
    config = ServiceConfig(tmp_path, "c", "a", tmp_path / "state", tmp_path / "s", student_id="jupyter-{name}")
    mine = Site(queue, config, lambda: NOW).mine("alice")
    assert [e["id"] for e in mine["submissions"]] == [queue.rows("jupyter-alice")[0].id]
