"""The tournament file: TOML keys, command-line overrides, and the mistakes it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from dizhu.cli import build_parser
from dizhu.config import config_from_args
from dizhu.referee.signing import new_private_key
from dizhu.tournament.config import DEFAULT_ENTRANTS, ConfigError, load_config
from dizhu.tournament.referees import serve_arguments


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cup.toml"
    path.write_text(text)
    return path


FULL = """
name = "cup"
variant = "4p"
format = "random"
deal_sets = 7
seed = "x"
concurrency = 2
output = "results"
[clock]
decision_s = 2
timeout_policy = "forfeit"
[referee]
targets = ["127.0.0.1:1", "127.0.0.1:2"]
api_key = "k"
lease_s = 3
stderr_cap_kib = 8
serve_args = ["--workers", "1"]
[[entrants]]
name = "a"
bot = "heuristic"
[[entrants]]
name = "b"
stdio = ["node", "b.mjs"]
[[entrants]]
name = "c"
command = ["./c", "{table_id}"]
per_game = false
[[entrants]]
name = "d"
bot = "mypackage.bots:Clever"
"""


class TestLoad:
    def test_every_key_of_the_file(self, tmp_path: Path) -> None:
        config = load_config(write(tmp_path, FULL))
        assert (config.name, config.variant, config.format, config.deal_sets, config.seed) == (
            "cup",
            "4p",
            "random",
            7,
            "x",
        )
        assert config.output == tmp_path / "results"
        assert config.base_dir == tmp_path
        assert (config.clock.decision_s, config.clock.timeout_policy) == (2.0, "forfeit")
        assert config.referees == ("127.0.0.1:1", "127.0.0.1:2")
        assert (config.api_key, config.lease_s, config.stderr_cap_bytes) == ("k", 3.0, 8192)
        assert config.serve_args == ("--workers", "1")
        assert [e.kind for e in config.entrants] == ["bot", "stdio", "grpc", "bot"]
        assert config.entrants[2].per_game is False

    def test_overrides_win(self, tmp_path: Path) -> None:
        config = load_config(write(tmp_path, FULL), {"deal_sets": 2, "clock.decision_s": 9.0, "name": None})
        assert (config.deal_sets, config.clock.decision_s, config.name) == (2, 9.0, "cup")

    def test_no_file_is_the_bundled_bots(self) -> None:
        config = load_config(None)
        assert config.entrants == DEFAULT_ENTRANTS
        assert {e.bot for e in config.entrants} == {"heuristic", "random"}

    def test_the_name_defaults_to_the_file_name(self, tmp_path: Path) -> None:
        assert load_config(write(tmp_path, "")).name == "cup"

    def test_the_fingerprint_ignores_where_and_how_fast(self, tmp_path: Path) -> None:
        base = load_config(write(tmp_path, FULL))
        assert (
            load_config(write(tmp_path, FULL), {"concurrency": 9, "referees": ()}).fingerprint() == base.fingerprint()
        )
        assert load_config(write(tmp_path, FULL), {"deal_sets": 8}).fingerprint() != base.fingerprint()


class TestRefusals:
    @pytest.mark.parametrize(
        ("text", "key"),
        [
            ("colour = 1", "colour"),
            ("deal_sets = 'many'", "deal_sets"),
            ("variant = '5p'", "variant"),
            ("format = 'swiss'", "format"),
            ("[clock]\ntimeout_policy = 'nap'", "clock.timeout_policy"),
            ("[referee]\nport = 1", "referee.port"),
            ("[[entrants]]\nname = 'a'\nbot = 'random'\n[[entrants]]\nname = 'a'\nbot = 'random'", "entrants"),
            ("[[entrants]]\nname = 'a'\nbot = 'random'", "entrants"),
            ("[[entrants]]\nname = 'a b'\nbot = 'random'", "name"),
            (
                "[[entrants]]\nname = 'a'\n[[entrants]]\nname='b'\nbot='random'\n[[entrants]]\nname='c'\nbot='random'",
                "exactly one",
            ),
            ("[[entrants]]\nname = 'a'\nbot = 'nonsense'", "bot"),
            (
                "[clock]\ndecision_s = 0\n[[entrants]]\nname='a'\nstdio=['x']\n[[entrants]]\nname='b'\nbot='random'\n"
                "[[entrants]]\nname='c'\nbot='random'",
                "clock.decision_s",
            ),
            ("not toml at all [", "cup.toml"),
            ("[referee]\ntls = true", "referee.tls"),  # TLS to embedded referees, which speak plaintext
            ("[referee]\ntls = 'yes'", "referee.tls"),
            ("[referee]\nredis_url = 'unix:/tmp/r.sock'", "referee.redis_url"),  # redis-py wants unix://
        ],
    )
    def test_refused_with_the_key_named(self, tmp_path: Path, text: str, key: str) -> None:
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            load_config(write(tmp_path, text))


class TestTls:
    def test_the_authority_is_found_beside_the_file_and_handed_to_executable_entrants(self, tmp_path: Path) -> None:
        config = load_config(write(tmp_path, "[referee]\ntargets = ['r:1']\ntls_ca = 'certs/ca.pem'"))
        assert config.tls_ca == (tmp_path / "certs" / "ca.pem").resolve()
        assert config.tls_environment() == {"DIZHU_TLS": "1", "DIZHU_TLS_CA": str(config.tls_ca)}
        system = load_config(write(tmp_path, "[referee]\ntargets = ['r:1']\ntls = true"))
        assert system.tls_environment() == {"DIZHU_TLS": "1"}
        assert load_config(write(tmp_path, "[referee]\ntargets = ['r:1']")).tls_environment() == {}

    def test_how_the_referees_are_reached_does_not_change_the_schedule(self, tmp_path: Path) -> None:
        plain = load_config(write(tmp_path, "[referee]\ntargets = ['r:1']"))
        assert load_config(write(tmp_path, "[referee]\ntargets = ['r:1']\ntls = true")).fingerprint() == (
            plain.fingerprint()
        )


class TestEmbeddedReferee:
    @pytest.mark.parametrize("api_key", ["plain", "-starts-like-a-flag", "--also"])
    def test_its_command_line_carries_any_api_key_and_the_shared_signing_key(
        self, api_key: str, tmp_path: Path
    ) -> None:
        key = tmp_path / "signing-key.pem"
        key.write_bytes(new_private_key())
        command = serve_arguments("127.0.0.1:0", "redis://127.0.0.1:1/0", api_key, "t", ["--workers", "1"], key)
        parsed = build_parser().parse_args(command[3:])
        config = config_from_args(parsed)
        assert config.api_keys == (api_key,)
        assert (config.key_prefix, config.workers) == ("t", 1)
        assert config.signing_key == key.read_bytes()
