"""A real JupyterHub around the grading service, with real Unix users: shared by tests/hub and tools/bench_service.py.

Everything lives in one temporary folder (``Site.base``, /tmp/ag-hub-*, traversable by the test users):

* ``exchange/``: nbgrader's exchange root, root-owned, mode 1777 (world-writable and sticky, as nbgrader's docs
  ask); the instructor's ``release_assignment`` makes ``<course>/`` in it, group-shared with the course group
  (``ag_course``: the instructor and the service's user), so the service may list ``inbound/`` and write
  ``feedback/``; every student may create a folder in ``inbound/`` (nbgrader's mode 2733), read none;
* ``etc/jupyter/nbgrader_config.py``: the global nbgrader configuration the students read (``c.Exchange.root``,
  ``c.CourseDirectory.course_id``), found through ``JUPYTER_CONFIG_PATH`` (the spawner's environment, and the
  environment of every ``nbgrader`` command run as a student): the machine's /etc is never touched;
* ``home/<user>/``: each test user's home (the instructor's holds the course root, ``course/``);
* ``service/``: ``service.toml``, the secret and the service's own state, owned by the service's user;
* ``hub/``: jupyterhub_config.py, its database, cookie secret and log (root only).

The users are created with ``useradd`` and removed with ``userdel`` (their processes, which these tests
started, ended first by their ids); nothing is left behind, whatever failed.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV_BIN = Path(sys.executable).parent
NODE_MODULES = HERE / "node_modules"
PROXY = NODE_MODULES / ".bin" / "configurable-http-proxy"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

COURSE_ID = "attention101"
ASSIGNMENT = "attention"
STUDENTS = ("ag_stu_a", "ag_stu_b")
INSTRUCTOR = "ag_teacher"
SERVICE_USER = "autograder_svc"
COURSE_GROUP = "ag_course"
INSTRUCTORS_GROUP = "instructors"  # the hub group whose members see the class
SERVICE_NAME = "autograder"
HUB_START_S = 60
SERVER_START_S = 120
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


# --------------------------------------------------------------------------
# what the hub tests need


def missing_for_users() -> str | None:
    """Why real Unix users cannot be made here, or None."""
    if os.geteuid() != 0:
        return "not root: the hub tests create real Unix users (useradd) and run the hub as root"
    for tool in ("useradd", "userdel", "groupadd", "groupdel", "runuser"):
        if shutil.which(tool) is None:
            return f"no {tool} on PATH"
    return None


def missing_for_hub() -> str | None:
    """Why the hub cannot run here, or None."""
    reason = missing_for_users()
    if reason:
        return reason
    if not (VENV_BIN / "jupyterhub").is_file():
        return f"no jupyterhub in {VENV_BIN} (make venv installs requirements-dev.lock)"
    if not reachable_by_all(ROOT / "autograder"):
        return f"{ROOT} is not open to other users: the students' servers and the service import the package from it"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path=SYSTEM_PATH)
    if not reachable_by_all(Path(sys.executable)) and (system is None or not reachable_by_all(Path(system))):
        return f"no {version} that other users may run ({sys.executable} is not open to them, none on {SYSTEM_PATH})"
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"no {tool} on PATH (Debian: apt-get install nodejs npm)"
    return None


def missing_for_browser() -> str | None:
    reason = missing_for_hub()
    if reason:
        return reason
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    return None


def pinned_versions() -> dict[str, str]:
    lock = json.loads((HERE / "package-lock.json").read_text())
    return {name[len("node_modules/"):]: entry["version"] for name, entry in lock["packages"].items()
            if name.count("node_modules/") == 1}


def install_node_modules() -> None:
    """``npm ci`` into tests/hub/node_modules (gitignored), unless every pinned version is there."""
    def installed(package: str) -> str | None:
        manifest = NODE_MODULES / package / "package.json"
        return json.loads(manifest.read_text())["version"] if manifest.is_file() else None

    if all(installed(name) == version for name, version in pinned_versions().items()):
        return
    proc = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=HERE,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"npm ci in {HERE} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def poll(what: str, condition, deadline_s: float, interval: float = 0.2):
    """Call ``condition`` until it returns something true (returned) or the deadline passes (raises)."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {deadline_s} s waiting for {what}")
        time.sleep(interval)  # a poll interval, not a wait for something to happen


# --------------------------------------------------------------------------
# real Unix users


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def _exists_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _exists_group(name: str) -> bool:
    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def processes_of(uid: int) -> list[int]:
    """Ids of the processes running as ``uid`` (real or effective)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                for line in fh:
                    if line.startswith("Uid:"):
                        if uid in {int(x) for x in line.split()[1:]}:
                            found.append(int(entry))
                        break
        except OSError:
            continue
    return found


def end_processes_of(uid: int, grace_s: float = 10) -> list[int]:
    """SIGTERM, then SIGKILL, each process of ``uid`` (only the test users': these tests started them all);
    returns those still there at the end."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_of(uid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace_s
        while processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.1)  # a poll interval
    return processes_of(uid)


@dataclass
class Users:
    """The test's Unix users, removed (with their processes) by ``remove``."""

    homes: Path
    made: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)

    def group(self, name: str) -> None:
        if _exists_group(name):
            _run(["groupdel", name])  # a test group left by a run that was killed
        _run(["groupadd", name])
        self.groups.append(name)

    def add(self, name: str, groups: Iterable[str] = ()) -> pwd.struct_passwd:
        if _exists_user(name):
            self._remove_user(name)  # a test user left by a run that was killed
        home = self.homes / name
        args = ["useradd", "--home-dir", str(home), "--create-home", "--shell", "/bin/bash", "--user-group"]
        if groups:
            args += ["--groups", ",".join(groups)]
        _run(args + [name])
        self.made.append(name)
        os.chmod(home, 0o755)  # JupyterLab, nbgrader and the browser test read nothing private here
        return pwd.getpwnam(name)

    @staticmethod
    def _remove_user(name: str) -> list[str]:
        problems = []
        try:
            uid = pwd.getpwnam(name).pw_uid
        except KeyError:
            return problems
        left = end_processes_of(uid)
        if left:
            problems.append(f"{name}: processes {left} would not end")
        proc = subprocess.run(["userdel", name], capture_output=True, text=True)
        if proc.returncode != 0:
            problems.append(f"userdel {name}: {proc.stderr.strip()}")
        if _exists_group(name):
            subprocess.run(["groupdel", name], capture_output=True)
        return problems

    def remove(self) -> list[str]:
        problems = []
        for name in reversed(self.made):
            problems += self._remove_user(name)
        for name in reversed(self.groups):
            proc = subprocess.run(["groupdel", name], capture_output=True, text=True)
            if proc.returncode != 0:
                problems.append(f"groupdel {name}: {proc.stderr.strip()}")
        self.made.clear()
        self.groups.clear()
        return problems


def jupyter_paths(site: "Site") -> dict[str, str]:
    """The students' nbgrader configuration first, then this venv's Jupyter configuration and data (its
    server extensions: JupyterLab, nbgrader's; its lab extensions: nbgrader's Assignments tab), which the
    shared Python (another prefix) would not read on its own."""
    return {"JUPYTER_CONFIG_PATH": f"{site.etc_jupyter}:{sys.prefix}/etc/jupyter",
            "JUPYTER_PATH": f"{sys.prefix}/share/jupyter"}


def user_env(user: str, site: "Site", extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment for a command run as ``user``: this venv first on PATH, the site's Jupyter
    configuration path, the user's home."""
    entry = pwd.getpwnam(user)
    env = {"HOME": entry.pw_dir, "USER": user, "LOGNAME": user, "SHELL": "/bin/bash", "LANG": "C.UTF-8",
           "PATH": f"{site.python.parent}:{SYSTEM_PATH}", **jupyter_paths(site),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


def as_user(user: str, args: list[str], site: "Site", *, cwd: Path | None = None,
            env: Mapping[str, str] | None = None, timeout: float = 300, check: bool = True) -> subprocess.CompletedProcess:
    """``args`` run as ``user`` (runuser, with a clean environment) in ``cwd`` (the user's home)."""
    full_env = user_env(user, site, env)
    command = ["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in full_env.items()), *args]
    proc = subprocess.run(command, cwd=cwd or full_env["HOME"], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"as {user}: {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


# --------------------------------------------------------------------------
# the site: exchange, course, global nbgrader configuration


@dataclass
class Site:
    base: Path
    students: tuple[str, ...]
    real_users: bool = True
    users: Users | None = None
    python: Path = Path(sys.executable)  # a Python every test user may run (shared_python)

    @property
    def exchange(self) -> Path:
        return self.base / "exchange"

    @property
    def etc_jupyter(self) -> Path:
        return self.base / "etc" / "jupyter"

    @property
    def homes(self) -> Path:
        return self.base / "home"

    def home(self, user: str) -> Path:
        return self.homes / user

    @property
    def course_root(self) -> Path:
        return self.home(INSTRUCTOR) / "course"

    @property
    def service_dir(self) -> Path:
        return self.base / "service"

    @property
    def service_toml(self) -> Path:
        return self.service_dir / "service.toml"

    @property
    def state(self) -> Path:
        return self.service_dir / "state"

    @property
    def inbound(self) -> Path:
        return self.exchange / COURSE_ID / "inbound"

    @property
    def feedback(self) -> Path:
        return self.exchange / COURSE_ID / "feedback"


def reachable_by_all(path: Path) -> bool:
    """Whether every user may run ``path``: it and each folder above it (links resolved) open to others."""
    real = Path(os.path.realpath(path))
    if not os.stat(real).st_mode & stat.S_IXOTH:
        return False
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in real.parents)


def shared_python(base: Path) -> Path:
    """A Python every test user may run, with this venv's packages: this venv's own where its interpreter is
    reachable by all; otherwise (a venv made from a Python under /root, mode 0700) a venv at ``base/venv`` made
    from the system's Python of the same version, whose site-packages adds this venv's (a .pth file), and
    whose bin/ holds this venv's console scripts, pointed at it."""
    if reachable_by_all(Path(sys.executable)):
        return Path(sys.executable)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path=SYSTEM_PATH)
    if system is None or not reachable_by_all(Path(system)):
        raise RuntimeError(f"{sys.executable} is not reachable by other users, and there is no {version} "
                           f"on {SYSTEM_PATH} that is")
    venv = base / "venv"
    _run([system, "-m", "venv", "--without-pip", str(venv)])
    site_packages = next(Path(sys.prefix).glob(f"lib/{version}/site-packages"))
    (venv / "lib" / version / "site-packages" / "ag_hub_venv.pth").write_text(
        f"import site; site.addsitedir({str(site_packages)!r})\n")
    python = venv / "bin" / "python"
    for script in VENV_BIN.iterdir():
        target = venv / "bin" / script.name
        if target.exists() or not script.is_file() or script.is_symlink():
            continue
        try:
            text = script.read_text()
        except UnicodeDecodeError:
            continue
        if text.startswith(f"#!{sys.executable}\n") or text.startswith(f"#!{VENV_BIN / 'python'}\n"):
            target.write_text(f"#!{python}\n" + text.split("\n", 1)[1])
            os.chmod(target, 0o755)
    for path in [venv, *venv.rglob("*")]:
        if not path.is_symlink():
            os.chmod(path, os.stat(path).st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
    return python


def make_base() -> Path:
    """A fresh /tmp/ag-hub-* folder, traversable by every user (pytest's own tmp folders are root's 0700)."""
    base = Path(tempfile.mkdtemp(prefix="ag-hub-", dir="/tmp"))
    os.chmod(base, 0o755)
    return base


def write_global_config(site: Site) -> None:
    site.etc_jupyter.mkdir(parents=True, exist_ok=True)
    (site.etc_jupyter / "nbgrader_config.py").write_text(
        "# The students' nbgrader configuration (tests/hub): the shared exchange and the course.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.Exchange.root = {str(site.exchange)!r}\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n")
    for folder in (site.etc_jupyter, site.etc_jupyter.parent):
        os.chmod(folder, 0o755)
    os.chmod(site.etc_jupyter / "nbgrader_config.py", 0o644)


def make_exchange(site: Site) -> None:
    site.exchange.mkdir()
    os.chmod(site.exchange, 0o777 | stat.S_ISVTX)  # root-owned, world-writable and sticky


def make_course(site: Site) -> None:
    """The instructor's course root (the project's nbgrader_config.py and assignment source), its
    ``generate_assignment`` and ``release_assignment`` into the shared exchange, run as the instructor
    with the course group as primary group (group-shared, as nbgrader's ``groupshared`` makes it)."""
    from tools import course as C

    C.make_course_root(site.course_root, course_id=COURSE_ID, exchange=site.exchange)
    with (site.course_root / "nbgrader_config.py").open("a") as fh:
        fh.write("c.CourseDirectory.groupshared = True  # the service's user (group ag_course) reads inbound/ "
                 "and writes feedback/\n")
    owner = INSTRUCTOR if site.real_users else None
    if owner:
        entry = pwd.getpwnam(owner)
        for path in [site.course_root, *site.course_root.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid)
    env = {"JUPYTER_CONFIG_PATH": ""}  # the course root's own nbgrader_config.py, not the students'
    for step in (["generate_assignment", ASSIGNMENT, "--force"], ["release_assignment", ASSIGNMENT, "--force"]):
        args = [str(site.python), "-m", "nbgrader", *step]
        if owner:
            full_env = user_env(owner, site, env)
            command = ["runuser", "-u", owner, "-g", COURSE_GROUP, "--", "env", "-i",
                       *(f"{k}={v}" for k, v in full_env.items()), *args]
        else:
            command = args
        proc = subprocess.run(command, cwd=site.course_root, capture_output=True, text=True, timeout=300,
                              env=None if owner else {**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"})
        if proc.returncode != 0:
            raise RuntimeError(f"nbgrader {' '.join(step)} failed:\n{proc.stdout}\n{proc.stderr}")


def write_service_toml(site: Site, *, poll_seconds: float = 0.5, policy: Mapping[str, Any] | None = None) -> None:
    """service.toml (the contract's keys), the secret, and the state folder, owned by the service's user."""
    site.service_dir.mkdir(parents=True, exist_ok=True)
    secret = site.service_dir / "secret"
    secret.write_text(secrets.token_hex(16) + "\n")
    site.state.mkdir(exist_ok=True)
    policy = {"attempts": 0, "period": "day", "over_limit": "wait", "before_due": "all", "after_due": "all",
              **(policy or {})}

    def value(v: Any) -> str:
        return json.dumps(v) if not isinstance(v, bool) else str(v).lower()

    lines = ["[service]", f"exchange = {value(str(site.exchange))}", f"course = {value(COURSE_ID)}",
             f"assignment = {value(ASSIGNMENT)}", f"state = {value(str(site.state))}",
             f"secret_file = {value(str(secret))}", f"instructors = {value(INSTRUCTORS_GROUP)}",
             f"poll_seconds = {poll_seconds}", 'dask = ""', "", "[policy]",
             *(f"{k} = {value(v)}" for k, v in policy.items())]
    site.service_toml.write_text("\n".join(lines) + "\n")
    os.chmod(site.service_dir, 0o755)
    os.chmod(site.service_toml, 0o644)
    if site.real_users:
        entry = pwd.getpwnam(SERVICE_USER)
        for path in (site.state, secret):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        os.chmod(site.state, 0o700)
        os.chmod(secret, 0o600)


def make_site(students: Iterable[str] = STUDENTS, *, policy: Mapping[str, Any] | None = None,
              poll_seconds: float = 0.5) -> Site:
    """Users, exchange, course and the service's configuration (as root); ``remove_site`` undoes it all."""
    site = Site(make_base(), tuple(students))
    site.homes.mkdir()
    os.chmod(site.homes, 0o755)
    site.python = shared_python(site.base)
    site.users = Users(site.homes)
    try:
        site.users.group(COURSE_GROUP)
        site.users.add(INSTRUCTOR, [COURSE_GROUP])
        site.users.add(SERVICE_USER, [COURSE_GROUP])
        for student in site.students:
            site.users.add(student)
        make_exchange(site)
        write_global_config(site)
        make_course(site)
        write_service_toml(site, policy=policy, poll_seconds=poll_seconds)
    except BaseException:
        remove_site(site)
        raise
    return site


def remove_site(site: Site) -> list[str]:
    problems = site.users.remove() if site.users else []
    shutil.rmtree(site.base, ignore_errors=True)
    if site.base.exists():
        problems.append(f"{site.base} is still there")
    return problems


# --------------------------------------------------------------------------
# a student's side, as the real user


def nbgrader_as(site: Site, user: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return as_user(user, [str(site.python), "-m", "nbgrader", *args], site, check=check)


def solution_answers() -> dict[str, dict[str, str]]:
    from tools import course as C

    return C.solution_answers()


def write_answers(site: Site, user: str, answers: Mapping[str, Mapping[str, str]]) -> None:
    """``answers`` (notebook -> {grade_id: code}) typed into the user's fetched notebooks (then theirs again)."""
    from tools import course as C

    folder = site.home(user) / ASSIGNMENT
    entry = pwd.getpwnam(user)
    for notebook, cells in answers.items():
        path = folder / f"{notebook}.ipynb"
        C.fill_in(path, dict(cells))
        os.chown(path, entry.pw_uid, entry.pw_gid)


def fetch(site: Site, user: str) -> Path:
    folder = site.home(user) / ASSIGNMENT
    if not folder.exists():
        nbgrader_as(site, user, "fetch_assignment", ASSIGNMENT)
    return folder


def submit(site: Site, user: str) -> str:
    """``nbgrader submit attention`` as ``user``; the inbound folder's timestamp it made."""
    before = set(os.listdir(site.inbound))
    nbgrader_as(site, user, "submit", ASSIGNMENT)
    made = [name for name in set(os.listdir(site.inbound)) - before if name.startswith(f"{user}+{ASSIGNMENT}+")]
    assert len(made) == 1, made
    return made[0]


def fetch_feedback(site: Site, user: str) -> list[Path]:
    """``nbgrader fetch_feedback attention`` as ``user``: the feedback files now in their folder."""
    nbgrader_as(site, user, "fetch_feedback", ASSIGNMENT)
    return sorted((site.home(user) / ASSIGNMENT / "feedback").glob("*/*.html"))


# --------------------------------------------------------------------------
# JupyterHub


@dataclass
class Hub:
    site: Site
    port: int = 0
    admin_token: str = ""
    service_port: int = 0
    process: subprocess.Popen | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    password: str = ""
    with_service: bool = True  # False: the hub alone (to check the harness without the service)

    @property
    def folder(self) -> Path:
        return self.site.base / "hub"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def service_prefix(self) -> str:
        return f"/services/{SERVICE_NAME}/"

    @property
    def log(self) -> Path:
        return self.folder / "jupyterhub.log"

    def write_config(self) -> Path:
        self.folder.mkdir(exist_ok=True)
        os.chmod(self.folder, 0o700)
        self.port, self.service_port = self.port or free_port(), self.service_port or free_port()
        self.admin_token = self.admin_token or secrets.token_hex(24)
        self.password = self.password or secrets.token_hex(8)
        users = [*self.site.students, INSTRUCTOR]
        service_command = [str(self.site.python), "-m", "autograder", "serve", "--config", str(self.site.service_toml)]
        config = f"""# tests/hub: a real JupyterHub on 127.0.0.1 (written by tests/hub/harness.py)
import sys
c = get_config()  # noqa: F821
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {self.port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.auth_token = {secrets.token_hex(24)!r}
c.JupyterHub.db_url = "sqlite:///{self.folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{self.folder}/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {self.password!r}
c.Authenticator.allowed_users = {set(users)!r}
c.JupyterHub.load_groups = {{{INSTRUCTORS_GROUP!r}: {{"users": [{INSTRUCTOR!r}]}}}}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{str(self.site.python)!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {SERVER_START_S}
c.Spawner.http_timeout = {SERVER_START_S}
c.Spawner.environment = {{
    "PATH": {f"{self.site.python.parent}:{SYSTEM_PATH}"!r},
    **{jupyter_paths(self.site)!r},
    "PYTHONDONTWRITEBYTECODE": "1",
}}
c.JupyterHub.services = [
    {{
        "name": {SERVICE_NAME!r},
        "url": "http://127.0.0.1:{self.service_port}",
        "command": {service_command!r},
        "user": {SERVICE_USER!r},
        "oauth_no_confirm": True,
    }},
    {{"name": "hub-tests", "api_token": {self.admin_token!r}}},
][{0 if self.with_service else 1}:]
c.JupyterHub.load_roles = [
    {{"name": "user", "scopes": ["self", "access:services!service={SERVICE_NAME}"]}},
    {{"name": "hub-tests", "scopes": ["admin:users", "admin:servers", "tokens", "list:users", "read:users",
                                      "admin:groups"], "services": ["hub-tests"]}},
]
"""
        path = self.folder / "jupyterhub_config.py"
        path.write_text(config)
        return path

    def start(self) -> None:
        config = self.write_config()
        env = {"PATH": f"{VENV_BIN}:{os.path.dirname(shutil.which('node') or '/usr/bin/node')}:{SYSTEM_PATH}",
               "HOME": str(self.folder), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        log = self.log.open("a")
        self.process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(config)], cwd=self.folder, env=env,
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        try:
            poll("the hub to answer", self._answering, HUB_START_S)
        except BaseException:
            self.stop()
            raise

    def _answering(self) -> bool:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError(f"the hub exited:\n{self.log_tail()}")
        try:
            status, _ = self.api("GET", "/hub/api/")
            return status == 200
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM to the hub (it stops the servers and the service it started), then wait."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    # ---- HTTP

    def request(self, method: str, path: str, token: str | None = None, body: Any = None,
                follow: bool = True) -> tuple[int, bytes, dict[str, str]]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            req.add_header("Authorization", f"token {token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        opener = urllib.request.build_opener() if follow else urllib.request.build_opener(_NoRedirect())
        try:
            with opener.open(req, timeout=30) as reply:
                return reply.status, reply.read(), {k.lower(): v for k, v in reply.headers.items()}
        except urllib.error.HTTPError as error:
            return error.code, error.read(), {k.lower(): v for k, v in (error.headers or {}).items()}

    def api(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        status, content, _ = self.request(method, path, token or self.admin_token, body)
        try:
            return status, json.loads(content) if content else None
        except ValueError:
            return status, content.decode(errors="replace")

    def token(self, user: str) -> str:
        """An API token of ``user`` (with all of that user's permissions), made once."""
        if user not in self.tokens:
            status, reply = self.api("POST", f"/hub/api/users/{user}/tokens", {"note": "tests/hub"})
            assert status == 201, (status, reply)
            self.tokens[user] = reply["token"]
        return self.tokens[user]

    def spawn(self, user: str) -> str:
        """Start ``user``'s JupyterLab (LocalProcessSpawner: as the Unix user); its URL prefix once ready."""
        status, reply = self.api("POST", f"/hub/api/users/{user}/server")
        assert status in (201, 202, 400), (status, reply)  # 400: already running

        def ready():
            status, model = self.api("GET", f"/hub/api/users/{user}")
            server = (model or {}).get("servers", {}).get("") if status == 200 else None
            if server and server.get("ready"):
                return server["url"]
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"the hub exited:\n{self.log_tail()}")
            return None

        return poll(f"{user}'s server", ready, SERVER_START_S, 0.5)

    def service(self, path: str, user: str | None) -> tuple[int, Any]:
        """GET the service's ``path`` (under its prefix) with ``user``'s token (None: no login)."""
        status, content, headers = self.request("GET", self.service_prefix + path,
                                                self.token(user) if user else None, follow=False)
        kind = headers.get("content-type", "")
        if "json" in kind:
            return status, json.loads(content)
        return status, content.decode(errors="replace")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def service_process_users(site: Site) -> dict[int, int]:
    """pid -> uid of each process running ``autograder serve --config <site's service.toml>``."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if b"serve" in argv and str(site.service_toml).encode() in argv:
                found[int(entry)] = os.stat(f"/proc/{entry}").st_uid
        except OSError:
            continue
    return found


# --------------------------------------------------------------------------
# the browser


def write_lab_settings(site: Site, user: str) -> None:
    """The user's JupyterLab settings, as tests/browser writes them: every cell stays in the page (no windowing),
    no news or update checks; owned by the user."""
    sys.path.insert(0, str(HERE.parent / "browser"))
    try:
        from test_student_flow import write_lab_settings as write_settings
    finally:
        sys.path.remove(str(HERE.parent / "browser"))
    write_settings(site.home(user) / ".jupyter" / "lab" / "user-settings")
    entry = pwd.getpwnam(user)
    for path in [site.home(user) / ".jupyter", *(site.home(user) / ".jupyter").rglob("*")]:
        os.chown(path, entry.pw_uid, entry.pw_gid)


def answer_cell(notebook: str, grade_id: str) -> tuple[int, str]:
    """(index in the released notebook, the solved code) of the answer cell ``grade_id``."""
    import nbformat

    from autograder import assignment

    cells = nbformat.read(ROOT / "release" / ASSIGNMENT / f"{notebook}.ipynb", as_version=4).cells
    index = next(i for i, c in enumerate(cells) if assignment.nbgrader_metadata(c).get("grade_id") == grade_id)
    return index, solution_answers()[notebook][grade_id]


def run_browser(hub: Hub, user: str, folder: Path, *, grade_id: str = "masks-causal_mask",
                feedback_timeout_s: float = 180, timeout_s: float = 600) -> tuple[subprocess.CompletedProcess, dict]:
    """student_flow_hub.js as ``user``: (node's process, what it reported)."""
    folder.mkdir(parents=True, exist_ok=True)
    index, answer = answer_cell("attention", grade_id)
    config = {"hub": hub.url, "user": user, "password": hub.password, "chromium": CHROMIUM,
              "profile": str(folder / "profile"), "out": str(folder / "result.json"), "shots": str(folder / "shots"),
              "notebook": "attention.ipynb", "cellIndex": index, "answer": answer, "course": COURSE_ID,
              "assignment": ASSIGNMENT, "service": hub.service_prefix, "feedbackTimeoutMs": int(feedback_timeout_s * 1000)}
    config_path = folder / "config.json"
    config_path.write_text(json.dumps(config))
    env = {**os.environ, "HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config")}
    proc = subprocess.run(["node", str(HERE / "student_flow_hub.js"), str(config_path)], cwd=HERE,
                          capture_output=True, text=True, timeout=timeout_s, env=env)
    out = folder / "result.json"
    return proc, json.loads(out.read_text()) if out.exists() else {}
