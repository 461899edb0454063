"""A gRPC executable kept for many games (``per_game = false``, protocol ``dizhu.exec/v1``), for the tests.

For each line of JSON on its standard input it plays the table named, one game at a time,
with the SDK's random bot (``dizhu bot``) at the line's ``target``: a ``host:port`` or, when
confined, ``unix:/run/dizhu/referee.sock``.
"""

import json
import sys

from dizhu.client.command import main

for line in sys.stdin:
    game = json.loads(line)
    seat = ["--table", game["table_id"], "--token", game["seat_token"]]
    status = main(["--target", game["target"], *seat, "--bot", "random"])
    print(f"game {game['game']} at {game['target']}: exit status {status}", file=sys.stderr, flush=True)
