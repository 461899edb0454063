"""A tournament's folder: the saved games, and the results computed from them alone.

Layout of the output folder (docs/tournaments.md):

* ``tournament.json`` -- the tournament and its schedule (schema ``dizhu.tournament/v1``);
* ``games/<game>/replay.json`` -- the referee's replay of the game, signed (``dizhu verify`` checks it);
* ``referee-keys.pem`` -- the public keys of the referees that signed the replays
  (``dizhu verify --key referee-keys.pem games/<game>/replay.json``);
* ``games/<game>/game.json`` -- table, attempt, runner, and each seat's faults;
* ``games/<game>/seat<N>-<entrant>.stderr.txt`` -- what the entrant's process wrote on
  standard error during the game (capped), for processes that wrote anything;
* ``results.json`` (schema ``dizhu.tournament.results/v1``), ``games.csv``,
  ``standings.csv``, ``leaderboard.md`` and ``ratings.png``: all computed by
  :func:`write_results` from the files above, which is what ``dizhu tournament report DIR``
  runs, so a report recomputes exactly what the run wrote.
"""

from __future__ import annotations

import csv
import io
import json
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from dizhu.referee.signing import parse_public_keys, replay_digest
from dizhu.tournament.config import TournamentConfig
from dizhu.tournament.ratings import rate
from dizhu.tournament.schedule import Game
from dizhu.tournament.stats import FAULTS, GameOutcome, pairwise, ranking, standings

__all__ = [
    "KEYS_FILE",
    "RESULTS_SCHEMA",
    "TOURNAMENT_SCHEMA",
    "clock_decisions",
    "export",
    "game_outcome",
    "interval_text",
    "load_outcomes",
    "results",
    "write_results",
]

TOURNAMENT_SCHEMA: Final = "dizhu.tournament/v1"
RESULTS_SCHEMA: Final = "dizhu.tournament.results/v1"
#: What orders the leaderboard (``results.json``'s ``ranked_by``): the duplicate differential.
RANKED_BY: Final = "differential"
_ROLES: Final = ("landlord", "farmer")
#: The referees' public keys, in the output folder.
KEYS_FILE: Final = "referee-keys.pem"


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, sort_keys=False) + "\n")


def tournament_json(config: TournamentConfig, schedule: Sequence[Game]) -> dict[str, Any]:
    return {
        "schema": TOURNAMENT_SCHEMA,
        "name": config.name,
        "fingerprint": config.fingerprint(),
        "variant": config.variant,
        "format": config.format,
        "seatings": config.seatings,
        "deal_sets": config.deal_sets,
        "seed": config.seed_bytes().hex(),
        "clock": {
            "decision_s": config.clock.decision_s,
            "first_decision_s": config.clock.first_decision_s,
            "time_bank_s": config.clock.time_bank_s,
            "timeout_policy": config.clock.timeout_policy,
        },
        "entrants": [{"name": entrant.name, "kind": entrant.kind} for entrant in config.entrants],
        "games": [
            {"game": g.id, "deal_set": g.deal_set, "lineup": g.lineup, "seating": list(g.seating), "seed": g.seed.hex()}
            for g in schedule
        ],
    }


def _keys_pem(records: Sequence[Mapping[str, Any]]) -> str:
    """Every public key the games' referees published, each once, in the order first seen."""
    keys: dict[str, str] = {}
    for record in records:
        if record.get("referee_keys"):
            for key in parse_public_keys(record["referee_keys"].encode()):
                keys.setdefault(key.key_id, key.pem)
    return "".join(keys.values())


def export(directory: Path, config: TournamentConfig, schedule: Sequence[Game], records: Mapping[int, bytes]) -> None:
    """Write the tournament and every recorded game (records as stored by the runners) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    _dump(directory / "tournament.json", tournament_json(config, schedule))
    decoded = {index: json.loads(raw) for index, raw in records.items()}
    keys = _keys_pem(list(decoded.values()))
    if keys:
        (directory / KEYS_FILE).write_text(keys)
    for index, record in sorted(decoded.items()):
        folder = directory / "games" / schedule[index].id
        folder.mkdir(parents=True, exist_ok=True)
        if record["replay"]:
            (folder / "replay.json").write_text(
                record["replay"] if record["replay"].endswith("\n") else record["replay"] + "\n"
            )
        seats = []
        for seat, entry in enumerate(record["seats"]):
            if entry["log"]:
                (folder / f"seat{seat}-{entry['entrant']}.stderr.txt").write_text(entry["log"])
            seats.append({"seat": seat, "entrant": entry["entrant"], "faults": entry["faults"]})
        meta = {key: record[key] for key in ("table_id", "attempt", "runner", "timed_out")}
        _dump(folder / "game.json", {"game": schedule[index].id, **meta, "seats": seats})


def clock_decisions(replay: Mapping[str, Any], players: int) -> list[tuple[int, int]]:
    """Per seat: the actions the referee's clock took for it, and 1 if it forfeited the round on time."""
    acted = [0] * players
    for deal in replay["deals"]:
        for action in deal["actions"]:
            acted[action["seat"]] += bool(action.get("timed_out"))
    forfeited_by = replay["result"].get("forfeited_by")  # seats never leave a tournament table: on time
    return [(acted[seat], int(seat == forfeited_by)) for seat in range(players)]


def game_outcome(
    entry: Mapping[str, Any], replay: Mapping[str, Any] | None, seats: Sequence[Mapping[str, Any]]
) -> GameOutcome:
    players = len(entry["seating"])
    if replay is None:
        outcome, landlord, changes = "abandoned", None, [0] * players
        timeouts = [0] * players
    else:
        result = replay["result"]
        outcome, landlord, changes = result["outcome"], result["landlord"], result["changes"]
        timeouts = [actions + forfeited for actions, forfeited in clock_decisions(replay, players)]
    faults = []
    for seat in range(players):
        counted = (
            {name: int(n) for name, n in seats[seat]["faults"].items() if name in FAULTS} if seat < len(seats) else {}
        )
        faults.append({**counted, "timeouts": timeouts[seat]})
    return GameOutcome(
        game=int(entry["game"].lstrip("g")),
        deal_set=entry["deal_set"],
        lineup=entry["lineup"],
        seating=tuple(entry["seating"]),
        outcome=outcome,
        landlord=landlord,
        changes=tuple(changes),
        faults=tuple(faults),
    )


def _digest(text: str) -> str | None:
    try:
        return replay_digest(text)
    except ValueError:  # not JSON, or no canonical form: no record of ours
        return None


def load_outcomes(directory: Path) -> tuple[dict[str, Any], list[tuple[GameOutcome, dict[str, Any]]]]:
    """The tournament description and every saved game's outcome (with its game.json), in schedule order."""
    try:
        meta = json.loads((directory / "tournament.json").read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{directory} is not a tournament folder: {error}") from error
    if meta.get("schema") != TOURNAMENT_SCHEMA:
        raise ValueError(f"{directory}/tournament.json: schema {meta.get('schema')!r}, expected {TOURNAMENT_SCHEMA!r}")
    outcomes = []
    for entry in meta["games"]:
        folder = directory / "games" / entry["game"]
        if not (folder / "game.json").exists():
            continue
        game = json.loads((folder / "game.json").read_text())
        replay_path = folder / "replay.json"
        text = replay_path.read_text() if replay_path.exists() else None
        replay = json.loads(text) if text is not None else None
        # What binds the standings to the signed records: each game's replay by its digest.
        game["replay_sha256"] = None if text is None else _digest(text)
        game["replay_key_id"] = ((replay or {}).get("signature") or {}).get("key_id")
        outcomes.append((game_outcome(entry, replay, game["seats"]), game))
    return meta, outcomes


def results(meta: Mapping[str, Any], outcomes: Sequence[GameOutcome]) -> dict[str, Any]:
    """``results.json``'s content."""
    names = [entrant["name"] for entrant in meta["entrants"]]
    table = standings(outcomes, names)
    ratings = rate(outcomes, names)
    pairs = pairwise(outcomes, names)
    leaderboard, places = ranking(table, pairs)
    for name in names:
        table[name] = {**places[name], **table[name], "rating": ratings.final[name]}
    return {
        "schema": RESULTS_SCHEMA,
        "tournament": {
            key: meta[key] for key in ("name", "fingerprint", "variant", "format", "seatings", "deal_sets", "seed")
        },
        "games": {
            "scheduled": len(meta["games"]),
            "played": len(outcomes),
            "complete": len(outcomes) == len(meta["games"]),
        },
        "ranked_by": RANKED_BY,
        "leaderboard": leaderboard,
        "entrants": {
            name: {"kind": entrant["kind"], **table[name]} for entrant in meta["entrants"] if (name := entrant["name"])
        },
        "pairs": pairs,
        "rating_history": ratings.history,
    }


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def viewer_link(viewer_url: str | None, game: Mapping[str, Any]) -> str:
    """The web table's replay viewer for the game's round (``dizhu serve --http-address``), or "".

    Tournament tables play one round; the link works while the referee keeps the table
    (``--finished-ttl``). The saved ``replay.json`` opens in the same viewer from a file.
    """
    if not viewer_url:
        return ""
    query = urllib.parse.urlencode({"replay": game["table_id"], "round": 1})
    return f"{viewer_url.rstrip('/')}/?{query}"


def games_csv(outcomes: Sequence[tuple[GameOutcome, dict[str, Any]]], viewer_url: str | None = None) -> str:
    players = max((len(o.seating) for o, _ in outcomes), default=3)
    header = ["game", "deal_set", "lineup", "table_id", "attempt", "outcome", "landlord_seat", "replay", "viewer"]
    header += [f"seat{s}_{what}" for s in range(players) for what in ("entrant", "points", "timeouts")]
    rows: list[list[Any]] = [header]
    for outcome, game in outcomes:
        row: list[Any] = [game["game"], outcome.deal_set, outcome.lineup, game["table_id"], game["attempt"]]
        row += [outcome.outcome, "" if outcome.landlord is None else outcome.landlord]
        row += [f"games/{game['game']}/replay.json", viewer_link(viewer_url, game)]
        for seat, name in enumerate(outcome.seating):
            row += [name, outcome.changes[seat], outcome.faults[seat]["timeouts"]]
        rows.append(row)
    return _csv(rows)


def _ci(interval: Mapping[str, Any]) -> list[Any]:
    return [interval["mean"], interval["low"], interval["high"]]


def standings_csv(result: Mapping[str, Any]) -> str:
    header = ["rank", "entrant", "kind", "mu", "sigma", "ordinal", "games"]
    header += ["win_rate", "win_rate_low", "win_rate_high", "points", "points_low", "points_high"]
    header += [
        "landlord_games",
        "landlord_win_rate",
        "landlord_points",
        "farmer_games",
        "farmer_win_rate",
        "farmer_points",
    ]
    header += ["differential", "differential_low", "differential_high", *FAULTS, "not_separable_from"]
    rows: list[list[Any]] = [header]
    for name in result["leaderboard"]:
        e = result["entrants"][name]
        r = e["rating"]
        row = [
            e["rank"],
            name,
            e["kind"],
            r["mu"],
            r["sigma"],
            r["ordinal"],
            e["games"],
            *_ci(e["win_rate"]),
            *_ci(e["points"]),
        ]
        for role in _ROLES:
            row += [e[role]["games"], e[role]["win_rate"]["mean"], e[role]["points"]["mean"]]
        row += [*_ci(e["differential"]), *(e["faults"][fault] for fault in FAULTS)]
        row.append(" ".join(e["not_separable_from"]))
        rows.append(row)
    return _csv(rows)


#: How the leaderboard is ordered, said wherever it is shown.
RANKING_NOTE: Final = (
    "Ranked by the duplicate differential (points per game above the others on the same deals); equal "
    "differentials share a rank. Entrants whose head-to-head interval includes zero are not separable: "
    "their order is not established. Ratings are a second view."
)


def interval_text(interval: Mapping[str, Any], *, percent: bool = False, missing: str = "n/a") -> str:
    """``+1.23 [+0.45, +2.01]`` (or a percentage), or ``missing`` below two observations."""
    if interval["n"] < 2:
        return missing
    if percent:
        return f"{100 * interval['mean']:.1f}% [{100 * interval['low']:.1f}, {100 * interval['high']:.1f}]"
    return f"{interval['mean']:+.2f} [{interval['low']:+.2f}, {interval['high']:+.2f}]"


def leaderboard_md(
    result: Mapping[str, Any],
    outcomes: Sequence[tuple[GameOutcome, dict[str, Any]]] = (),
    viewer_url: str | None = None,
) -> str:
    t = result["tournament"]
    games = result["games"]
    lines = [
        f"# Tournament {t['name']}",
        "",
        f"{t['variant']}, {t['format']} format ({t['seatings']} seatings), {games['played']} of "
        f"{games['scheduled']} games played{'' if games['complete'] else ' (incomplete)'}. "
        "Intervals are 95% confidence intervals; points are balance changes per game.",
        "",
        RANKING_NOTE,
        "",
        "| # | entrant | duplicate differential | not separable from | games | points/game | win rate "
        "| as landlord | as farmer | rating mu ± sigma | faults |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in result["leaderboard"]:
        e = result["entrants"][name]
        r = e["rating"]
        faults = ", ".join(f"{n} {fault}" for fault, n in e["faults"].items() if n) or "none"
        win_rate = interval_text(e["win_rate"], percent=True)
        unseparated = ", ".join(e["not_separable_from"]) or "-"
        landlord, farmer = (f"{e[role]['games']} games, {interval_text(e[role]['points'])}" for role in _ROLES)
        lines.append(
            f"| {e['rank']} | {name} | {interval_text(e['differential'])} | {unseparated} | {e['games']} "
            f"| {interval_text(e['points'])} | {win_rate} | {landlord} | {farmer} "
            f"| {r['mu']:.1f} ± {r['sigma']:.1f} | {faults} |"
        )
    lines += ["", "## Head to head (duplicate differential, points per game)", ""]
    lines += ["| A | B | A - B | significant | games needed |", "|---|---|---|---|---|"]
    for pair in result["pairs"]:
        needed = "-" if pair["games_needed"] is None else f"about {pair['games_needed']}"
        lines.append(
            f"| {pair['a']} | {pair['b']} | {interval_text(pair['differential'])} "
            f"| {'yes' if pair['significant'] else 'no'} | {needed} |"
        )
    lines += [
        "",
        "Ratings: openskill (Plackett-Luce), the landlord against the farmer team: a second view, which orders "
        "nothing. Games needed: how many games a difference of the size observed needs for its interval to "
        "exclude zero.",
    ]
    if outcomes:
        lines += [
            "",
            "## Games",
            "",
            "Each replay opens in the web table's replay viewer (`dizhu serve --http-address`)",
        ]
        lines[-1] += (
            ", from the file or, while the referee keeps the table, by its link." if viewer_url else " from its file."
        )
        lines += ["", "| game | seating | outcome | points | replay |", "|---|---|---|---|---|"]
        for outcome, game in outcomes:
            replay = f"[replay.json](games/{game['game']}/replay.json)"
            if link := viewer_link(viewer_url, game):
                replay += f" · [view]({link})"
            points = ", ".join(f"{change:+d}" for change in outcome.changes)
            lines.append(f"| {game['game']} | {', '.join(outcome.seating)} | {outcome.outcome} | {points} | {replay} |")
    return "\n".join(lines) + "\n"


def plot(result: Mapping[str, Any], path: Path) -> None:
    """Ratings (mu, with a band of one sigma) over the games rated, one line per entrant."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(8, 4.5), dpi=100)
    history = result["rating_history"]
    x = [point["games"] for point in history]
    for name in result["leaderboard"]:
        mu = [point["ratings"][name][0] for point in history]
        sigma = [point["ratings"][name][1] for point in history]
        axes.plot(x, mu, label=name)
        axes.fill_between(
            x,
            [m - s for m, s in zip(mu, sigma, strict=True)],
            [m + s for m, s in zip(mu, sigma, strict=True)],
            alpha=0.2,
        )
    axes.set_xlabel("games rated")
    axes.set_ylabel("rating mu (band: ± sigma)")
    axes.set_title(f"Tournament {result['tournament']['name']}: openskill ratings")
    axes.legend(loc="best")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    pyplot.close(figure)


def write_results(directory: Path, viewer_url: str | None = None) -> dict[str, Any]:
    """Compute the results from the saved games of ``directory`` and write every output file.

    ``viewer_url`` (the HTTP address of a referee serving browsers, e.g. ``http://host:8080``)
    adds links to its replay viewer beside each game's saved replay.
    """
    meta, loaded = load_outcomes(directory)
    result = results(meta, [outcome for outcome, _ in loaded])
    result["replays"] = {
        game["game"]: {"sha256": game["replay_sha256"], "key_id": game["replay_key_id"]} for _, game in loaded
    }
    result["referee_keys"] = KEYS_FILE if (directory / KEYS_FILE).exists() else None
    _dump(directory / "results.json", result)
    (directory / "games.csv").write_text(games_csv(loaded, viewer_url))
    (directory / "standings.csv").write_text(standings_csv(result))
    (directory / "leaderboard.md").write_text(leaderboard_md(result, loaded, viewer_url))
    plot(result, directory / "ratings.png")
    return result
