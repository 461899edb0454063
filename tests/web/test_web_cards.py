"""The web table's card ids (web/src/cards.ts, ``cardId``) against the one table (tests/data/card_ids.json).

Every card of both decks, read from the contract's JSON form (``fromJson``, as the page gets
cards in messages), run through the page's own functions in Node.js: ``cardId`` must give the
table's id (the page keeps selections and drops played cards by it) and ``formatCards`` the
table's notation. Builds with the contract's TypeScript and esbuild from web/node_modules
(tests.support.web_bundles). Needs Node.js and npm.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.card_ids import card_rows
from tests.support.web_bundles import bundle_for_node

_CARD_IDS_TS = """
import { fromJson } from "@bufbuild/protobuf";
import { readFileSync } from "node:fs";
import { cardId, formatCards } from "./cards";
import { CardSchema } from "./gen/dizhu/v1/cards_pb";

const cards: { rank: string; suit: string; copy: number }[] = JSON.parse(readFileSync(0, "utf8"));
const read = cards.map((card) => fromJson(CardSchema, card));
process.stdout.write(JSON.stringify({ ids: read.map(cardId), notations: read.map((card) => formatCards([card])) }));
"""


def test_card_id_gives_every_card_the_tables_id_and_notation(tmp_path: Path) -> None:
    bundle = bundle_for_node(tmp_path, "card_ids", _CARD_IDS_TS)
    rows = card_rows()
    cards = [{"rank": row["rank"], "suit": row["suit"], "copy": row["copy"]} for row in rows]
    ran = subprocess.run(
        ["node", str(bundle)], input=json.dumps(cards), capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["ids"] == [row["id"] for row in rows]
    assert out["notations"] == [row["notation"] for row in rows]
