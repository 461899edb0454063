"""The contract is language-agnostic: the Node.js client (clients/node) plays a whole table on a real referee.

A ``dizhu serve`` subprocess on a free port (``served_referee``: the tests' Redis, a fresh key prefix)
and ``node clients/node/play-table.mjs`` against it: three random Node bots follow the
table with WatchTable, play the legal moves RulesService lists, and print the standings.
The client also decodes every error's google.rpc details (``errorDetails``), from the
google/rpc protos it locates itself. ``npm ci`` runs first if a dependency of
``clients/node/package.json`` is missing from ``node_modules``; without Node.js or npm the
test fails, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from tests.support.card_ids import card_rows
from tests.support.referees import served_referee
from tests.support.shared_builds import npm_ci
from tests.support.tls import issue

ROOT = Path(__file__).resolve().parents[2]
NODE_CLIENT = ROOT / "clients" / "node"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"{name} is not on PATH: install Node.js (>= 18, with npm) to run the Node client's test", pytrace=False
        )
    return path


@pytest.fixture(scope="module")
def node() -> str:
    """The ``node`` binary, with the client's dependencies installed (``npm ci`` when missing)."""
    node = _tool("node")
    dependencies = json.loads((NODE_CLIENT / "package.json").read_text())["dependencies"]
    npm_ci(NODE_CLIENT, *dependencies)
    return node


@pytest.fixture
def referee(redis_url: str) -> Iterator[str]:
    """A referee on the tests' Redis."""
    with served_referee(redis_url, "node") as target:
        yield target


def _play_table(node: str, target: str, *args: str) -> dict[str, object]:
    result = subprocess.run(
        [node, str(NODE_CLIENT / "play-table.mjs"), "--target", target, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"play-table.mjs failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    output: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return output


class TestNodeClient:
    def test_three_node_bots_play_a_3p_table_to_the_end(self, node: str, referee: str) -> None:
        output = _play_table(node, referee)
        standings = output["standings"]
        assert isinstance(standings, list)
        assert sorted(entry["seat"] for entry in standings) == [0, 1, 2]
        assert sorted(entry["player_name"] for entry in standings) == ["node-0", "node-1", "node-2"]
        assert sum(entry["balance"] for entry in standings) == 0
        assert [entry["place"] for entry in standings] == sorted(entry["place"] for entry in standings)
        # Each bot reads its view when a change may ask something of its seat (concernsSeat: the
        # events' next_seat), not after every move of the others.
        seats = output["seats"]
        assert isinstance(seats, list)
        assert sorted(entry["seat"] for entry in seats) == [0, 1, 2]
        decisions = sum(entry["decisions"] for entry in seats)
        for entry in seats:
            assert entry["reads"] < decisions - entry["decisions"], seats

    def test_the_table_is_closed_for_python_too(self, node: str, referee: str) -> None:
        """The Node bots' table read back through the Python SDK: closed by its round limit, same balances."""
        import asyncio

        from dizhu.client import TableClient
        from dizhu.v1 import table_pb2

        output = _play_table(node, referee, "--variant", "4p", "--rounds", "2", "--seed", "7")

        async def read() -> table_pb2.TableView:
            async with TableClient(referee, table_id=str(output["table_id"])) as spectator:
                return await spectator.get()

        view = asyncio.run(read())
        assert view.phase == table_pb2.PHASE_CLOSED
        assert view.close_reason == table_pb2.CLOSE_REASON_ROUND_LIMIT
        assert view.round == 2
        standings = output["standings"]
        assert isinstance(standings, list)
        assert {entry["seat"]: entry["balance"] for entry in standings} == {
            seat.seat: seat.balance for seat in view.seats
        }


_ERRORS_SCRIPT = """
import { call, connect, errorDetails, newRequestId } from "./dizhu.mjs";

const { tables, close } = connect(process.env.TARGET);
const fails = async (method, request, token) => {
  try {
    await call(tables, method, request, token, { attempts: 1 });
    return null;
  } catch (error) {
    return errorDetails(error);
  }
};
const created = await call(tables, "CreateTable", {
  request_id: newRequestId(),
  settings: { variant: "VARIANT_THREE_PLAYER" },
  player_names: ["a", "b", "c"],
});
const table_id = created.table_id;
const other = created.seat_tokens[(created.table.turn_seat + 1) % 3].token;
const bid = (amount) => ({ table_id, request_id: newRequestId(), expected_version: created.table.version, amount });
console.log(JSON.stringify({
  table_id,
  not_found: await fails("GetTable", { table_id: "no-such-table" }),
  unauthenticated: await fails("Bid", bid(1)),
  not_your_turn: await fails("Bid", bid(1), other),
  invalid: await fails("Bid", bid(4), other),
}));
close();
"""


def _run_script(node: str, script: str, env: dict[str, str]) -> dict[str, Any]:
    """Run a module ``script`` beside the client; the JSON object on its last line of output."""
    result = subprocess.run(
        [node, "--input-type=module", "-e", script],
        cwd=NODE_CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def _python_google_protos() -> str:
    """The folder holding Python's googleapis-common-protos copy of google/rpc/*.proto."""
    import google.rpc

    return str(Path(next(iter(google.rpc.__path__))).parent.parent)


class TestErrorDetails:
    @pytest.mark.parametrize("protos", ["npm", "python"], ids=["google-proto-files", "GOOGLE_PROTO_DIR"])
    def test_the_node_client_decodes_reason_metadata_and_field_violations(
        self, node: str, referee: str, protos: str
    ) -> None:
        env = {**os.environ, "TARGET": referee}
        env.pop("GOOGLE_PROTO_DIR", None)
        if protos == "python":
            env["GOOGLE_PROTO_DIR"] = _python_google_protos()
            assert (Path(env["GOOGLE_PROTO_DIR"]) / "google" / "rpc" / "error_details.proto").is_file()
        out = _run_script(node, _ERRORS_SCRIPT, env)
        table_id = out["table_id"]
        assert out["not_found"]["reason"] == "TABLE_NOT_FOUND"
        assert out["not_found"]["domain"] == "dizhu.v1"
        assert out["not_found"]["metadata"] == {"table_id": "no-such-table"}
        assert out["unauthenticated"]["reason"] == "UNAUTHENTICATED"
        assert out["unauthenticated"]["metadata"]["table_id"] == table_id
        turn = out["not_your_turn"]
        assert (turn["reason"], turn["code"]) == ("NOT_YOUR_TURN", 9)  # FAILED_PRECONDITION
        assert set(turn["metadata"]) == {"table_id", "turn_seat"}
        invalid = out["invalid"]
        assert (invalid["reason"], invalid["code"]) == ("INVALID_ARGUMENT", 3)
        assert [violation["field"] for violation in invalid["fieldViolations"]] == ["amount"]
        assert invalid["fieldViolations"][0]["description"]


_RATE_LIMIT_SCRIPT = """
import { call, connect, errorDetails } from "./dizhu.mjs";

const { rules, close } = connect(process.env.TARGET);
const classify = { variant: "VARIANT_THREE_PLAYER", cards: { ranks: ["RANK_NINE"] } };
const retried = [];
const answers = [];
for (let n = 0; n < 10; n += 1) {
  const answer = await call(rules, "Classify", classify, null, {
    onRetry: (error) => retried.push(errorDetails(error).reason),
  });
  answers.push(answer.classification.combinations[0].kind);
}
let refused = null;
try {
  await call(rules, "Classify", classify, null, { attempts: 1 });
} catch (error) {
  refused = errorDetails(error);
}
console.log(JSON.stringify({ answers, retried, refused }));
close();
"""


@pytest.fixture
def limited_referee(redis_url: str) -> Iterator[str]:
    """A referee applying its rate limits on loopback too: 2 calls per second per client, bursts of 4."""
    with served_referee(redis_url, "node-limited", flags=["--limits", "on", "--rate-limit", "2"]) as target:
        yield target


_POLICY_SCRIPT = """
import { ERROR_FACTS, MOVED_ON_REASONS, RETRYABLE, RETRYABLE_REASONS, SERVICE_CONFIG, grpc } from "./dizhu.mjs";

const names = (codes) => [...codes].map((code) => Object.keys(grpc.status).find((name) => grpc.status[name] === code));
console.log(JSON.stringify({
  facts: ERROR_FACTS,
  moved_on: [...MOVED_ON_REASONS],
  retryable_codes: names(RETRYABLE),
  retryable_reasons: [...RETRYABLE_REASONS],
  config: SERVICE_CONFIG,
}));
"""


def _descriptor_facts() -> dict[str, Any]:
    from dizhu.v1 import errors_pb2

    return {
        value.name.removeprefix("ERROR_REASON_"): value.GetOptions().Extensions[errors_pb2.facts]
        for value in errors_pb2.ErrorReason.DESCRIPTOR.values
        if value.number
    }


class TestTheContractsFacts:
    def test_the_node_client_reads_the_facts_and_the_retry_policy_the_python_sdk_reads(self, node: str) -> None:
        from dizhu.client.connection import SERVICE_CONFIG
        from dizhu.v1 import errors_pb2

        out = _run_script(node, _POLICY_SCRIPT, dict(os.environ))
        facts = _descriptor_facts()
        assert {
            reason: (stated["code"], stated["category"], stated["retry_info"])
            for reason, stated in out["facts"].items()
        } == {
            reason: (stated.code, errors_pb2.ErrorCategory.Name(stated.category), stated.retry_info)
            for reason, stated in facts.items()
        }
        category = {reason: errors_pb2.ErrorCategory.Name(stated.category) for reason, stated in facts.items()}
        assert set(out["moved_on"]) == {r for r, c in category.items() if c == "ERROR_CATEGORY_MOVED_ON"}
        assert set(out["retryable_reasons"]) == {r for r, c in category.items() if c == "ERROR_CATEGORY_RETRYABLE"}
        assert set(out["retryable_reasons"]) == {"UNAVAILABLE", "RATE_LIMITED", "STORE_FULL"}
        assert out["config"] == SERVICE_CONFIG
        assert out["retryable_codes"] == SERVICE_CONFIG["methodConfig"][0]["retryPolicy"]["retryableStatusCodes"]

    def test_the_node_clients_card_id_is_the_tables_for_every_card(self, node: str) -> None:
        """One card-id function in JavaScript (dizhu.mjs's cardId, which conformance.mjs uses),
        held to the one table of card ids (tests/data/card_ids.json) on every card of two decks,
        each card as proto3 JSON gives it (a copy of 0 left out); and the deal reference's
        cardName (docs/deal-reference.mjs) names each id as the table does."""
        rows = card_rows()
        cards = [
            {"rank": row["rank"], "suit": row["suit"], **({"copy": row["copy"]} if row["copy"] else {})} for row in rows
        ]
        script = (
            'import { cardId } from "./dizhu.mjs";\n'
            f'import {{ cardName }} from "{(ROOT / "docs" / "deal-reference.mjs").as_uri()}";\n'
            f"const cards = {json.dumps(cards)};\n"
            f"const ids = {json.dumps([row['id'] for row in rows])};\n"
            "console.log(JSON.stringify({ ids: cards.map(cardId), names: ids.map(cardName) }));"
        )
        out = _run_script(node, script, dict(os.environ))
        assert out["ids"] == [row["id"] for row in rows]
        assert out["names"] == [row["notation"] for row in rows]


class TestRetries:
    def test_a_rate_limited_call_is_sent_again_after_the_referees_delay(self, node: str, limited_referee: str) -> None:
        out = _run_script(node, _RATE_LIMIT_SCRIPT, {**os.environ, "TARGET": limited_referee})
        # Ten calls at once against a burst of four: every one answered, the later ones after waiting.
        assert out["answers"] == ["COMBINATION_KIND_SINGLE"] * 10
        assert out["retried"], "no call was rate limited: nothing was tested"
        assert set(out["retried"]) == {"RATE_LIMITED"}
        refused = out["refused"]
        assert (refused["code"], refused["reason"]) == (8, "RATE_LIMITED")  # RESOURCE_EXHAUSTED
        assert 0 < refused["retryDelayMs"] <= 2000


_TLS_SCRIPT = """
import { readFileSync } from "node:fs";
import grpc from "@grpc/grpc-js";
import { call, connect } from "./dizhu.mjs";

const classify = { variant: "VARIANT_THREE_PLAYER", cards: { ranks: ["RANK_NINE"] } };
async function attempt(options) {
  const { rules, close } = connect(process.env.TARGET, options);
  try {
    const answer = await call(rules, "Classify", classify, null, { attempts: 1, timeoutMs: 5000 });
    return answer.classification.combinations[0].kind;
  } catch (error) {
    return error.code;
  } finally {
    close();
  }
}
const trusted = await attempt({ credentials: grpc.credentials.createSsl(readFileSync(process.env.CA)) });
const plaintext = await attempt({});
console.log(JSON.stringify({ trusted, plaintext }));
"""


class TestTls:
    def test_the_node_client_reaches_a_tls_referee_with_its_authority(
        self, node: str, redis_url: str, tmp_path: Path
    ) -> None:
        certificate = issue(tmp_path, trustme.CA())
        served = served_referee(
            redis_url, "node-tls", flags=certificate.serve_flags, credentials=certificate.credentials()
        )
        with served as referee:
            env = {**os.environ, "TARGET": referee, "CA": str(certificate.authority)}
            out = _run_script(node, _TLS_SCRIPT, env)
        assert out == {"trusted": "COMBINATION_KIND_SINGLE", "plaintext": 14}  # UNAVAILABLE without TLS


class TestNodeConformance:
    """The kit's protocol cases from a second language: clients/node/conformance.mjs, the same cases."""

    def test_the_node_runner_passes_every_protocol_case(self, node: str, referee: str) -> None:
        result = subprocess.run(
            [node, str(NODE_CLIENT / "conformance.mjs"), "--target", referee, "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, (
            f"conformance.mjs failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
        report = json.loads(result.stdout)
        cases = json.loads((ROOT / "conformance" / "protocol" / "cases.json").read_text())["cases"]
        default = [case for case in cases if case.get("profile", "default") == "default"]
        assert report["totals"] == {"passed": len(default), "failed": 0, "known_failing": 0, "unexpected_pass": 0}

    def test_the_node_runner_fails_a_case_the_referee_answers_otherwise(
        self, node: str, referee: str, tmp_path: Path
    ) -> None:
        import shutil

        kit = tmp_path / "kit"
        shutil.copytree(ROOT / "conformance", kit)
        cases_file = kit / "protocol" / "cases.json"
        data = json.loads(cases_file.read_text())
        case = next(case for case in data["cases"] if case["id"] == "bid.3p.too-low")
        case["steps"][-1]["expect"]["reason"] = "NOT_YOUR_TURN"
        cases_file.write_text(json.dumps(data))
        result = subprocess.run(
            [node, str(NODE_CLIENT / "conformance.mjs"), "--target", referee, "--kit", str(kit), "--only", "bid.3p."],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 1
        assert "FAILED bid.3p.too-low: step 3 (TableService.Bid): expected reason NOT_YOUR_TURN" in result.stdout

    def test_a_javascript_engine_reproduces_every_deal_vector_over_stdio(self, node: str) -> None:
        """docs/deal-reference.mjs behind the kit's stdio protocol: the deals, computed in a second language."""
        from dizhu.conformance import find_kit, load_engine, run_rules

        kit = find_kit()
        engine = load_engine(f"cmd:{node} {NODE_CLIENT / 'deal-engine.mjs'}")
        try:
            report = run_rules(kit, engine, families=("deals", "beats"), implementation="deal-reference")
        finally:
            engine.close()  # type: ignore[attr-defined]
        deals = [result for result in report.results if result.group == "deals"]
        assert deals
        assert {result.status for result in deals} == {"passed"}, report.to_text()
        others = [result for result in report.results if result.group == "beats"]
        assert {result.detail for result in others} == {"unsupported: deal-engine answers deals only, not beats"}
