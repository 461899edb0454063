"""Signed replays on real referees: GetRefereeKeys, the signature GetReplay returns, and
``verify`` / ``dizhu verify`` with the referee's keys.

The edits here are the ones the record's own consistency cannot catch (a legal play replaced
by another, a seat's pass relabelled as the clock's, a forfeit's cause changed): each still
verifies without a key, and fails with the key as a signature failure.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from dizhu.referee.replay import verify
from dizhu.referee.signing import Authenticity, PublicKey, SigningKeys, new_private_key, replay_digest
from dizhu.rules import parse_cards
from dizhu.v1 import table_pb2
from dizhu.v1 import table_service_pb2 as pb
from tests.support.grpc_calls import THREE, Table, bid_to_play, rid, view
from tests.support.live import Node, Referees, clock, create, run_cli
from tests.support.replays import play_to_close, round_replays

Document = dict[str, Any]


async def _keys(node: Node) -> tuple[PublicKey, ...]:
    """The referee's published keys, as a verifier builds them from GetRefereeKeys."""
    listed = (await node.tables.GetRefereeKeys(pb.GetRefereeKeysRequest())).keys
    return tuple(
        PublicKey(key.key_id, Ed25519PublicKey.from_public_bytes(key.public_key), current=key.current) for key in listed
    )


async def _round(node: Node, seed: int, *, clock_settings: table_pb2.ClockSettings | None = None) -> str:
    table = await create(node.tables, THREE, round_limit=1, clock_settings=clock_settings)
    await play_to_close(node, table, random.Random(seed))
    return (await round_replays(node, table))[0].json


def _edited(text: str, change: Callable[[Document], None]) -> str:
    document = json.loads(text)
    before = copy.deepcopy(document)
    change(document)
    assert document != before, "the edit changed nothing"
    return json.dumps(document)


def _play_another_card_of_a_rank(document: Document) -> None:
    """Replace a play by another legal one: a card of it by a card of the same rank the seat holds.

    The same rank makes the same combination; the other card, where the seat plays it later,
    becomes the first one, so every later play stays legal and the result is the same.
    """
    last = document["deals"][-1]
    landlord = document["result"]["landlord"]
    for action in last["actions"]:
        if not action.get("play") or action["timed_out"]:
            continue
        seat = action["seat"]
        held = last["hands"][seat].split() + (last["kitty"].split() if seat == landlord else [])
        played = action["play"].split()
        for card in played:
            twin = next((other for other in held if other[:1] == card[:1] and other not in played), None)
            if twin is None:
                continue
            for later in last["actions"]:
                if later["seat"] == seat and later.get("play"):
                    swapped = {card: twin, twin: card}
                    later["play"] = " ".join(swapped.get(c, c) for c in later["play"].split())
            return
    raise AssertionError("no seat played a card while holding another of its rank")


def _pass_as_the_clocks(document: Document) -> None:
    """Mark a seat's own pass as the clock's: the clock passes too, wherever passing is allowed."""
    action = next(a for a in document["deals"][-1]["actions"] if a.get("play") == "" and not a["timed_out"])
    action["timed_out"] = True


def _forfeit_on_time(document: Document) -> None:
    assert document["result"]["forfeit_cause"] == "left"
    document["result"]["forfeit_cause"] = "timeout"


class TestGetRefereeKeys:
    async def test_it_lists_the_current_key_whose_id_is_the_hash_of_its_public_key(self, referees: Referees) -> None:
        pem = new_private_key()
        node = await referees.start(signing_key=pem)
        (key,) = (await node.tables.GetRefereeKeys(pb.GetRefereeKeysRequest())).keys
        assert key.current
        assert key.algorithm == "ed25519"
        assert key.key_id == hashlib.sha256(key.public_key).hexdigest()[:16]
        assert len(key.public_key) == 32
        assert key.pem.startswith("-----BEGIN PUBLIC KEY-----")
        assert key.key_id == SigningKeys.from_pem(pem).key_id

    async def test_a_rotated_key_signs_new_rounds_and_old_rounds_still_verify_with_the_published_keys(
        self, referees: Referees
    ) -> None:
        old_pem = new_private_key()
        old = await referees.start(signing_key=old_pem)
        table = await create(old.tables, THREE, round_limit=1)
        await play_to_close(old, table, random.Random(4))
        retired = SigningKeys.from_pem(old_pem).public_pem().encode()
        new = await referees.start(own_redis=True, signing_key=new_private_key(), retired_signing_keys=retired)
        published = await _keys(new)
        assert [key.current for key in published] == [True, False]
        assert published[1].key_id == (await _keys(old))[0].key_id
        # The old round, served by the rotated referee, still verifies with what it publishes.
        served = await new.tables.GetReplay(pb.GetReplayRequest(table_id=table.table_id, round=1))
        assert served.signature.key_id == published[1].key_id
        assert verify(served.json, published).signature.authenticity is Authenticity.VALID
        assert verify(served.json, published).ok
        # A new round is signed by the new key, and the old key alone does not verify it.
        fresh = await _round(new, 5)
        assert json.loads(fresh)["signature"]["key_id"] == published[0].key_id
        assert verify(fresh, published).ok
        assert verify(fresh, published[1:]).signature.authenticity is Authenticity.UNKNOWN_KEY


class TestSignedReplay:
    async def test_getreplay_returns_the_signature_that_the_json_carries_and_it_verifies(
        self, referees: Referees
    ) -> None:
        node = await referees.start(signing_key=new_private_key())
        table = await create(node.tables, THREE, round_limit=1)
        await play_to_close(node, table, random.Random(8))
        (response,) = await round_replays(node, table)
        keys = await _keys(node)
        carried = json.loads(response.json)["signature"]
        assert (response.signature.algorithm, response.signature.key_id) == ("ed25519", keys[0].key_id)
        assert carried == {
            "algorithm": "ed25519",
            "key_id": keys[0].key_id,
            "value": base64.b64encode(response.signature.value).decode(),
        }
        # Over RFC 8785's form of the record without its signature, as docs/replay.md states.
        unsigned = {key: value for key, value in json.loads(response.json).items() if key != "signature"}
        keys[0].key.verify(response.signature.value, rfc8785.dumps(unsigned))
        result = verify(response.json, keys)
        assert result.ok, result.problems
        assert result.signature.authenticity is Authenticity.VALID
        # However it is formatted on its way, the record keeps its signature and its digest.
        reformatted = json.dumps(json.loads(response.json), indent=None, sort_keys=True)
        assert verify(reformatted, keys).ok
        assert replay_digest(reformatted) == replay_digest(response.json)

    async def test_a_replay_from_a_referee_with_another_key_fails_against_the_wrong_key_and_passes_its_own(
        self, referees: Referees
    ) -> None:
        ours = await referees.start(signing_key=new_private_key())
        theirs = await referees.start(own_redis=True, signing_key=new_private_key())
        text = await _round(theirs, 9)
        wrong = verify(text, await _keys(ours))
        assert not wrong.ok
        assert wrong.signature.authenticity is Authenticity.UNKNOWN_KEY
        assert any("none of the keys given" in problem for problem in wrong.problems)
        assert verify(text, await _keys(theirs)).ok

    async def test_an_unsigned_record_fails_with_a_key_and_passes_unchecked_without(self, referees: Referees) -> None:
        node = await referees.start()
        stripped = _edited(await _round(node, 10), lambda d: d.pop("signature"))
        assert verify(stripped).ok
        assert verify(stripped).signature.authenticity is Authenticity.NOT_CHECKED
        unsigned = verify(stripped, await _keys(node))
        assert not unsigned.ok
        assert unsigned.signature.authenticity is Authenticity.UNSIGNED


class TestEditsOnlyTheSignatureCatches:
    async def _check(self, node: Node, text: str, change: Callable[[Document], None]) -> None:
        keys = await _keys(node)
        assert verify(text, keys).ok, verify(text, keys).problems
        edited = _edited(text, change)
        unchecked = verify(edited)
        assert unchecked.ok, f"the edit is one the record's consistency catches: {unchecked.problems}"
        assert unchecked.signature.authenticity is Authenticity.NOT_CHECKED
        checked = verify(edited, keys)
        assert not checked.ok
        assert checked.signature.authenticity is Authenticity.INVALID
        assert checked.problems == (
            f"the signature by key {keys[0].key_id} does not match the record: it was altered after signing",
        )

    async def test_a_legal_play_replaced_by_another_with_the_same_result(self, referees: Referees) -> None:
        node = await referees.start()
        text = await _round(node, 11)
        edited = json.loads(_edited(text, _play_another_card_of_a_rank))
        assert edited["result"] == json.loads(text)["result"]
        assert [parse_cards(a["play"], 1) for a in edited["deals"][-1]["actions"] if "play" in a] != [
            parse_cards(a["play"], 1) for a in json.loads(text)["deals"][-1]["actions"] if "play" in a
        ]
        await self._check(node, text, _play_another_card_of_a_rank)

    async def test_a_seats_own_pass_relabelled_as_the_clocks(self, referees: Referees) -> None:
        node = await referees.start()
        # A clock that never runs out here: every pass is the seat's own, and the record says so.
        text = await _round(node, 12, clock_settings=clock(600_000))
        assert json.loads(text)["timeout_policy"] == "auto_play"
        await self._check(node, text, _pass_as_the_clocks)

    async def test_a_forfeit_by_leaving_relabelled_as_a_forfeit_on_time(self, referees: Referees) -> None:
        node = await referees.start()
        policy = table_pb2.TIMEOUT_POLICY_FORFEIT
        table = await create(node.tables, THREE, round_limit=1, clock_settings=clock(600_000, policy=policy))
        playing = await bid_to_play(node.tables, table)
        await node.tables.LeaveTable(
            pb.LeaveTableRequest(table_id=table.table_id, request_id=rid()), metadata=table.seat(playing.turn_seat)
        )
        (response,) = await round_replays(node, table)
        assert json.loads(response.json)["result"]["forfeited_by"] == playing.turn_seat
        await self._check(node, response.json, _forfeit_on_time)


class TestForfeitCause:
    async def test_a_forfeit_on_time_records_its_cause_and_an_impossible_cause_is_caught(
        self, referees: Referees
    ) -> None:
        node = await referees.start(clock_interval_s=0.02)
        policy = table_pb2.TIMEOUT_POLICY_FORFEIT
        table = await create(node.tables, THREE, round_limit=1, clock_settings=clock(200, policy=policy))
        await bid_to_play(node.tables, table)
        await _closed(node, table)
        (response,) = await round_replays(node, table)
        result = json.loads(response.json)["result"]
        assert result["forfeit_cause"] == "timeout"
        assert verify(response.json).ok
        # The clock ended this round, not a seat's call: its record is signed all the same.
        signed = verify(response.json, await _keys(node))
        assert signed.ok, signed.problems
        assert signed.signature.authenticity is Authenticity.VALID
        # Under auto-play the clock never forfeits: the cause contradicts the record's policy.
        edited = _edited(response.json, lambda d: d.update(timeout_policy="auto_play"))
        assert any("forfeit on time needs the forfeit policy" in p for p in verify(edited).problems)
        nonsense = _edited(response.json, lambda d: d["result"].update(forfeit_cause="bored"))
        assert any("forfeit cause 'bored'" in p for p in verify(nonsense).problems)


async def _closed(node: Node, table: Table) -> None:
    async with asyncio.timeout(20):
        while (await view(node.tables, table)).phase != table_pb2.PHASE_CLOSED:
            await asyncio.sleep(0.02)


class TestCommandLine:
    async def test_dizhu_verify_says_which_authenticity_and_fails_every_record_the_key_does_not_vouch_for(
        self, referees: Referees, tmp_path: Path
    ) -> None:
        private = tmp_path / "signing-key.pem"
        code, printed = await run_cli("serve", "--signing-key", str(private), "--print-public-key")
        assert code == 2, printed  # no such file: a usage error, no key made up in its place
        private.write_bytes(new_private_key())
        code, printed = await run_cli("serve", "--signing-key", str(private), "--print-public-key")
        assert code == 0, printed
        assert printed == SigningKeys.from_pem(private.read_bytes()).public_pem()
        public = tmp_path / "referee.pem"
        public.write_text(printed)
        stranger = tmp_path / "another-referee.pem"
        stranger.write_text(SigningKeys.from_pem(new_private_key()).public_pem())
        node = await referees.start(signing_key=private.read_bytes())
        text = await _round(node, 13)
        files = {
            "good": text,
            "edited": _edited(text, _play_another_card_of_a_rank),
            "unsigned": _edited(text, lambda d: d.pop("signature")),
        }
        for name, content in files.items():
            (tmp_path / f"{name}.json").write_text(content)
        target = f"127.0.0.1:{node.referee.port}"
        good, by_target, unchecked, edited, unsigned, unsigned_unchecked, wrong_key = await asyncio.gather(
            run_cli("verify", str(tmp_path / "good.json"), "--key", str(public)),
            run_cli("verify", str(tmp_path / "good.json"), "--target", target),
            run_cli("verify", str(tmp_path / "edited.json")),
            run_cli("verify", str(tmp_path / "edited.json"), "--key", str(public)),
            run_cli("verify", str(tmp_path / "unsigned.json"), "--key", str(public)),
            run_cli("verify", str(tmp_path / "unsigned.json")),
            run_cli("verify", str(tmp_path / "good.json"), "--key", str(stranger)),
        )
        key_id = SigningKeys.from_pem(private.read_bytes()).key_id
        for code, output in (good, by_target):
            assert code == 0, output
            assert f"Authenticity: signed by the referee's key {key_id}" in output
            assert f"Digest: {replay_digest(text)}" in output
        assert unchecked[0] == 0, unchecked[1]
        assert f"Authenticity: NOT checked (it carries a signature by key {key_id}" in unchecked[1]
        assert edited[0] == 1, edited[1]
        assert edited[1].startswith("NOT VERIFIED (SIGNATURE INVALID)")
        assert unsigned[0] == 1, unsigned[1]
        assert unsigned[1].startswith("NOT VERIFIED (UNSIGNED)")
        # Without a key, a record stripped of its signature verifies as before, and says so.
        assert unsigned_unchecked[0] == 0, unsigned_unchecked[1]
        assert "Authenticity: NOT checked (it carries no signature" in unsigned_unchecked[1]
        # The untouched record against another referee's key: the signer is named, and unknown.
        assert wrong_key[0] == 1, wrong_key[1]
        assert wrong_key[1].startswith("NOT VERIFIED (SIGNED BY AN UNKNOWN KEY)")
        assert f"signed by key {key_id}, which is none of the keys given" in wrong_key[1]
        code, output = await run_cli("verify", str(tmp_path / "good.json"), "--key", str(tmp_path / "good.json"))
        assert code == 2, output
        assert "no PEM public key" in output
