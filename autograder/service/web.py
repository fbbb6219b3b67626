"""The service's page under a JupyterHub: `{prefix}` (HTML), `{prefix}api/mine` and `{prefix}api/class` (JSON),
behind the hub's login (jupyterhub.services.auth.HubOAuthenticated, HubOAuthCallbackHandler at
`{prefix}oauth_callback`).

Who asks decides what is shown, and nothing a request carries does: no route takes a user name or an id, so
another student's submissions are out of reach by construction. A student gets their own submissions, as the
policy lets them see at that moment (policy.student_view); a member of the instructors group (the hub's user
model lists the user's groups) gets the class. Nobody logged in gets a redirect to the hub's login (the page)
or 403 (the API); a student asking for the class gets 403.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

import tornado.web
from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated

from . import render
from .config import ServiceConfig
from .policy import instructor_view, student_view
from .queue import Queue

HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'",
           "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


@dataclass
class Site:
    """What the handlers read: the queue, the configuration, and the clock (a test's own)."""

    queue: Queue
    config: ServiceConfig
    clock: Callable[[], datetime]

    def mine(self, user: str) -> dict[str, Any]:
        now = self.clock()
        rows = [r for r in self.queue.rows(self.config.student_of(user)) if not r.impostor]
        return {"user": user, "submissions": [student_view(r.seen(), self.config.policy, now) for r in rows],
                "verified": all(r.verified for r in rows)}

    def everyone(self) -> dict[str, Any]:
        return {"course": self.config.course, "assignment": self.config.assignment,
                "submissions": [instructor_view(r.seen()) for r in self.queue.rows()]}


class _Handler(HubOAuthenticated, tornado.web.RequestHandler):
    """Every handler's common part: the site, the logged-in user's name, whether they are staff."""

    site: Site

    def initialize(self, site: Site) -> None:
        self.site = site

    def set_default_headers(self) -> None:
        for name, value in HEADERS.items():
            self.set_header(name, value)

    @property
    def user_name(self) -> str | None:
        user = self.current_user
        if not isinstance(user, dict) or user.get("kind", "user") != "user" or not isinstance(user.get("name"), str):
            return None
        return user["name"]

    @property
    def is_instructor(self) -> bool:
        user = self.current_user
        groups = user.get("groups") if isinstance(user, dict) else None
        return isinstance(groups, list) and self.site.config.instructors in groups

    def write_json(self, data: dict[str, Any]) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(json.dumps(data))


class PageHandler(_Handler):
    """`{prefix}`: the class for staff, a student's own submissions for anyone else."""

    @tornado.web.authenticated
    def get(self) -> None:
        name = self.user_name
        if name is None:
            raise tornado.web.HTTPError(403)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        if self.is_instructor:
            data = self.site.everyone()
            self.finish(render.class_page(data["submissions"], not all(e["verified"] for e in data["submissions"])))
        else:
            mine = self.site.mine(name)
            self.finish(render.student_page(name, mine["submissions"], not mine["verified"]))


class _ApiHandler(_Handler):
    def get_login_url(self) -> str:
        raise tornado.web.HTTPError(403)  # an API call is never redirected to a login page

    def prepare(self) -> None:
        if self.user_name is None:
            raise tornado.web.HTTPError(403)


class MineHandler(_ApiHandler):
    """`{prefix}api/mine`: the logged-in user's submissions, the fields the policy hides absent."""

    def get(self) -> None:
        mine = self.site.mine(self.user_name or "")
        self.write_json({"user": mine["user"], "submissions": mine["submissions"]})


class ClassHandler(_ApiHandler):
    """`{prefix}api/class`: the class, for members of the instructors group; 403 for anyone else."""

    def get(self) -> None:
        if not self.is_instructor:
            raise tornado.web.HTTPError(403)
        self.write_json(self.site.everyone())


def make_app(site: Site, prefix: str) -> tornado.web.Application:
    """The tornado application of the page, its routes under `prefix` (JUPYTERHUB_SERVICE_PREFIX)."""
    base = "/" + prefix.strip("/") + "/" if prefix.strip("/") else "/"
    at = re.escape(base)
    routes: list[Any] = [(at, PageHandler, {"site": site}), (at + r"api/mine", MineHandler, {"site": site}),
                         (at + r"api/class", ClassHandler, {"site": site}), (at + r"oauth_callback", HubOAuthCallbackHandler)]
    return tornado.web.Application(routes, cookie_secret=os.urandom(32), autoreload=False)


class Server:
    """The page served from a thread of its own (the grading loop keeps the main thread, where the class run's
    signal handling must be): `start`, then `stop` on the way out."""

    def __init__(self, app: tornado.web.Application, host: str, port: int) -> None:
        self.app, self.host, self.port = app, host, port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="autograder-service-web", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            server = self.app.listen(self.port, self.host)
        except OSError as exc:
            self.error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.stop()
            loop.close()

    def stop(self) -> None:
        if self._loop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
