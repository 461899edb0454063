"""The native engine's boundary: chosen by the environment, inputs bounded, panics turned into exceptions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import dizhu.rules
from dizhu import engine
from dizhu.rules import FOUR_PLAYER, THREE_PLAYER, legal_moves, parse_cards
from dizhu.rules.engines import EngineUnavailable, native_module, native_rules


def _native() -> object:
    module = native_module()
    assert module is not None, f"{engine.native_error()}: install with Rust's cargo on the PATH (docs/engine.md)"
    return module


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DIZHU_")} | env
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=False)


class TestChoice:
    def test_the_native_engine_is_built_and_used_by_default(self) -> None:
        module = _native()
        assert engine.available() == ("native", "python")
        done = _python("from dizhu import engine; print(engine.backend())")
        assert done.stdout.strip() == "native", done.stderr
        # An editable install builds the extension next to the package it belongs to.
        assert Path(module.__file__).parent == Path(dizhu.rules.__file__).parent.parent  # type: ignore[attr-defined]

    def test_dizhu_engine_python_forces_the_pure_core(self) -> None:
        done = _python("from dizhu import engine; print(engine.backend())", DIZHU_ENGINE="python")
        assert done.stdout.strip() == "python", done.stderr

    def test_an_unknown_engine_is_refused_by_name(self) -> None:
        done = _python("import dizhu.rules", DIZHU_ENGINE="fortran")
        assert done.returncode != 0
        assert "no engine is called 'fortran'" in done.stderr

    @pytest.mark.parametrize("env", [{"DIZHU_REQUIRE_NATIVE": "1"}, {"DIZHU_ENGINE": "native"}])
    def test_a_missing_native_engine_is_an_error_when_it_is_required(self, env: dict[str, str]) -> None:
        hide = "import sys; sys.modules['dizhu._engine'] = None; import dizhu.rules"
        done = _python(hide, **env)
        assert done.returncode != 0
        assert "EngineUnavailable" in done.stderr
        assert "dizhu._engine" in done.stderr
        assert _python(hide).returncode == 0, "without the requirement the pure core is used"

    def test_selecting_a_missing_engine_name_changes_nothing(self) -> None:
        before = engine.backend()
        with pytest.raises(ValueError, match="no engine is called"):
            engine.select("cobol")
        assert engine.backend() == before

    def test_using_restores_the_engine_used_before(self) -> None:
        _native()
        with engine.using("python"):
            assert engine.backend() == "python"
            assert native_rules(THREE_PLAYER) is None
            with engine.using("native"):
                assert native_rules(THREE_PLAYER) is not None
            assert engine.backend() == "python"


class TestBoundary:
    def test_a_panic_in_rust_is_a_python_exception_and_the_engine_goes_on(self) -> None:
        module = _native()
        with pytest.raises(RuntimeError, match="native engine fault: on purpose") as raised:
            module.panic_for_testing("on purpose")  # type: ignore[attr-defined]
        assert isinstance(raised.value, module.EngineFault)  # type: ignore[attr-defined]
        with engine.using("native"):
            assert len(legal_moves(parse_cards("3 4"), None, THREE_PLAYER)) == 2

    def test_inputs_out_of_range_are_value_errors(self) -> None:
        _native()
        with engine.using("native"):
            rules = native_rules(FOUR_PLAYER)
            assert rules is not None
            with pytest.raises(ValueError, match="no rank has value 15"):
                rules.read(bytes([15]))
            with pytest.raises(ValueError, match="no rank has value 200"):
                rules.legal_moves([200], None, int)
            with pytest.raises(ValueError, match="no combination kind 0"):
                rules.legal_moves([0], (0, 1, 0), int)
            with pytest.raises(ValueError, match="no card of the 4p deck has id 108"):
                rules.start_round([[108]] * 4, [], 0)
            with pytest.raises(TypeError):
                rules.legal_moves(["3"], None, int)

    def test_a_variant_the_native_engine_does_not_play_is_computed_in_python(self) -> None:
        import dataclasses

        _native()
        three_decks = dataclasses.replace(FOUR_PLAYER, name="6p", players=6, decks=3, hand_size=25, kitty_size=12)
        with engine.using("native"):
            assert native_rules(three_decks) is None
            assert native_rules(FOUR_PLAYER) is not None


class TestBatchedRandomRounds:
    def test_a_batch_is_reproducible_and_every_round_ends(self) -> None:
        _native()
        for variant in (THREE_PLAYER, FOUR_PLAYER):
            batch = engine.random_rounds(variant, seed=11, rounds=300, spring=True)
            assert batch.rounds == 300
            assert batch.thrown_in < 300 // 10  # all pass at once: 1 round in 64 (3p), in 256 (4p)
            assert 0 < batch.landlord_wins < 300 - batch.thrown_in
            assert batch.actions > 300 * 10
            assert engine.random_rounds(variant, seed=11, rounds=300, spring=True) == batch
            assert engine.random_rounds(variant, seed=12, rounds=300, spring=True) != batch

    def test_batched_rounds_need_the_native_engine_not_its_selection(self) -> None:
        _native()
        with engine.using("python"):
            assert engine.random_rounds(THREE_PLAYER, seed=1, rounds=5).rounds == 5
            assert engine.backend() == "python"

    def test_without_the_native_engine_a_batch_says_why(self) -> None:
        hide = (
            "import sys; sys.modules['dizhu._engine'] = None\n"
            "from dizhu import engine; from dizhu.rules import THREE_PLAYER\n"
            "engine.random_rounds(THREE_PLAYER, 1, 1)"
        )
        done = _python(hide)
        assert done.returncode != 0
        assert "EngineUnavailable" in done.stderr


def test_engine_unavailable_is_a_runtime_error() -> None:
    assert issubclass(EngineUnavailable, RuntimeError)


class TestRulesByEngine:
    def test_each_engine_s_rules_answer_alike_whichever_engine_is_selected(self) -> None:
        from dizhu.rules import Bid, apply, start_round

        _native()
        native, python = engine.rules("native"), engine.rules("python")
        assert engine.rules("native") is native
        for selected in engine.BACKENDS:
            with engine.using(selected):
                for seed in range(20):
                    dealt = native.deal(bytes([seed]) * 32, FOUR_PLAYER, seed % 4)
                    assert dealt == python.deal(bytes([seed]) * 32, FOUR_PLAYER, seed % 4)
                    state = start_round(dealt)
                    assert native.legal_plays(state) == python.legal_plays(state) == []
                    state = apply(state, Bid(state.turn, 3)).state
                    assert native.legal_plays(state) == python.legal_plays(state)
                    assert len(python.legal_plays(state)) > 20
                assert engine.backend() == selected

    def test_an_unknown_engine_has_no_rules(self) -> None:
        with pytest.raises(ValueError, match="no engine is called 'fortran'"):
            engine.rules("fortran")
