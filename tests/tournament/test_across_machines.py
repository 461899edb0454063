"""A tournament across machines, rehearsed on one: the Kubernetes Job's runner pods as processes.

Each runner is started as ``deploy/k8s/tournament/job.yaml`` starts a pod: the Job's command
and arguments, its environment, and the tournament file of ``settings.yaml``'s ConfigMap in the
folder the pod mounts it at, with the cluster's names mapped to this machine's (the referee Service to
the ``referee`` fixture's ``dizhu serve``, the Redis Service to the tests' Redis, the Secret's
key to the referee's, each mounted folder to a temporary one). Only the length of the
tournament (``--deal-sets``), its lease and its name (a fresh one per run) are added on the
command line. One runner of several is killed with SIGKILL while it plays; the organiser's
collection from Redis (``--collect``) must then give the outputs one runner alone gives for
the same seed: the same standings and the same games, move for move (the bundled bots are
seeded per game, so a game played again after the kill is the same game).
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import redis
import yaml

from tests.support.tournaments import API_KEY, ROOT

MANIFESTS = ROOT / "deploy" / "k8s" / "tournament"
#: Short enough for a test, the same for the single runner and the several.
SHORTER = ("--deal-sets", "2", "--lease", "2")


@dataclasses.dataclass(frozen=True)
class Pod:
    """How the Job starts a runner pod, mapped onto this machine."""

    argv: list[str]
    environment: dict[str, str]
    #: The tournament file as the pod sees it (the ConfigMap's, in its mounted folder).
    file: Path
    #: The pod's own output folder.
    output: Path


def _manifests() -> dict[tuple[str, str], dict[str, Any]]:
    documents = [d for path in MANIFESTS.glob("*.yaml") for d in yaml.safe_load_all(path.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in documents}


def pod(folder: Path, *, referee: str, redis_url: str) -> Pod:
    """The Job's pod template as a process here, its volumes under ``folder`` (one folder per pod)."""
    manifests = _manifests()
    template = manifests["Job", "dizhu-tournament"]["spec"]["template"]["spec"]
    (container,) = template["containers"]
    volumes = {volume["name"]: volume for volume in template["volumes"]}
    paths: dict[str, str] = {}
    for mount in container["volumeMounts"]:
        local = folder / mount["name"]
        local.mkdir(parents=True)
        source = volumes[mount["name"]]
        if "configMap" in source:
            for key, text in manifests["ConfigMap", source["configMap"]["name"]]["data"].items():
                (local / key).write_text(text)
        paths[mount["mountPath"]] = str(local)
    args = list(container["args"])
    args[args.index("--referee") + 1] = referee
    for index, arg in enumerate(args):
        for mounted, local_path in paths.items():
            if arg.startswith(mounted + "/") or arg == mounted:
                args[index] = local_path + arg.removeprefix(mounted)
    assert container["command"][0] == "dizhu"
    argv = [sys.executable, "-m", "dizhu.cli", *container["command"][1:], *args]
    environment = {k: v for k, v in os.environ.items() if not (k.startswith("DIZHU_") or k == "REDIS_URL")}
    for entry in container["env"]:
        if entry["name"] == "REDIS_URL":
            environment["REDIS_URL"] = redis_url  # the Redis Service
        elif "secretKeyRef" in entry.get("valueFrom", {}):
            assert entry["name"] == "DIZHU_API_KEY"
            environment["DIZHU_API_KEY"] = API_KEY  # the referee's key, as the Secret gives it
        else:
            environment[entry["name"]] = entry["value"]
    (file,) = (Path(arg) for arg in args if arg.endswith(".toml"))
    return Pod(argv, environment, file, Path(args[args.index("--output") + 1]))


def records(redis_url: str, name: str, part: str) -> dict[str, bytes]:
    with redis.Redis.from_url(redis_url) as client:
        return {game.decode(): value for game, value in client.hgetall(f"dizhu:{{tournament:{name}}}:{part}").items()}


def collect(runner: Pod, name: str, output: Path, redis_url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The organiser's collection: ``--collect`` with the same file, from Redis alone (``extra``: more flags)."""
    argv = [
        *runner.argv[: runner.argv.index("tournament") + 1],
        str(runner.file),
        *SHORTER,
        "--name",
        name,
        "--collect",
        "--redis-url",
        redis_url,
        "--output",
        str(output),
        *extra,
    ]
    environment = {k: v for k, v in runner.environment.items() if k not in ("REDIS_URL", "DIZHU_API_KEY")}
    return subprocess.run(argv, env=environment, capture_output=True, check=False, text=True, timeout=120)


def played(replay_text: str) -> dict[str, Any]:
    """What was played in a game: the deals, every action, the result (no table id, clock time or signature)."""
    replay = json.loads(replay_text)
    deals = [
        {**deal, "actions": [{k: v for k, v in a.items() if k not in ("time", "took_ms")} for a in deal["actions"]]}
        for deal in replay["deals"]
    ]
    return {"variant": replay["variant"], "deals": deals, "result": replay["result"], "balances": replay["balances"]}


def outputs(folder: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The standings (results.json without the name and the records' digests) and each game as played."""
    results = json.loads((folder / "results.json").read_text())
    del results["tournament"]["name"], results["replays"]
    games = {game.name: played((game / "replay.json").read_text()) for game in (folder / "games").iterdir()}
    return results, games


class TestAcrossMachines:
    def test_runner_pods_one_killed_mid_game_give_the_single_runners_outputs(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        alone = pod(tmp_path / "alone", referee=referee, redis_url=redis_url)
        alone_name = f"alone-{uuid.uuid4().hex[:8]}"
        single = subprocess.run(
            [*alone.argv, *SHORTER, "--name", alone_name],
            env=alone.environment,
            capture_output=True,
            check=False,
            text=True,
            timeout=120,
        )
        assert single.returncode == 0, single.stderr

        parallelism = _manifests()["Job", "dizhu-tournament"]["spec"]["parallelism"]
        name = f"pods-{uuid.uuid4().hex[:8]}"
        pods = [pod(tmp_path / f"pod{i}", referee=referee, redis_url=redis_url) for i in range(parallelism)]
        logs = [(tmp_path / f"pod{i}.stderr").open("wb") for i in range(parallelism)]
        runners = [
            subprocess.Popen(
                [*p.argv, *SHORTER, "--name", name], env=p.environment, stdout=subprocess.DEVNULL, stderr=log
            )
            for p, log in zip(pods, logs, strict=True)
        ]
        # A runner's claims carry its name, <host>-<pid>-<random> (dizhu.tournament.runner).
        named = {f"{socket.gethostname()}-{runner.pid}-".encode(): index for index, runner in enumerate(runners)}
        try:
            deadline = time.monotonic() + 120
            while True:  # the first runner seen playing a game once a game is recorded is the one killed
                done = records(redis_url, name, "results")
                owners = records(redis_url, name, "owners")
                busy = [
                    named[prefix]
                    for prefix in named
                    for g, o in owners.items()
                    if o.startswith(prefix) and g not in done
                ]
                if done and busy:
                    break
                for index, runner in enumerate(runners):
                    assert runner.poll() is None, (tmp_path / f"pod{index}.stderr").read_text()
                assert time.monotonic() < deadline, "no runner was mid-game after a game was recorded"
                time.sleep(0.02)
            killed = busy[0]
            mine = next(prefix for prefix, index in named.items() if index == killed)
            runners[killed].send_signal(signal.SIGKILL)
            assert runners[killed].wait(timeout=10) == -signal.SIGKILL
            # What it was playing when it died (nobody takes a game over before its lease runs out).
            done = records(redis_url, name, "results")
            owners = records(redis_url, name, "owners")
            lost = [game for game, owner in owners.items() if owner.startswith(mine) and game not in done]
            assert lost
            for index, runner in enumerate(runners):
                if index != killed:
                    assert runner.wait(timeout=120) == 0, (tmp_path / f"pod{index}.stderr").read_text()
        finally:
            for runner in runners:
                if runner.poll() is None:
                    runner.kill()
                    runner.wait()
            for log in logs:
                log.close()
        for index in set(range(parallelism)) - {killed}:
            assert "Traceback" not in (tmp_path / f"pod{index}.stderr").read_text()

        attempts = {game: int(n) for game, n in records(redis_url, name, "attempts").items()}
        # The killed pod's games were taken over (once, unless a loaded machine stalled a runner past its lease).
        assert all(attempts[game] >= 2 for game in lost)
        final = records(redis_url, name, "results")
        assert not any(json.loads(final[game])["runner"].startswith(mine.decode()) for game in lost)

        collected = collect(pods[1], name, tmp_path / "collected", redis_url)
        assert collected.returncode == 0, collected.stderr
        assert "12 of 12 games recorded" in collected.stdout
        results, games = outputs(tmp_path / "collected")
        expected_results, expected_games = outputs(alone.output)
        assert results["games"] == {"scheduled": 12, "played": 12, "complete": True}
        assert sorted(games) == [f"g{i:05d}" for i in range(12)]
        assert games == expected_games
        assert results == expected_results


class TestCollect:
    def test_an_unfinished_tournament_is_collected_with_exit_status_3(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        runner = pod(tmp_path / "pod", referee=referee, redis_url=redis_url)
        name = f"part-{uuid.uuid4().hex[:8]}"
        some = subprocess.run(
            [*runner.argv, *SHORTER, "--name", name, "--max-games", "2", "--concurrency", "1"],
            env=runner.environment,
            capture_output=True,
            check=False,
            text=True,
            timeout=120,
        )
        assert some.returncode == 0, some.stderr
        collected = collect(runner, name, tmp_path / "collected", redis_url)
        assert collected.returncode == 3, collected.stderr
        assert "2 of 12 games recorded" in collected.stdout
        assert "not complete" in collected.stderr
        assert sorted(game.name for game in (tmp_path / "collected" / "games").iterdir()) == ["g00000", "g00001"]
        results = json.loads((tmp_path / "collected" / "results.json").read_text())
        assert results["games"] == {"scheduled": 12, "played": 2, "complete": False}
        # Another schedule under the same name (here: more deal sets) is not this tournament.
        refused = collect(runner, name, tmp_path / "other", redis_url, "--deal-sets", "3")
        assert refused.returncode == 2
        assert f"Redis holds a tournament named {name!r} with another schedule" in refused.stderr

    def test_a_tournament_redis_does_not_hold_is_refused_by_name(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        runner = pod(tmp_path / "pod", referee=referee, redis_url=redis_url)
        collected = collect(runner, "never-played", tmp_path / "collected", redis_url)
        assert collected.returncode == 2
        assert "Redis holds no tournament named 'never-played'" in collected.stderr


class TestStopped:
    def test_a_pod_stopped_with_sigterm_gives_its_games_back_at_once(
        self, tmp_path: Path, referee: str, redis_url: str
    ) -> None:
        # Kubernetes stops a pod (a drain, a deletion, a preemption) with SIGTERM: the games it
        # plays go back to the queue then, not after their leases (a minute here) run out.
        runner = pod(tmp_path / "pod", referee=referee, redis_url=redis_url)
        name = f"stop-{uuid.uuid4().hex[:8]}"
        with (tmp_path / "pod.stderr").open("wb") as log:
            process = subprocess.Popen(
                [*runner.argv, *SHORTER, "--lease", "60", "--name", name],
                env=runner.environment,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        try:
            deadline = time.monotonic() + 60
            while not (playing := records(redis_url, name, "owners")):
                assert process.poll() is None, (tmp_path / "pod.stderr").read_text()
                assert time.monotonic() < deadline, "the runner claimed no game in a minute"
                time.sleep(0.02)
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=20) == 128 + signal.SIGTERM
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = (tmp_path / "pod.stderr").read_text()
        assert "Traceback" not in stderr
        assert "stopped; run the same command again to resume" in stderr
        done = records(redis_url, name, "results")
        given_back = {game for game, owner in records(redis_url, name, "owners").items() if owner == b""}
        assert set(playing) - set(done) <= given_back
        with redis.Redis.from_url(redis_url) as client:
            base = f"dizhu:{{tournament:{name}}}"
            assert client.zcard(f"{base}:leases") == 0  # nothing waits for a lease to run out
            queued = {game.decode() for game in client.lrange(f"{base}:queue", 0, -1)}
        assert given_back <= queued
        assert len(done) + len(queued) == 12
