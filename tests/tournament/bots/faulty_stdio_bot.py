"""A stdio bot (dizhu.stdio/v1) that misbehaves on purpose, for the tournament tests.

``MODE`` says how, from its first play request on (bids are always answered, with a pass):

* ``crash``   -- writes a line to standard error and exits with status 3;
* ``hang``    -- never answers (sleeps);
* ``illegal`` -- answers the lowest and the highest card of its hand: no combination;
* ``garbage`` -- writes a line that is not JSON before every (legal) answer.

Every process writes ``started pid=<pid>`` on standard error first, so tests can tell a
restarted process from the same one.
"""

import json
import os
import sys
import time

mode = sys.argv[1]
print(f"started pid={os.getpid()}", file=sys.stderr, flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if request["type"] == "bid":
        reply = {"id": request["id"], "bid": 0}
    elif mode == "crash":
        print(f"crashing at request {request['id']}", file=sys.stderr, flush=True)
        sys.exit(3)
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "illegal":
        hand = request["view"]["hand"].split()
        reply = {"id": request["id"], "cards": f"{hand[0]} {hand[-1]}"}
    else:
        print("this is not JSON", flush=True)
        legal = request["legal"]
        reply = {"id": request["id"], "cards": "" if request["can_pass"] or not legal else legal[0]}
    print(json.dumps(reply), flush=True)
