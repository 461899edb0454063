"""Tokens as every command line can take them: a token never begins with "-".

A URL-safe base64 token begins with "-" once in 64; ``dizhu bot --token {seat_token}`` (the
way docs/tournaments.md spells an entrant's command) then read it as a flag and exited 2
before its table began.
"""

from __future__ import annotations

from dizhu.referee.tokens import TokenKeys

SECRET = b"s" * 32


class TestMintedTokens:
    def test_no_token_begins_with_a_dash_and_every_one_is_minted_again_from_its_recipe(self) -> None:
        keys = TokenKeys([SECRET])
        minted = [keys.mint(f"t{i}") for i in range(2_000)]  # about 31 would begin with "-" by chance
        assert not [m.token for m in minted if m.token.startswith("-")]
        assert all(keys.remint(f"t{i}", m.recipe) == m.token for i, m in enumerate(minted))
        assert {len(m.token) for m in minted} == {43}
