"""The composition root: the one place where a referee process is put together.

Everything that starts a referee comes through here -- ``dizhu serve`` (:func:`run`,
:func:`run_workers`), ``dizhu demo`` and ``dizhu play`` (:func:`local_referee`), the
tests' and bot writers' :mod:`dizhu.testing`, and the tournament's own referees
(:func:`serve_command`, child processes running ``dizhu serve``). It alone knows both
the gRPC side (:mod:`dizhu.service`) and the HTTP side (:mod:`dizhu.web`); neither of
them imports the other. See docs/architecture.md.
"""

from dizhu.process.assembly import Referee, create_server, running_referee
from dizhu.process.child import free_port, serve_command
from dizhu.process.local import local_referee
from dizhu.process.serve import run, run_workers

__all__ = [
    "Referee",
    "create_server",
    "free_port",
    "local_referee",
    "run",
    "run_workers",
    "running_referee",
    "serve_command",
]
