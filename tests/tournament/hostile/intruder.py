"""A hostile tournament entrant: it tries to get out of its sandbox, then plays legal moves.

``intruder.py KIND PLAN`` -- ``KIND`` is ``stdio`` (dizhu.stdio/v1 on its pipes) or ``grpc``
(a ``command`` entrant playing through the SDK, ``dizhu bot``, at ``$DIZHU_TARGET``);
``PLAN`` is a JSON file (in its own folder) naming what to attack:

``{"mode": "attack" | "benign", "secret": path, "output": folder, "other": folder,
"runner_pid": n, "tcp": ["host:port", ...], "outside": "host:port", "host_tmp": path,
"forbidden_env": [names], "marker": text, "limits": {"file_size_mib", "tmp_mib", "open_files"}}``

With ``attack`` it first tries every escape below, each bounded, writing one line per try on
standard error -- ``probe NAME: blocked (...)`` when it failed, ``probe NAME: REACHED (...)``
when it got through -- then one attack on the limits, chosen by the game's number (a stdio
entrant does all this on its first request, which names the game):

* ``fork-bomb``  (game % 4 == 0) -- forks sleeping children until refused;
* ``memory``     (1) -- touches 1 GiB;
* ``cpu``        (2) -- two children spin for ever; the gRPC process spins too, the stdio one
  answers each request 0.4 s before its deadline (the game goes on, on the clock, meanwhile);
* ``flood``      (3) -- 32 MiB on standard error and, for stdio, standard output, then plays on.

It also leaves a ``setsid`` daemon (a Python sleeping 600 s, with the marker in its command
line) and a file at ``host_tmp``: the test looks for both from outside. ``benign``
only plays. Playing: stdio passes when it may, else plays the first legal move.
"""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

kind, plan_file = sys.argv[1], Path(sys.argv[2])
plan = json.loads(plan_file.read_text())


def probe(name, attempt):
    try:
        detail = attempt()
    except OSError as error:
        print(f"probe {name}: blocked ({type(error).__name__}: {error.strerror or error})", file=sys.stderr, flush=True)
        return
    if detail is None:
        print(f"probe {name}: blocked (nothing there)", file=sys.stderr, flush=True)
    else:
        print(f"probe {name}: REACHED ({detail})", file=sys.stderr, flush=True)


def read(path):
    return lambda: f"read {len(Path(path).read_bytes())} bytes of {path}"


def listing(path):
    return lambda: f"listed {sorted(os.listdir(path))[:5]} in {path}"


def connect(address):
    host, port = address.rsplit(":", 1)

    def attempt():
        with socket.create_connection((host, int(port)), timeout=2):
            return f"connected to {address}"

    return attempt


def write(path):
    def attempt():
        Path(path).write_text("intruder was here")
        return f"wrote {path}"

    return attempt


def other_processes():
    own = {str(os.getpid()), str(os.getppid()), "self", "thread-self"}
    seen = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and entry not in own:
            with contextlib.suppress(OSError):
                seen.append(Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:60])
    strangers = [cmd for cmd in seen if "intruder" not in cmd and "bwrap" not in cmd and cmd]
    return f"saw {strangers[:3]}" if strangers else None


def symlinked_secret():
    link = Path("/tmp/secret-link")
    link.symlink_to(plan["secret"])
    return read(link)()


def signal_runner():
    os.kill(plan["runner_pid"], signal.SIGTERM)
    return f"signalled {plan['runner_pid']}"


def environment():
    leaked = [name for name in plan["forbidden_env"] if name in os.environ]
    return f"environment holds {leaked}" if leaked else None


def big_file():
    size = (plan["limits"]["file_size_mib"] + 1) << 20
    try:
        Path("/tmp/big").write_bytes(b"x" * size)
    finally:
        Path("/tmp/big").unlink(missing_ok=True)
    return f"wrote a file of {size} bytes"


def fill_tmp():
    written = 0
    try:
        for n in range(plan["limits"]["tmp_mib"] + 2):
            Path(f"/tmp/fill-{n}").write_bytes(b"x" * (1 << 20))
            written += 1 << 20
    finally:  # room again for what follows
        for path in Path("/tmp").glob("fill-*"):
            path.unlink()
    return f"wrote {written} bytes in /tmp"


def open_files():
    files = [open("/dev/null") for _ in range(plan["limits"]["open_files"] + 8)]  # noqa: SIM115
    return f"opened {len(files)} files"


def escape():
    probe("read-secret", read(plan["secret"]))
    probe("read-output", listing(plan["output"]))
    probe("read-other-entrant", listing(plan["other"]))
    probe("read-etc-shadow", read("/etc/shadow"))
    probe("follow-planted-symlink", read(plan_file.parent / "escape"))
    probe("follow-own-symlink", symlinked_secret)
    probe("see-processes", other_processes)
    for address in plan["tcp"]:
        probe(f"connect-{address}", connect(address))
    probe("connect-outside", connect(plan["outside"]))
    probe("write-own-folder", write(plan_file.parent / "written"))
    probe("write-output", write(Path(plan["output"]) / "written"))
    probe("write-dev", write("/dev/written"))
    probe("chmod-referee-socket", lambda: os.chmod("/run/dizhu/referee.sock", 0) or "changed its mode")
    probe("signal-runner", signal_runner)
    probe("environment", environment)
    probe("big-file", big_file)
    probe("fill-tmp", fill_tmp)
    probe("open-files", open_files)
    # Not a probe the intruder can judge: the test looks for these from outside.
    Path(plan["host_tmp"]).write_text("intruder was here")
    subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)", plan["marker"]],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def spin():
    while True:
        pass


def limits(game_number):
    attack = ("fork-bomb", "memory", "cpu", "flood")[game_number % 4]
    print(f"attack {attack} (game {game_number})", file=sys.stderr, flush=True)
    if attack == "fork-bomb":
        children = 0
        while True:
            try:
                if os.fork() == 0:
                    time.sleep(600)
                    os._exit(0)
            except OSError as error:
                print(f"attack fork-bomb: refused after {children} ({error})", file=sys.stderr, flush=True)
                time.sleep(600)  # the runner kills it for reaching the limit
            children += 1
    if attack == "memory":
        balloon = bytearray(b"\1") * (1 << 30)
        print(f"attack memory: touched {len(balloon)} bytes", file=sys.stderr, flush=True)
    if attack == "cpu":
        for _ in range(2):
            if os.fork() == 0:
                spin()
        if kind == "grpc":
            spin()  # never plays: the game goes on with the clock while the three spin
        global slow  # noqa: PLW0603 -- a stdio bot answers each request just in time, to keep the game going
        slow = True
    if attack == "flood":
        chunk = "x" * (1 << 20) + "\n"
        for _ in range(32):
            sys.stderr.write(chunk)
            if kind == "stdio":
                sys.stdout.write(chunk)
        sys.stderr.flush()
        sys.stdout.flush()


slow = False


def play_stdio():
    attacked = plan["mode"] != "attack"
    for line in sys.stdin:
        request = json.loads(line)
        if not attacked:  # a stdio bot learns its game from its first request
            attacked = True
            escape()
            limits(int(request["game"].lstrip("g")))
        if slow:
            time.sleep(max(0.0, (request["time_left_ms"] or 0) / 1000 - 0.4))
        if request["type"] == "bid":
            reply = {"id": request["id"], "bid": 0}
        else:
            legal = request["legal"]
            reply = {"id": request["id"], "cards": "" if request["can_pass"] or not legal else legal[0]}
        print(json.dumps(reply), flush=True)


def play_grpc():
    from dizhu.client.command import main

    env = os.environ
    argv = ["--target", env["DIZHU_TARGET"], "--table", env["DIZHU_TABLE_ID"], "--bot", "random", "--seed", "1"]
    sys.exit(main(argv))


if kind == "stdio":
    play_stdio()
else:
    if plan["mode"] == "attack":
        escape()
        limits(int(os.environ["DIZHU_GAME"].lstrip("g")))
    play_grpc()
