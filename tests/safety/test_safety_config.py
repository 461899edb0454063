"""The safety settings of ``dizhu serve``: flags, environment variables, the server secret, the defaults."""

from __future__ import annotations

import argparse
import json
import uuid
from pathlib import Path

import grpc
import pytest

from dizhu.config import ServerConfig, add_server_arguments, config_from_args, listens_on_loopback
from dizhu.testing import free_port, serve_process
from dizhu.v1 import table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb

_SECRET = "0123456789abcdef" * 4


def _config(*argv: str) -> ServerConfig:
    parser = argparse.ArgumentParser()
    add_server_arguments(parser)
    return config_from_args(parser.parse_args(argv))


class TestDefaults:
    @pytest.mark.parametrize(
        ("address", "loopback"),
        [
            ("127.0.0.1:50051", True),
            ("localhost:0", True),
            ("[::1]:50051", True),
            ("unix:/tmp/dizhu.sock", True),
            ("0.0.0.0:50051", False),
            ("[::]:50051", False),
            ("10.1.2.3:50051", False),
            ("referee.example:50051", False),
        ],
    )
    def test_only_a_loopback_address_counts_as_local(self, address: str, loopback: bool) -> None:
        assert listens_on_loopback(address) is loopback
        config = ServerConfig(address=address)
        assert config.limits_enabled is not loopback
        assert config.anonymous_create is loopback

    def test_limits_and_anonymous_creation_can_be_forced(self) -> None:
        assert ServerConfig(address="127.0.0.1:1", limits="on").limits_enabled
        assert not ServerConfig(address="0.0.0.0:1", limits="off").limits_enabled
        assert ServerConfig(address="0.0.0.0:1", allow_anonymous_create=True).anonymous_create

    def test_secrets_never_show_in_the_configuration_s_repr(self) -> None:
        assert _SECRET not in repr(ServerConfig(secrets=(_SECRET,)))


class TestFlags:
    def test_every_safety_flag_reads_its_environment_variable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        environment = {
            "DIZHU_LIMITS": "on",
            "DIZHU_ALLOW_ANONYMOUS_CREATE": "1",
            "DIZHU_MAX_REQUEST_BYTES": "1000",
            "DIZHU_RATE_LIMIT": "5",
            "DIZHU_CREATE_RATE_LIMIT": "6",
            "DIZHU_MAX_OPEN_TABLES": "7",
            "DIZHU_MAX_STREAMS": "8",
            "DIZHU_MAX_STREAMS_PER_CONNECTION": "9",
            "DIZHU_MAX_STREAMS_PER_CLIENT": "10",
            "DIZHU_ANSWERS_PER_TABLE": "11",
            "DIZHU_REPLAYS_PER_TABLE": "12",
            "DIZHU_IDLE_CLOSE_S": "13",
            "DIZHU_UNATTENDED_ROUNDS": "14",
            "DIZHU_MEMORY_RESERVE": "0.25",
        }
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        config = _config()
        assert (config.limits, config.allow_anonymous_create, config.max_request_bytes) == ("on", True, 1000)
        assert (config.rate_limit, config.create_rate_limit, config.max_open_tables) == (5, 6, 7)
        assert (config.max_streams, config.max_streams_per_connection, config.max_streams_per_client) == (8, 9, 10)
        assert (config.answers_per_table, config.replays_per_table, config.idle_close_s) == (11, 12, 13)
        assert (config.unattended_rounds, config.memory_reserve) == (14, 0.25)
        assert _config("--rate-limit", "50", "--limits", "off").rate_limit == 50

    def test_every_safety_flag_says_its_environment_variable_and_default(self) -> None:
        parser = argparse.ArgumentParser()
        add_server_arguments(parser)
        helps = {action.option_strings[0]: action.help or "" for action in parser._actions if action.option_strings}
        for flag in ("--rate-limit", "--max-streams", "--idle-close", "--memory-reserve", "--limits", "--secret-file"):
            assert "env DIZHU_" in helps[flag], flag
            assert "default" in helps[flag], flag


class TestTheServerSecret:
    def test_secrets_come_from_a_file_the_current_one_first(self, tmp_path: Path) -> None:
        path = tmp_path / "secrets"
        path.write_text(f"# rotated on Monday\n{'b' * 40}\n\n{_SECRET}\n")
        assert _config("--secret-file", str(path)).secrets == ("b" * 40, _SECRET)

    def test_or_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("DIZHU_SECRET", f"{_SECRET}, {'c' * 32}")
        assert _config().secrets == (_SECRET, "c" * 32)

    def test_none_means_a_secret_made_up_per_run(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("DIZHU_SECRET", raising=False)
        monkeypatch.delenv("DIZHU_SECRET_FILE", raising=False)
        assert _config().secrets == ()

    @pytest.mark.parametrize("content", ["short\n", "# only a comment\n"])
    def test_a_short_or_missing_secret_stops_the_server(self, tmp_path: Path, content: str) -> None:
        path = tmp_path / "secrets"
        path.write_text(content)
        with pytest.raises(SystemExit):
            _config("--secret-file", str(path))

    def test_an_unreadable_secret_file_stops_the_server(self, tmp_path: Path) -> None:
        with pytest.raises(SystemExit, match="secret-file"):
            _config("--secret-file", str(tmp_path / "missing"))


class TestAnExposedServe:
    async def test_it_warns_about_what_its_configuration_leaves_open(self, redis_url: str, tmp_path: Path) -> None:
        log = tmp_path / "referee.log"
        port = free_port()
        args = ["--address", f"0.0.0.0:{port}", "--log-format", "json", "--limits", "off"]
        with log.open("wb") as sink, serve_process(redis_url, args=args, port=port, stderr=sink) as referee:
            async with grpc.aio.insecure_channel(referee.target) as channel:
                stub = table_service_pb2_grpc.TableServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.CreateTable(
                        pb.CreateTableRequest(request_id=uuid.uuid4().hex, settings=table_pb2.TableSettings(variant=1))
                    )
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        events = {json.loads(line).get("event") for line in log.read_text().splitlines() if line.startswith("{")}
        assert {"no_server_secret", "no_table_creation", "limits_off", "plaintext"} <= events
