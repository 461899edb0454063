"""The HTTP application: the contract for browsers, the reference web table, its bots.

- ``/dizhu.v1.TableService/*``, ``/dizhu.v1.RulesService/*``: the contract over gRPC-Web
  and Connect (:mod:`dizhu.web.bridge`);
- ``POST /api/bots`` ``{"table_id": ..., "bots": ["heuristic", ...]}``: seat bundled bots
  at a table (:mod:`dizhu.bots`); answers ``{"seats": [...]}``, or ``{"error": ...}``
  with 400 (a bad request), 409 (not every bot seated: the ``reason`` says why, ``seats``
  which were; none when the table had fewer free seats than bots) or 429 (no room for more
  bots);
- everything else: the reference web table's static files (``index.html`` at ``/``).

Cross-origin requests are refused unless origins are allowed (``cors_origins``; ``*``
allows any): a page served elsewhere can then call the contract with its seat tokens
(bearer tokens in headers, never cookies).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from dizhu.bots import BotHost, NoRoomForBots, NotAllSeated
from dizhu.client import DizhuError

__all__ = ["STATIC", "web_application"]

#: The built reference web table.
STATIC = Path(__file__).resolve().parent / "static"
#: What browsers may send and read across origins: the metadata of both protocols.
_ALLOWED_HEADERS = (
    "authorization",
    "x-api-key",
    "content-type",
    "x-grpc-web",
    "x-user-agent",
    "grpc-timeout",
    "connect-protocol-version",
    "connect-timeout-ms",
)
_EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin", "grpc-encoding")
_MAX_BOTS_PER_REQUEST = 3


class _Static(StaticFiles):
    """The table's files, revalidated on every load so that an upgraded server is picked up."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["cache-control"] = "no-cache"
        return response


def _error(status: int, message: str, reason: str | None = None, **more: Any) -> JSONResponse:
    body = {"error": message} | ({"reason": reason} if reason else {}) | more
    return JSONResponse(body, status_code=status)


def _bots_endpoint(bots: BotHost) -> Route:
    async def seat_bots(request: Request) -> Response:
        try:
            body = await request.json()
            table_id, kinds = body["table_id"], body["bots"]
            if not isinstance(table_id, str) or not isinstance(kinds, list):
                raise TypeError(body)
            if not all(isinstance(kind, str) for kind in kinds):
                raise TypeError(kinds)
        except (ValueError, KeyError, TypeError):
            return _error(400, 'send {"table_id": "<id>", "bots": ["heuristic", ...]}')
        if not 1 <= len(kinds) <= _MAX_BOTS_PER_REQUEST:
            return _error(400, f"ask for 1 to {_MAX_BOTS_PER_REQUEST} bots")
        try:
            seats = await bots.seat(table_id, kinds)
        except ValueError as error:
            return _error(400, str(error))
        except NoRoomForBots as error:
            return _error(429, str(error))
        except NotAllSeated as error:
            return _error(409, str(error), error.reason, seats=error.seated)
        except DizhuError as error:
            return _error(409, str(error), error.reason, seats=[])
        return JSONResponse({"seats": seats})

    return Route("/api/bots", seat_bots, methods=["POST"])


def web_application(
    contract: Any, services: Sequence[str], bots: BotHost | None, cors_origins: Sequence[str] = ()
) -> Starlette:
    """The application: ``contract`` (an ASGI app) at ``/<service>/...`` for each of ``services``,
    the bots API if ``bots``, the static table at ``/``; CORS for ``cors_origins`` only."""
    routes: list[Route | Mount] = [Mount(f"/{service}", app=contract) for service in services]
    if bots is not None:
        routes.append(_bots_endpoint(bots))
    routes.append(Mount("/", app=_Static(directory=STATIC, html=True)))
    middleware = []
    if cors_origins:
        middleware.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST"],
                allow_headers=list(_ALLOWED_HEADERS),
                expose_headers=list(_EXPOSED_HEADERS),
                max_age=600,
            )
        )
    return Starlette(routes=routes, middleware=middleware)
