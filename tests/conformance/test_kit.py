"""The kit as data: every file valid against its schema, reproduced byte for byte by its generator, complete."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dizhu.conformance import FAMILIES, KitError, find_kit
from tests.support.conformance_kit import KIT, ROOT, edit_json, kit_copy

GENERATOR = ROOT / "scripts" / "gen_conformance"
#: Reasons no request sequence can bring about from a healthy referee: faults, of its store or its own.
NOT_PROVOKED = {"UNAVAILABLE", "INTERNAL"}


def _generate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *args], capture_output=True, text=True, timeout=120, check=False
    )


class TestSchemas:
    def test_every_file_of_the_kit_is_valid_against_its_schema(self) -> None:
        assert KIT.validate() == []

    def test_every_schema_is_a_valid_2020_12_schema(self) -> None:
        import jsonschema

        schemas = sorted((KIT.root / "schemas").glob("*.schema.json"))
        assert len(schemas) == len(FAMILIES) + 2  # one per rules family, the protocol cases, known-failing lists
        for path in schemas:
            schema = KIT.load(f"schemas/{path.name}")
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", path.name
            jsonschema.Draft202012Validator.check_schema(schema)

    def test_a_vector_that_breaks_its_schema_is_reported_with_its_place(self, tmp_path: Path) -> None:
        def break_a_case(root: Path) -> None:
            edit_json(root / "rules" / "classify.json", lambda data: data["cases"][3]["query"].update(cards="3 X"))

        errors = kit_copy(tmp_path, break_a_case).validate()
        assert len(errors) == 1
        assert errors[0].startswith("rules/classify.json: cases/3/query/cards:")

    def test_a_protocol_step_with_an_unknown_field_is_reported(self, tmp_path: Path) -> None:
        def add_field(root: Path) -> None:
            edit_json(root / "protocol" / "cases.json", lambda data: data["cases"][0]["steps"][0].update(retry=2))

        assert any(
            "protocol/cases.json: cases/0/steps/0" in error for error in kit_copy(tmp_path, add_field).validate()
        )


class TestGeneration:
    def test_regenerating_reproduces_the_frozen_kit_byte_for_byte(self, tmp_path: Path) -> None:
        generated = _generate("--out", str(tmp_path))
        assert generated.returncode == 0, generated.stderr
        written = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*.json"))
        assert len(written) == len(FAMILIES) + 1 + len(list((KIT.root / "schemas").glob("*.json")))
        for name in written:
            assert (tmp_path / name).read_bytes() == (KIT.root / name).read_bytes(), name

    def test_check_passes_on_the_frozen_kit(self) -> None:
        checked = _generate("--check")
        assert checked.returncode == 0, checked.stderr


class TestCoverage:
    def test_every_family_has_cases_of_both_variants(self) -> None:
        for family in FAMILIES:
            variants = {case["query"]["variant"] for case in KIT.load(f"rules/{family}.json")["cases"]}
            assert variants == {"3p", "4p"}, family

    def test_every_near_miss_of_3p_that_4p_shares_has_a_4p_case(self) -> None:
        near: dict[str, set[str]] = {"3p": set(), "4p": set()}
        for case in KIT.load("rules/classify.json")["cases"]:
            _, variant, name = case["id"].split(".", 2)
            if name.startswith("near."):
                near[variant].add(name)
        # Not near misses in 4p: single wings and quad + two are not played there (4p has
        # near.airplane-singles and near.quad-two-* instead), and two decks make five 3s a
        # bomb and two black jokers a pair (classify.4p.bomb-5-not-trio-pair, pair-black-jokers).
        # A 4p hand holds 33 cards, not 20: its sets larger than a hand are others
        # (near.over-a-hand.trio-sequence-12, near.over-a-hand.airplane-pairs-7).
        three_player_only = {
            "near.airplane-both-jokers",
            "near.airplane-pair-wing-as-singles",
            "near.quad-both-jokers",
            "near.quad-pair-single",
            "near.quad-pair-as-two-singles",
            "near.five-threes",
            "near.two-black-jokers",
            "near.over-a-hand.trio-sequence-7",
            "near.over-a-hand.pair-sequence-11",
            "near.over-a-hand.airplane-singles-6",
            "near.over-a-hand.airplane-pairs-5",
        }
        assert three_player_only <= near["3p"]
        assert near["3p"] - three_player_only <= near["4p"]

    def test_case_ids_are_unique_and_every_case_gives_its_reason(self) -> None:
        cases = [case for family in FAMILIES for case in KIT.load(f"rules/{family}.json")["cases"]]
        cases += KIT.load("protocol/cases.json")["cases"]
        ids = [case["id"] for case in cases]
        assert len(ids) == len(set(ids))
        assert all(re.search(r"docs/|errors\.proto|\.proto", case["reason"]) for case in cases)

    def test_the_protocol_cases_are_at_least_150_and_call_every_rpc(self) -> None:
        cases = KIT.load("protocol/cases.json")["cases"]
        assert len(cases) >= 150
        called = {step["call"] for case in cases for step in case["steps"]}
        services = (ROOT / "proto" / "dizhu" / "v1" / "table_service.proto").read_text()
        services += (ROOT / "proto" / "dizhu" / "v1" / "rules_service.proto").read_text()
        declared = {
            f"{service}.{rpc}"
            for service, body in re.findall(r"service (\w+) \{(.*?)\n\}", services, re.S)
            for rpc in re.findall(r"rpc (\w+)\(", body)
        }
        assert called == declared

    def test_every_error_reason_a_referee_can_be_made_to_give_has_a_case(self) -> None:
        reasons = set(re.findall(r"ERROR_REASON_(\w+) = [1-9]", (ROOT / "proto/dizhu/v1/errors.proto").read_text()))
        expected = {
            step["expect"].get("reason")
            for case in KIT.load("protocol/cases.json")["cases"]
            for step in case["steps"]
            if "expect" in step
        }
        assert reasons - NOT_PROVOKED == expected - {None}

    def test_the_kit_says_which_reasons_it_cannot_provoke_and_why(self) -> None:
        not_provoked = KIT.load("protocol/cases.json")["not_provoked"]
        assert set(not_provoked) == NOT_PROVOKED
        assert all(why.strip() for why in not_provoked.values())

    @pytest.mark.parametrize("implementation", ["dizhu", "dizhu-node", "python", "native"])
    def test_our_own_known_failing_lists_are_empty(self, implementation: str) -> None:
        assert KIT.known_failing(implementation) == frozenset()


class TestFindingTheKit:
    def test_an_explicit_folder_without_a_version_is_refused_with_a_hint(self, tmp_path: Path) -> None:
        with pytest.raises(KitError, match="pass --kit DIR"):
            find_kit(str(tmp_path))

    def test_the_environment_names_the_kit(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        copy = kit_copy(tmp_path)
        monkeypatch.setenv("DIZHU_CONFORMANCE_KIT", str(copy.root))
        assert find_kit().root == copy.root
