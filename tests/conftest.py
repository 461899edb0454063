"""The process environment of every test, and the plugins that each bring one concern.

* ``tests.support.store_fixtures``: the store a test runs against, a single Redis or a local
  Redis Cluster (``on_each_store``), and a ``TableStore`` over it;
* ``tests.support.redis_fixtures``: the Redis server of the session and a flushed client per test;
* ``tests.support.engine_fixtures``: the rules engine as a parameter (``each_engine``);
* ``tests.support.tiers``: the marks given by where a test lives, and the order a run starts in;
* ``tests.support.cpu_report``: ``--cpu-report=FILE``, each test's CPU seconds.
"""

from __future__ import annotations

import os
import sys

# The suite starts hundreds of Python processes (its workers, referees, command lines, bots).
# Where PYTHONDONTWRITEBYTECODE is set, each compiled every module of the project it imported
# again (a worker's collection: 10 s against 4 s from the cache): the suite's processes write
# their bytecode as Python does by default, in the __pycache__ folders git ignores. (Not in a
# PYTHONPYCACHEPREFIX of their own: there, the installed packages' bytecode would be compiled again.)
if os.environ.pop("PYTHONDONTWRITEBYTECODE", ""):
    sys.dont_write_bytecode = False

# Before gRPC loads: the tests fork no process that uses gRPC, and gRPC's fork handlers can
# abort a child started with a pre-exec hook while gRPC threads run (the embedded
# redis-server, now and then): off.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
# And gRPC core's own logging (a client's "Got goaway" as a test's server stops, at INFO) out of
# the test output, in the workers and every process they start (which inherit it).
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import pytest
import structlog

from dizhu.logs import console_renderer

# The checks the support modules make for the tests explain their failures as a test's own do.
pytest.register_assert_rewrite("tests.support")

# The referees, bots and web servers the tests run in their own process log through structlog's
# defaults, drawn as ``--log-format console`` draws them: structlog's own console renderer shows
# each traceback's local variables and quotes every library frame (a second per store error).
structlog.configure(processors=[*structlog.get_config()["processors"][:-1], console_renderer()])

# The store's plugin first: the Redis plugin imports its names.
pytest_plugins = [
    "tests.support.store_fixtures",
    "tests.support.redis_fixtures",
    "tests.support.engine_fixtures",
    "tests.support.tiers",
    "tests.support.cpu_report",
]
