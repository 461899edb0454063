"""The ``dizhu`` command line never answers bad input with a traceback: one message, a documented status.

Every case runs the real command in a subprocess (``python -m dizhu.cli``) and checks its exit
status, that it said what is wrong, and that no traceback (nor Python's "Exception ignored")
reached the terminal. Servers started here use the tests' Redis, or their own embedded one.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from dizhu.cli import build_parser
from dizhu.config import config_from_args
from dizhu.testing import free_port
from tests.support.command_line import (
    BROKEN_PIPE,
    FAILED,
    NOT_A_REPLAY,
    TIMEOUT_S,
    USAGE,
    assert_clean,
    command_env,
    dizhu,
)


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other program listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


class TestVersionAndHelp:
    def test_version(self) -> None:
        assert_clean(dizhu("--version"), 0, "dizhu 0.1.0")

    def test_every_serve_flag_says_its_unit_and_default(self) -> None:
        serve = build_parser()._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
        flags = [action for action in serve._actions if action.option_strings != ["-h", "--help"]]
        assert len(flags) >= 16
        for action in flags:
            assert action.help is not None
            assert "default" in action.help, action.option_strings
            units = ("SECONDS", "N", "PORT", "HOST:PORT", "URL", "DIR", "KEY", "PREFIX", "FILE", "PATH", "BYTES")
            units += ("PER_SECOND", "PER_MINUTE", "FRACTION")
            assert action.metavar in units or action.choices or action.nargs == 0, (
                f"{action.option_strings}: no unit or choices shown"
            )
        help_text = dizhu("serve", "--help").stdout
        assert "default: 127.0.0.1:50051" in help_text
        assert "--max-watched-tables N" in help_text

    def test_a_bad_environment_value_does_not_break_another_commands_help(self) -> None:
        assert_clean(dizhu("demo", "--help", env={"DIZHU_WORKERS": "abc"}), 0, "--rounds")


class TestBadCommandLines:
    @pytest.mark.parametrize(
        ("args", "env", "said"),
        [
            (["--log-level", "loud"], {}, "--log-level"),
            (["--address", "nonsense"], {}, "--address"),
            (["--address", "127.0.0.1:99999"], {}, "port 0..65535"),
            (["--redis-url", "nonsense"], {}, "--redis-url"),
            (["--redis-url", "unix:/tmp/r.sock"], {}, "--redis-url"),
            (["--redis-url", "redis:localhost:6379"], {}, "--redis-url"),
            (["--grace", "-1"], {}, "--grace"),
            (["--metrics-port", "70000"], {}, "--metrics-port"),
            (["--workers", "0"], {}, "--workers"),
            ([], {"DIZHU_WORKERS": "abc"}, "$DIZHU_WORKERS"),
            ([], {"DIZHU_HEARTBEAT_S": "0"}, "$DIZHU_HEARTBEAT_S"),
            ([], {"DIZHU_GRACE_S": "nan"}, "$DIZHU_GRACE_S"),
            ([], {"REDIS_URL": "localhost:6379"}, "$REDIS_URL"),
            (["--redis-cluster"], {}, "--redis-cluster needs --redis-url"),
            (["--redis-cluster", "--redis-url", "unix:///tmp/r.sock"], {}, "redis:// or rediss://"),
            (["--durability", "replica"], {}, "the embedded one has none"),
            ([], {"DIZHU_DURABILITY": "always"}, "--durability"),
            ([], {"DIZHU_MAX_CONNECTION_AGE_S": "0"}, "$DIZHU_MAX_CONNECTION_AGE_S"),
            ([], {"DIZHU_LOG_LEVEL": "loud"}, "$DIZHU_LOG_LEVEL"),
            ([], {"DIZHU_LOG_FORMAT": "xml"}, "$DIZHU_LOG_FORMAT"),
            ([], {"DIZHU_LIMITS": "sometimes"}, "$DIZHU_LIMITS"),
        ],
        ids=[
            "log-level",
            "address",
            "port-range",
            "redis-url",
            "socket-url-without-slashes",
            "url-without-slashes",
            "negative-grace",
            "metrics-port",
            "no-workers",
            "env-workers",
            "env-heartbeat",
            "env-nan",
            "env-redis-url",
            "cluster-without-url",
            "cluster-on-a-socket",
            "replica-without-replicas",
            "env-durability",
            "env-connection-age",
            "env-log-level",
            "env-log-format",
            "env-limits",
        ],
    )
    def test_a_bad_serve_setting_is_a_usage_error(self, args: list[str], env: dict[str, str], said: str) -> None:
        assert_clean(dizhu("serve", *args, env=env), USAGE, said)

    def test_a_choice_from_the_environment_is_read_like_the_flags(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("DIZHU_LOG_LEVEL", "WARNING")
        monkeypatch.setenv("DIZHU_LOG_FORMAT", "console")
        monkeypatch.setenv("DIZHU_LIMITS", "on")
        config = config_from_args(build_parser().parse_args(["serve"]))
        assert (config.log_level, config.log_format, config.limits) == ("warning", "console", "on")

    def test_api_key_flags_replace_the_environments_keys(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("DIZHU_API_KEYS", "env-one,env-two")
        parser = build_parser()
        assert config_from_args(parser.parse_args(["serve"])).api_keys == ("env-one", "env-two")
        flagged = parser.parse_args(["serve", "--api-key", "flag-one", "--api-key", "flag-two"])
        assert config_from_args(flagged).api_keys == ("flag-one", "flag-two")


class TestServeCannotStart:
    def test_a_taken_address(self, redis_url: str, taken_port: int) -> None:
        result = dizhu("serve", "--redis-url", redis_url, "--address", f"127.0.0.1:{taken_port}")
        assert_clean(result, FAILED, f"cannot listen on 127.0.0.1:{taken_port}")

    def test_an_address_of_no_machine(self, redis_url: str) -> None:
        assert_clean(
            dizhu("serve", "--redis-url", redis_url, "--address", "nonsense.invalid:5000"), FAILED, "cannot listen"
        )

    def test_a_taken_metrics_port(self, redis_url: str, taken_port: int) -> None:
        result = dizhu("serve", "--redis-url", redis_url, "--address", "127.0.0.1:0", "--metrics-port", str(taken_port))
        assert_clean(result, FAILED, f"cannot serve metrics on port {taken_port}")

    def test_an_unreachable_redis_is_retried_then_named(self, taken_port: int) -> None:
        unreachable = f"redis://127.0.0.1:{free_port()}/0"
        result = dizhu("serve", "--redis-url", unreachable, "--redis-wait", "0.5", "--address", "127.0.0.1:0")
        assert_clean(result, FAILED, f"Redis at {unreachable} did not answer within 0.5 s", "redis_unreachable")

    def test_a_password_never_shows_in_the_message(self) -> None:
        url = f"redis://user:hunter2@127.0.0.1:{free_port()}/0"
        result = dizhu("serve", "--redis-url", url, "--redis-wait", "0", "--address", "127.0.0.1:0")
        assert_clean(result, FAILED, "did not answer")
        assert "hunter2" not in result.stdout + result.stderr

    def test_workers_that_cannot_listen_fail_without_tracebacks(self, redis_url: str, taken_port: int) -> None:
        result = dizhu("serve", "--redis-url", redis_url, "--workers", "2", "--address", f"127.0.0.1:{taken_port}")
        assert_clean(result, FAILED, f"cannot listen on 127.0.0.1:{taken_port}")

    def test_two_referees_do_not_share_an_embedded_redis_data_directory(self, tmp_path: Path) -> None:
        data = tmp_path / "redis"
        with _serving(data) as first:
            second = dizhu("serve", "--data-dir", str(data), "--address", "127.0.0.1:0")
            assert_clean(second, FAILED, f"the data directory {data.resolve()} is in use", f"pid {first.pid}")
        with _serving(data) as again:  # once the first has stopped, the directory is free again
            assert again.poll() is None


@contextlib.contextmanager
def _serving(data: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``dizhu serve`` with an embedded Redis in ``data``, listening; stopped (SIGTERM) afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "dizhu.cli", "serve", "--data-dir", str(data), "--address", f"127.0.0.1:{port}"],
        env=command_env({"DIZHU_LOG_LEVEL": "warning"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, process)
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(TIMEOUT_S) == 0


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"dizhu serve exited with {process.returncode}"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


class TestVerifyInput:
    @pytest.mark.parametrize(
        ("make", "said"),
        [
            (lambda d: d / "missing.json", "No such file"),
            (lambda d: d, "Is a directory"),
            (lambda d: _write(d / "latin1.json", "é".encode("latin-1")), "not UTF-8"),
            (lambda d: _write(d / "text.json", b"hello"), "not JSON"),
            (lambda d: _write(d / "other.json", b'{"schema": "other/v1"}'), "not a dizhu.replay/v1 document"),
        ],
        ids=["missing", "directory", "not-utf8", "not-json", "other-schema"],
    )
    def test_what_is_no_replay_is_told_apart_from_a_tampered_one(self, tmp_path: Path, make: object, said: str) -> None:
        path = make(tmp_path)  # type: ignore[operator]
        assert_clean(dizhu("verify", str(path)), NOT_A_REPLAY, "NOT A REPLAY", said)

    def test_standard_input_is_read_too(self) -> None:
        assert_clean(dizhu("verify", "-", stdin="[]"), NOT_A_REPLAY, "NOT A REPLAY")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


class TestOutputReaderGone:
    @pytest.mark.parametrize("args", [["demo"], ["demo", "--local"]], ids=["demo", "local-demo"])
    def test_a_closed_pipe_ends_the_command_quietly(self, args: Sequence[str]) -> None:
        process = subprocess.Popen(
            [sys.executable, "-m", "dizhu.cli", *args],
            env=command_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        process.stdout.close()  # as `| head` does once it has read enough
        _, errors = process.communicate(timeout=TIMEOUT_S)
        assert process.returncode == BROKEN_PIPE, errors.decode()
        assert b"Traceback" not in errors
        assert b"Exception ignored" not in errors


class TestEnvironmentEngine:
    @pytest.mark.parametrize("command", [["demo", "--local"], ["verify", "-"], ["tournament", "--help"]])
    def test_an_unknown_engine_is_a_usage_error_naming_the_variable(self, command: list[str]) -> None:
        assert_clean(dizhu(*command, env={"DIZHU_ENGINE": "bogus"}), USAGE, "DIZHU_ENGINE", "'bogus'")


class TestTournamentCommandLine:
    def test_help_needs_no_tournament_extra(self) -> None:
        """openskill (of the [tournament] extra) made unimportable: --help still answers."""
        result = _without_openskill("tournament", "--help")
        assert_clean(result, 0, "--deal-sets")

    def test_a_run_without_the_extra_says_what_to_install(self) -> None:
        result = _without_openskill("tournament", "--deal-sets", "1")
        assert_clean(result, USAGE, "pip install 'dizhu[tournament]'", "openskill")

    def test_a_bad_number_says_what_is_needed(self) -> None:
        assert_clean(dizhu("tournament", "--deal-sets", "abc"), USAGE, "--deal-sets: a whole number is needed")
        assert "_positive" not in dizhu("tournament", "--concurrency", "0").stderr

    @pytest.mark.parametrize(
        ("args", "env", "said"),
        [
            (["--redis-url", "unix:/tmp/r.sock"], {}, "redis_url: expected a redis://"),
            ([], {"REDIS_URL": "localhost:6379"}, "$REDIS_URL: expected a redis://"),
        ],
        ids=["flag", "environment"],
    )
    def test_a_redis_url_redis_py_refuses_is_a_usage_error(
        self, tmp_path: Path, args: list[str], env: dict[str, str], said: str
    ) -> None:
        result = dizhu("tournament", "--quiet", "--output", str(tmp_path), *args, env=env)
        assert_clean(result, USAGE, said)

    def test_a_missing_tournament_file_is_named(self, tmp_path: Path) -> None:
        missing = tmp_path / "nosuch.toml"
        result = dizhu("tournament", str(missing))
        assert_clean(result, USAGE, f"cannot read {missing}: No such file or directory")
        assert "Errno" not in result.stderr


def _without_openskill(*args: str) -> subprocess.CompletedProcess[str]:
    """``dizhu ARGS`` in an interpreter where ``import openskill`` fails, as without the extra."""
    program = "import sys; sys.modules['openskill'] = None; from dizhu.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


class TestServeHttp:
    def test_a_taken_http_port(self, redis_url: str, taken_port: int) -> None:
        args = ["--redis-url", redis_url, "--address", "127.0.0.1:0", "--http-address", f"127.0.0.1:{taken_port}"]
        assert_clean(dizhu("serve", *args), FAILED, f"cannot serve HTTP on 127.0.0.1:{taken_port}")

    def test_the_grpc_port_is_no_http_port(self, redis_url: str) -> None:
        port = free_port()
        args = ["--redis-url", redis_url, "--address", f"127.0.0.1:{port}", "--http-address", f"127.0.0.1:{port}"]
        assert_clean(dizhu("serve", *args), USAGE, "--http-address", "--address")

    def test_serve_says_where_the_web_table_is(self, redis_url: str) -> None:
        port = free_port()
        http = ["--http-address", f"127.0.0.1:{port}", "--log-level", "warning"]
        process = subprocess.Popen(
            [sys.executable, "-m", "dizhu.cli", "serve", "--redis-url", redis_url, "--address", "127.0.0.1:0", *http],
            env=command_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            _wait_listening(port, process)
        finally:
            process.send_signal(signal.SIGTERM)
            said, _ = process.communicate(timeout=TIMEOUT_S)
        assert f"The web table: http://127.0.0.1:{port}/\n" in said

    def test_a_malformed_json_body_is_told_without_an_empty_field_name(self, redis_url: str) -> None:
        import json
        import urllib.error
        import urllib.request

        from dizhu.testing import serve_process

        port = free_port()
        with serve_process(redis_url, args=["--http-address", f"127.0.0.1:{port}", "--log-level", "warning"]):
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/dizhu.v1.TableService/GetTable",
                data=b"{bad",
                headers={"Content-Type": "application/json"},
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=TIMEOUT_S)
            answer = json.loads(refused.value.read())
        assert answer["code"] == "invalid_argument"
        assert answer["message"] == "the body is no valid dizhu.v1.GetTableRequest (protobuf JSON form)"


class TestPlayValues:
    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--clock", "-1"], "--clock: 0 (no clock) or 0.1 to 3600 seconds"),
            (["--clock", "0.05"], "--clock: 0 (no clock) or 0.1 to 3600 seconds"),
            (["--clock", "3601"], "--clock: 0 (no clock) or 0.1 to 3600 seconds"),
            (["--clock", "abc"], "--clock: a number of seconds"),
            (["--name", "x" * 33], "--name: 1 to 32 printable characters"),
            (["--name", ""], "--name: 1 to 32 printable characters"),
        ],
        ids=["negative-clock", "clock-below-100-ms", "clock-above-an-hour", "clock-no-number", "long-name", "no-name"],
    )
    def test_values_the_referee_would_refuse_are_refused_before_starting(self, args: list[str], said: str) -> None:
        result = dizhu("play", *args)
        assert_clean(result, USAGE, said)
        assert "settings." not in result.stderr

    def test_a_clock_of_half_a_second_is_played_until_the_input_ends(self) -> None:
        result = dizhu("play", "--clock", "0.5", "--rounds", "1", "--seed", "ab" * 32)
        assert_clean(result, 0, "End of input: you left the table.")
        # Without --name the person is "guest": never "You (seat 0) deals", read by the other seats too.
        assert "guest (seat 0" in result.stdout
        assert "You (seat" not in result.stdout


class TestDemoDealer:
    def test_the_dealer_deals_the_referees_first_round(self) -> None:
        """The seed's first round is dealt by seat 2 unless told otherwise."""
        assert_clean(dizhu("demo", "--seed", "ab" * 32), 0, "Cyd (seat 2) deals 17 cards")
        assert_clean(dizhu("demo", "--dealer", "1", "--seed", "ab" * 32), 0, "Bob (seat 1) deals 17 cards")

    @pytest.mark.parametrize("args", [["--dealer", "3"], ["--dealer", "3", "--local"], ["--dealer", "-1"]])
    def test_a_seat_the_variant_does_not_have(self, args: list[str]) -> None:
        assert_clean(dizhu("demo", *args), USAGE, "--dealer: a seat of 3p: 0 to 2")


class TestReplayNotFound:
    def test_a_missing_table_is_told_apart_from_an_unfinished_round(self, redis_url: str) -> None:
        import asyncio

        from dizhu.client import TableClient
        from dizhu.testing import serve_process

        async def create(target: str) -> str:
            async with TableClient(target) as creator:
                return (await creator.create_table(player_names=["a", "b", "c"])).table_id

        with serve_process(redis_url, args=["--log-level", "warning"]) as referee:
            table_id = asyncio.run(create(referee.target))
            missing = dizhu("replay", "nosuchtable0000000000", "1", "--target", referee.target)
            unfinished = dizhu("replay", table_id, "1", "--target", referee.target)
        assert_clean(missing, FAILED, "no table nosuchtable0000000000 at")
        assert_clean(unfinished, FAILED, f"round 1 of table {table_id} is not over")


class TestConformanceCommandLine:
    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--profile", "nosuch"], "no profile 'nosuch': default, quota, rate, store-full"),
            (["--only", "nosuch"], "no case of profile default has an id starting with 'nosuch'"),
        ],
        ids=["profile", "only"],
    )
    def test_a_selection_of_no_case_is_a_usage_error(self, redis_url: str, args: list[str], said: str) -> None:
        from dizhu.testing import serve_process

        with serve_process(redis_url, args=["--log-level", "warning"]) as referee:
            result = dizhu("conformance", "protocol", "--target", referee.target, *args)
        assert_clean(result, USAGE, said)

    def test_an_unreachable_referee_is_one_message(self) -> None:
        target = f"127.0.0.1:{free_port()}"
        result = dizhu("conformance", "protocol", "--target", target, "--timeout", "0.5")
        assert_clean(result, USAGE, f"no referee answers at {target} (waited 0.5 s)")
        assert "FAILED" not in result.stdout
        assert len((result.stdout + result.stderr).strip().splitlines()) == 1


class TestTableCommand:
    def test_create_list_and_close_a_table_for_bots_to_join(self, redis_url: str) -> None:
        import json

        import grpc

        from dizhu.testing import serve_process
        from dizhu.v1 import table_pb2, table_service_pb2, table_service_pb2_grpc

        with serve_process(redis_url, args=["--log-level", "warning"]) as referee:
            target = ["--target", referee.target]
            options = ["--variant", "4p", "--rounds", "2", "--clock", "0.5", "--timeout-policy", "forfeit", "--json"]
            created = dizhu("table", "create", *target, *options)
            assert_clean(created, 0)
            table = json.loads(created.stdout)
            with grpc.insecure_channel(referee.target) as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)
                shown = tables.GetTable(table_service_pb2.GetTableRequest(table_id=table["table_id"])).table
            listed = dizhu("table", "list", *target)
            closed = dizhu("table", "close", table["table_id"], "--token", table["creator_token"], *target)
            wrong = dizhu("table", "close", table["table_id"], "--token", "nonsense", *target)
            plain = dizhu("table", "create", *target)
        assert table["table_id"]
        assert table["seat_tokens"] == []
        assert (shown.settings.clock.decision_time.ToMilliseconds(), shown.settings.clock.timeout_policy) == (
            500,
            table_pb2.TIMEOUT_POLICY_FORFEIT,
        )
        assert_clean(listed, 0, table["table_id"], "4p")
        assert_clean(closed, 0, f"Table {table['table_id']} closed")
        assert_clean(wrong, FAILED, "UNAUTHENTICATED")
        assert_clean(plain, 0, "dizhu bot --table ", "--target", "creator token: ")


class TestNumbersWithinTheContract:
    """Numbers the contract cannot carry are refused with their range, before anything starts."""

    def test_rounds_are_the_contracts_uint32_fields(self) -> None:
        from google.protobuf.descriptor import FieldDescriptor

        from dizhu.cli import MAX_ROUNDS
        from dizhu.v1 import table_pb2, table_service_pb2

        for field in (
            table_pb2.TableSettings.DESCRIPTOR.fields_by_name["round_limit"],
            table_service_pb2.GetReplayRequest.DESCRIPTOR.fields_by_name["round"],
        ):
            assert field.type == FieldDescriptor.TYPE_UINT32, field.full_name
        assert MAX_ROUNDS == 2**32 - 1

    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["demo", "--rounds", "4294967296"], "--rounds: 1 to 4294967295, not 4294967296"),
            (["play", "--rounds", "99999999999"], "--rounds: 1 to 4294967295, not 99999999999"),
            (["table", "create", "--rounds", "4294967296"], "--rounds: 1 to 4294967295"),
            (["replay", "ID", "4294967296"], "round: 1 to 4294967295, not 4294967296"),
            (["demo", "--rounds", "0"], "--rounds: 1 to 4294967295, not 0"),
            (["demo", "--seed", "ab" * 32, "--rounds", "1025"], "--rounds: at most 1024 with --seed"),
            (["play", "--seed", "ab" * 32, "--rounds", "2000"], "--rounds: at most 1024 with --seed"),
            (["demo", "--seed", "abc"], "--seed: a seed is 32 bytes, 64 hex digits, not 3 digit(s)"),
            (["play", "--seed", "zz" * 32], "--seed: a seed's 64 digits are hexadecimal"),
        ],
        ids=[
            "demo-rounds",
            "play-rounds",
            "table-rounds",
            "replay-round",
            "no-rounds",
            "demo-seeded",
            "play-seeded",
            "short-seed",
            "no-hex",
        ],
    )
    def test_a_number_out_of_range_says_the_range(self, args: list[str], said: str) -> None:
        result = dizhu(*args)
        assert_clean(result, USAGE, said)
        assert "Value out of range" not in result.stderr


class TestServeStartsOrSaysWhy:
    def test_http_without_the_web_extra_stops_everything_it_started(self, redis_url: str) -> None:
        program = (
            "import sys; sys.modules['connectrpc'] = None; from dizhu.cli import main; sys.exit(main(sys.argv[1:]))"
        )
        args = ["serve", "--redis-url", redis_url, "--address", "127.0.0.1:0", "--http-address", "127.0.0.1:0"]
        result = subprocess.run(
            [sys.executable, "-c", program, *args],
            env=command_env({"DIZHU_LOG_LEVEL": "error"}),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        assert_clean(result, FAILED, "dizhu serve: --http-address needs the web extra: pip install 'dizhu[web]'")
        assert "Event loop is closed" not in result.stderr

    def test_a_taken_port_is_told_in_the_commands_words_only(self, redis_url: str, taken_port: int) -> None:
        """gRPC's core logs a failed bind itself unless told not to; the command says it once, first."""
        env = command_env({"DIZHU_LOG_LEVEL": "error"})
        del env["GRPC_VERBOSITY"]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "dizhu.cli",
                "serve",
                "--redis-url",
                redis_url,
                "--address",
                f"127.0.0.1:{taken_port}",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        assert_clean(result, FAILED)
        assert result.stderr.splitlines() == [
            f"dizhu serve: cannot listen on 127.0.0.1:{taken_port}: the address is taken, or not one of this machine"
        ]

    def test_list_names_the_round_that_is_over_between_rounds(self, redis_url: str) -> None:
        """Between rounds the view's round is the one about to start; the list says which round is over."""
        import asyncio
        import random

        import grpc

        from dizhu.testing import serve_process
        from dizhu.v1 import rules_service_pb2_grpc, table_pb2, table_service_pb2_grpc
        from tests.support.grpc_calls import create_table, play_round

        async def one_of_two_rounds(target: str) -> str:
            async with grpc.aio.insecure_channel(target) as channel:
                tables = table_service_pb2_grpc.TableServiceStub(channel)  # type: ignore[no-untyped-call]
                rules = rules_service_pb2_grpc.RulesServiceStub(channel)  # type: ignore[no-untyped-call]
                table = await create_table(tables, round_limit=2, next_round=table_pb2.NEXT_ROUND_WHEN_ALL_SETTLED)
                ended = await play_round(tables, rules, table, random.Random(1))
                assert (ended.phase, ended.last_settlement.round) == (table_pb2.PHASE_ROUND_OVER, 1)
                return table.table_id

        with serve_process(redis_url, args=["--log-level", "warning"]) as referee:
            table_id = asyncio.run(one_of_two_rounds(referee.target))
            listed = dizhu("table", "list", "--target", referee.target)
        assert_clean(listed, 0)
        line = next(line for line in listed.stdout.splitlines() if line.startswith(table_id))
        assert "round 1/2 over" in line, line
        assert "round 2" not in line, line

    def test_create_says_how_each_named_seat_is_played_and_offers_free_seats_only_if_any(self, redis_url: str) -> None:
        from dizhu.testing import serve_process

        with serve_process(redis_url, args=["--log-level", "warning"]) as referee:
            target = ["--target", referee.target]
            full = dizhu("table", "create", "--players", "me,h1,h2", *target)
            some = dizhu("table", "create", "--variant", "4p", "--players", "ann", *target)
        assert_clean(full, 0)
        table_id = full.stdout.split()[1]
        tokens = [line.rsplit(" ", 1)[1] for line in full.stdout.splitlines() if line.startswith("seat ")]
        assert len(tokens) == 3
        for token in tokens:
            line = f"dizhu bot --table {table_id} --target {referee.target} --token {token} --bot heuristic"
            assert line in full.stdout
        assert "--name NAME" not in full.stdout
        assert "dizhu play --table" not in full.stdout
        assert "no free seat" in full.stdout
        assert_clean(some, 0, "--token ", "3 free seat(s)", "--name NAME", "dizhu play --table")


class TestRefusalsSaidOnce:
    def test_a_refusal_names_its_reason_once_and_its_violation_once(self, redis_url: str) -> None:
        from dizhu.testing import serve_process

        with serve_process(redis_url, args=["--log-level", "warning"]) as referee:
            target = ["--target", referee.target]
            long_name = dizhu("table", "create", "--players", "x" * 40, *target)
            created = dizhu("table", "create", "--json", *target)
            table_id = created.stdout.split('"table_id": "', 1)[1].split('"', 1)[0]
            wrong_token = dizhu("table", "close", table_id, "--token", "nonsense", *target)
            closed = dizhu(
                "table",
                "close",
                table_id,
                "--token",
                created.stdout.split('"creator_token": "')[1].split('"')[0],
                *target,
            )
            over = dizhu("replay", table_id, "1", *target)
        assert_clean(long_name, FAILED, "dizhu table create: INVALID_ARGUMENT: player_names[0]: a player name is 1..32")
        assert long_name.stderr.count("a player name is") == 1, long_name.stderr
        assert_clean(wrong_token, FAILED, "dizhu table close: UNAUTHENTICATED: ")
        assert "(UNAUTHENTICATED)" not in wrong_token.stderr
        assert_clean(closed, 0)
        assert_clean(
            over, FAILED, f"round 1 of table {table_id} is not over (no round is finished yet; the table is closed)"
        )


class TestPlayInterrupted:
    def test_ctrl_c_says_the_seat_was_left_as_it_was(self) -> None:
        import pexpect

        child = pexpect.spawn(
            sys.executable,
            ["-m", "dizhu.cli", "play", "--rounds", "1", "--clock", "0"],
            env={**command_env(), "TERM": "dumb"},
            encoding="utf-8",
            timeout=TIMEOUT_S,
            # As a shell at a terminal starts it: an ignored SIGINT is inherited, and a suite started
            # in the background by a script (`pytest ... &`) has it ignored, so ^C would reach nothing.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            child.expect(r"Your (bid|play) .*> ")
            child.sendintr()
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert "Interrupted" in child.before, child.before
        assert "Traceback" not in child.before
        assert child.exitstatus == 130
