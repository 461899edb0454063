"""A stdio bot (dizhu.stdio/v1) that misbehaves on purpose, for the tournament tests.

``MODE`` says how, from its first play request on (bids are always answered, with a pass):

* ``crash``   -- writes a line to standard error and exits with status 3;
* ``hang``    -- never answers (sleeps);
* ``illegal`` -- answers the lowest and the highest card of its hand: no combination;
* ``garbage`` -- writes a line that is not JSON before every (legal) answer;
* ``flood``   -- writes a line longer than the runner reads (2 MiB) before every (legal) answer;
* ``late``    -- answers (legally) two seconds after its deadline (well after it: the referee's
  clock acts on a deadline within a tick, a busy machine's referee some hundreds of ms later);
* ``exit``    -- exits with status 4 at start, before reading anything;
* ``fork``    -- plays legally, after forking a child that keeps its pipes and sleeps 300 s
  (it writes ``child pid=<pid>`` on standard error).

Every process writes ``started pid=<pid>`` on standard error first, so tests can tell a
restarted process from the same one.
"""

import json
import os
import sys
import time

mode = sys.argv[1]
print(f"started pid={os.getpid()}", file=sys.stderr, flush=True)
if mode == "exit":
    sys.exit(4)
if mode == "fork":
    child = os.fork()
    if child == 0:  # the child keeps the inherited standard input, output and error open
        time.sleep(300)
        os._exit(0)
    print(f"child pid={child}", file=sys.stderr, flush=True)


def legal_answer(request: dict) -> dict:
    legal = request["legal"]
    return {"id": request["id"], "cards": "" if request["can_pass"] or not legal else legal[0]}


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
    elif mode == "garbage":
        print("this is not JSON", flush=True)
        reply = legal_answer(request)
    elif mode == "flood":
        print("x" * (2 << 20), flush=True)
        reply = legal_answer(request)
    elif mode == "late":
        time.sleep((request["time_left_ms"] or 0) / 1000 + 2)
        reply = legal_answer(request)
    else:
        reply = legal_answer(request)
    print(json.dumps(reply), flush=True)
