"""TLS on both ports (``--tls-cert``/``--tls-key``): who gets an answer, renewal without a restart,
the web table's bots, and the command line's clients and refusals.

Certificates come from authorities made up per test (trustme); the referees are real, over
the tests' Redis, and every client is a real gRPC, HTTPS or command-line client.
"""

from __future__ import annotations

import asyncio
import dataclasses
import http.client
import json
import ssl
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import trustme
from grpc_health.v1 import health_pb2, health_pb2_grpc

from dizhu.client import TableClient, open_channel, tls_credentials
from dizhu.v1 import table_pb2
from tests.support.tls import issue
from tests.support.web import SOON_S, WebReferee, start_web_referee, view_once_the_bots_play

_GRPC_WEB = {"content-type": "application/grpc-web+proto"}
#: An empty GetTableRequest, framed for gRPC-Web.
_EMPTY_FRAME = b"\x00\x00\x00\x00\x00"


@dataclasses.dataclass
class Pki:
    """Two authorities and the certificate files a referee serves (issued by ``first`` at start)."""

    folder: Path
    first: trustme.CA
    second: trustme.CA

    @property
    def cert(self) -> Path:
        return self.folder / "server.pem"

    @property
    def key(self) -> Path:
        return self.folder / "server.key"

    def authority(self, ca: trustme.CA) -> Path:
        path = self.folder / ("first-ca.pem" if ca is self.first else "second-ca.pem")
        ca.cert_pem.write_to_path(str(path))
        return path

    def issue(self, ca: trustme.CA) -> None:
        """Serve a certificate of ``ca`` from now on: both files replaced whole, as renewals do."""
        issued = issue(self.folder, ca)
        assert (issued.cert, issued.key) == (self.cert, self.key)


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    made = Pki(tmp_path, trustme.CA(), trustme.CA())
    made.issue(made.first)
    return made


@pytest.fixture
async def tls_referee(redis_url: str, pki: Pki) -> AsyncIterator[WebReferee]:
    """A referee serving gRPC and HTTP over TLS, with a certificate of ``pki.first``."""
    async with start_web_referee(redis_url, tls_cert=pki.cert, tls_key=pki.key) as started:
        yield started


def _target(referee: WebReferee) -> str:
    return f"localhost:{referee.referee.port}"


async def _health(target: str, credentials: grpc.ChannelCredentials | None) -> grpc.StatusCode | int:
    """The referee's health as one new connection sees it: SERVING, or why there was no answer."""
    async with open_channel(target, credentials) as channel:
        try:
            answer = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=SOON_S)
        except grpc.aio.AioRpcError as error:
            return error.code()
    return answer.status


def _https(
    port: int, authority: Path, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cafile=str(authority))
    connection = http.client.HTTPSConnection("localhost", port, timeout=SOON_S, context=context)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


async def _dizhu(*args: str) -> tuple[int, str, str]:
    """``dizhu ARGS`` in a process of its own: exit status, standard output, standard error."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dizhu.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


class TestGrpcOverTls:
    async def test_a_client_trusting_the_authority_creates_joins_and_reads(
        self, tls_referee: WebReferee, pki: Pki
    ) -> None:
        credentials = tls_credentials(pki.authority(pki.first))
        async with TableClient(_target(tls_referee), credentials=credentials) as client:
            created = await client.create_table()
            joined = await client.join("ann")
            view = await client.get()
        assert view.table_id == created.table_id
        assert view.your_seat == joined.seat
        assert [seat.player_name for seat in view.seats if seat.occupied] == ["ann"]
        assert await _health(_target(tls_referee), credentials) == health_pb2.HealthCheckResponse.SERVING

    async def test_a_plaintext_client_gets_no_answer(self, tls_referee: WebReferee) -> None:
        assert await _health(_target(tls_referee), None) == grpc.StatusCode.UNAVAILABLE

    async def test_a_client_trusting_another_authority_gets_no_answer(self, tls_referee: WebReferee, pki: Pki) -> None:
        other = tls_credentials(pki.authority(pki.second))
        assert await _health(_target(tls_referee), other) == grpc.StatusCode.UNAVAILABLE

    async def test_a_renewed_certificate_is_served_to_new_connections_without_a_restart(
        self, tls_referee: WebReferee, pki: Pki
    ) -> None:
        first, second = pki.authority(pki.first), pki.authority(pki.second)
        pki.issue(pki.second)
        assert await _health(_target(tls_referee), tls_credentials(second)) == health_pb2.HealthCheckResponse.SERVING
        assert await _health(_target(tls_referee), tls_credentials(first)) == grpc.StatusCode.UNAVAILABLE

    async def test_a_broken_renewal_leaves_the_served_certificate_in_place(
        self, tls_referee: WebReferee, pki: Pki
    ) -> None:
        first = tls_credentials(pki.authority(pki.first))
        pki.cert.write_text("-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n")
        assert await _health(_target(tls_referee), first) == health_pb2.HealthCheckResponse.SERVING
        pki.issue(pki.second)  # mended: the new pair is served
        second = tls_credentials(pki.authority(pki.second))
        assert await _health(_target(tls_referee), second) == health_pb2.HealthCheckResponse.SERVING


class TestHttpsSide:
    async def test_the_web_table_and_grpc_web_are_served_over_https(self, tls_referee: WebReferee, pki: Pki) -> None:
        first = pki.authority(pki.first)
        page = await asyncio.to_thread(_https, tls_referee.http_port, first, "GET", "/")
        call = await asyncio.to_thread(
            _https, tls_referee.http_port, first, "POST", "/dizhu.v1.TableService/GetTable", _EMPTY_FRAME, _GRPC_WEB
        )
        assert page[0] == 200
        assert b"app.js" in page[2]
        assert call[0] == 200
        assert call[1]["content-type"].startswith("application/grpc-web")
        assert b"grpc-status: 3\r\n" in call[2]  # INVALID_ARGUMENT: a request without a table id

    async def test_plain_http_gets_no_page(self, tls_referee: WebReferee) -> None:
        with pytest.raises((http.client.HTTPException, OSError)):
            await tls_referee.http("GET", "/")

    async def test_a_renewed_certificate_reaches_the_http_side(self, tls_referee: WebReferee, pki: Pki) -> None:
        second = pki.authority(pki.second)
        pki.issue(pki.second)
        status, _, _ = await asyncio.to_thread(_https, tls_referee.http_port, second, "GET", "/")
        assert status == 200
        with pytest.raises(ssl.SSLCertVerificationError):
            await asyncio.to_thread(_https, tls_referee.http_port, pki.authority(pki.first), "GET", "/")

    async def test_the_web_tables_bots_play_at_a_tls_referee(self, tls_referee: WebReferee, pki: Pki) -> None:
        first = pki.authority(pki.first)
        async with TableClient(_target(tls_referee), credentials=tls_credentials(first)) as person:
            created = await person.create_table(round_limit=1, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
            await person.join("person")
            request = json.dumps({"table_id": created.table_id, "bots": ["heuristic", "random"]}).encode()
            status, _, body = await asyncio.to_thread(
                _https, tls_referee.http_port, first, "POST", "/api/bots", request, {"content-type": "application/json"}
            )
            view = await view_once_the_bots_play(person)
        assert status == 200
        assert json.loads(body) == {"seats": [1, 2]}
        assert [seat.player_name for seat in view.seats] == ["person", "Bob (heuristic bot)", "Cyd (random bot)"]


class TestCommandLine:
    async def test_replay_reaches_a_tls_referee_with_its_authority_only(
        self, tls_referee: WebReferee, pki: Pki
    ) -> None:
        target = _target(tls_referee)
        trusted = await _dizhu("replay", "missing", "1", "--target", target, "--tls-ca", str(pki.authority(pki.first)))
        plaintext = await _dizhu("replay", "missing", "1", "--target", target)
        assert trusted[0] == 1
        assert trusted[2].startswith("dizhu replay: no table missing at ")  # the referee answered
        assert plaintext[0] == 1
        assert plaintext[2].startswith("dizhu replay: UNAVAILABLE:")

    async def test_a_bot_reaches_a_tls_referee_with_its_authority(self, tls_referee: WebReferee, pki: Pki) -> None:
        authority = str(pki.authority(pki.first))
        status, _, err = await _dizhu(
            "bot", "--target", _target(tls_referee), "--table", "missing", "--tls-ca", authority
        )
        assert status == 1
        assert "no table missing" in err  # the referee's own answer, over TLS

    async def test_an_authority_file_that_cannot_be_read_is_a_usage_error(self, tmp_path: Path) -> None:
        missing = str(tmp_path / "nowhere.pem")
        for command in (["replay", "t", "1"], ["bot", "--table", "t"], ["play", "--target", "127.0.0.1:1"]):
            status, _, err = await _dizhu(*command, "--tls-ca", missing)
            assert status == 2, command
            assert err.count("\n") == 1
            assert "nowhere.pem" in err

    async def test_a_certificate_without_its_key_is_a_usage_error(self, pki: Pki) -> None:
        status, _, err = await _dizhu("serve", "--tls-cert", str(pki.cert))
        assert status == 2
        assert err.strip() == (
            "dizhu serve: error: --tls-cert and --tls-key go together (or $DIZHU_TLS_CERT and $DIZHU_TLS_KEY)"
        )

    async def test_a_key_of_another_certificate_is_refused_before_anything_starts(
        self, pki: Pki, tmp_path: Path, redis_url: str
    ) -> None:
        other = pki.second.issue_cert("localhost")
        stray_key = tmp_path / "stray.key"
        other.private_key_pem.write_to_path(str(stray_key))
        status, _, err = await _dizhu(
            "serve",
            "--address",
            "127.0.0.1:0",
            "--redis-url",
            redis_url,
            "--tls-cert",
            str(pki.cert),
            "--tls-key",
            str(stray_key),
        )
        assert status == 1
        assert err.startswith(f"dizhu serve: cannot serve {pki.cert} and {stray_key} (a certificate chain and its")
        assert err.rstrip().endswith("KEY_VALUES_MISMATCH")  # OpenSSL's own reason
        assert "Traceback" not in err
