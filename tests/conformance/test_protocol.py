"""The protocol cases against a real referee started the README way (``dizhu serve``, over a real Redis)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dizhu.conformance import Kit
from dizhu.conformance.protocol_runner import run_protocol
from dizhu.embedded_redis import EmbeddedRedis
from tests.support.conformance_kit import KIT, edit_json, kit_copy
from tests.support.referees import served_referee

PROFILES: dict[str, list[str]] = KIT.load("protocol/cases.json")["profiles"]


def _serve(redis_url: str, profile: str) -> Iterator[str]:
    """A ``dizhu serve`` process on the tests' Redis, under a key prefix of its own, started as ``profile`` says."""
    with served_referee(redis_url, "conformance", flags=PROFILES[profile]) as target:
        yield target


def _profile_redis(redis_url: str, profile: str) -> Iterator[str]:
    """The Redis a profile's referee runs on: the tests' own, but a Redis with a maxmemory (and
    ``noeviction``, as docs/store.md recommends) for ``store-full``, whose reserve needs a limit."""
    if profile != "store-full":
        yield redis_url
        return
    limited = ["--maxmemory", "64mb", "--maxmemory-policy", "noeviction"]
    with EmbeddedRedis(appendonly=False, extra_args=limited) as server:
        yield server.url


@pytest.fixture(scope="module")
def referee(redis_url: str) -> Iterator[str]:
    yield from _serve(redis_url, "default")


def _cases(profile: str) -> list[dict[str, Any]]:
    return [case for case in KIT.load("protocol/cases.json")["cases"] if case.get("profile", "default") == profile]


class TestOurReferee:
    def test_it_passes_every_protocol_case(self, referee: str) -> None:
        report = run_protocol(KIT, referee)
        assert report.ok, report.to_text()
        assert report.count("passed") == len(_cases("default"))

    @pytest.mark.parametrize("profile", sorted(set(PROFILES) - {"default"}))
    def test_started_with_limits_it_passes_that_profiles_cases(self, redis_url: str, profile: str) -> None:
        for url in _profile_redis(redis_url, profile):
            for target in _serve(url, profile):
                report = run_protocol(KIT, target, profile=profile)
                assert report.ok, report.to_text()
                assert report.count("passed") == len(_cases(profile)) > 0

    def test_it_leaves_no_table_open_on_the_referee_it_checks(self, redis_url: str) -> None:
        """Every table a case creates is closed with its creator token once the case is over."""
        import grpc

        from dizhu.v1 import table_service_pb2, table_service_pb2_grpc

        for target in _serve(redis_url, "default"):
            report = run_protocol(KIT, target)
            assert report.ok, report.to_text()
            with grpc.insecure_channel(target) as channel:
                listed = table_service_pb2_grpc.TableServiceStub(channel).ListTables(  # type: ignore[no-untyped-call]
                    table_service_pb2.ListTablesRequest(page_size=100), timeout=30
                )
            assert [table.table_id for table in listed.tables] == []

    def test_the_command_line_reports_json_and_exits_0(self, referee: str) -> None:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "dizhu.cli",
                "conformance",
                "protocol",
                "--target",
                referee,
                "--json",
                "--only",
                "privacy.",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["totals"]["passed"] == len(
            [c for c in KIT.load("protocol/cases.json")["cases"] if c["id"].startswith("privacy.")]
        )
        assert set(report["groups"]) == {"privacy"}


class TestTheRunnerCatchesADifferentReferee:
    """A kit whose expectations were changed stands for a referee that answers otherwise."""

    def _changed(self, tmp_path: Path, case_id: str, change: Callable[[dict[str, Any]], None]) -> Kit:
        def edit(root: Path) -> None:
            def apply(data: dict[str, Any]) -> None:
                change(next(case for case in data["cases"] if case["id"] == case_id))

            edit_json(root / "protocol" / "cases.json", apply)

        return kit_copy(tmp_path, edit)

    def test_another_reason_fails_the_case_naming_both(self, tmp_path: Path, referee: str) -> None:
        def expect_other_reason(case: dict[str, Any]) -> None:
            case["steps"][-1]["expect"]["reason"] = "BID_TOO_LOW"

        kit = self._changed(tmp_path, "bid.3p.not-your-turn", expect_other_reason)
        report = run_protocol(kit, referee, only="bid.3p.not-your-turn")
        [result] = report.results
        assert result.status == "failed"
        assert "expected reason BID_TOO_LOW, got NOT_YOUR_TURN" in result.detail

    def test_a_hand_shown_to_a_spectator_fails_the_privacy_case(self, tmp_path: Path, referee: str) -> None:
        def expect_hand(case: dict[str, Any]) -> None:
            checks = case["steps"][-1]["expect"]["checks"]
            next(check for check in checks if check["path"] == "table.your_hand")["present"] = True

        kit = self._changed(tmp_path, "privacy.3p.spectator", expect_hand)
        [result] = run_protocol(kit, referee, only="privacy.3p.spectator").results
        assert result.status == "failed"
        assert "table.your_hand: expected a value" in result.detail

    def test_a_listed_failure_is_known_and_the_run_passes(self, tmp_path: Path, referee: str) -> None:
        def expect_ok(case: dict[str, Any]) -> None:
            case["steps"][-1]["expect"] = {}

        kit = self._changed(tmp_path, "bid.3p.too-low", expect_ok)
        (kit.root / "known-failing" / "other.json").write_text(
            json.dumps({"implementation": "other", "kit_version": "1.0.0", "cases": ["bid.3p.too-low"]})
        )
        report = run_protocol(kit, referee, implementation="other", only="bid.3p.too-low")
        assert [result.status for result in report.results] == ["known_failing"]
        assert report.ok
