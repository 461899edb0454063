// The first page: the open tables to join or watch (ListTables, a page at a time), start a
// table against bots, watch or join a table by id, open a replay.
import { Variant } from "./gen/dizhu/v1/cards_pb";
import { NextRound, Phase, TimeoutPolicy } from "./gen/dizhu/v1/table_pb";
import type { TableSummary } from "./gen/dizhu/v1/table_service_pb";
import { timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { auth, refusal, requestId, seatBots, tables, tokens, type Refusal } from "./api";
import { fill, h } from "./dom";
import { refusalParts } from "./refusals";

/** The open tables shown at first (more on request), and how often that first page is read again. */
const TABLES_PER_PAGE = 8;
const REFRESH_MS = 5_000;

function go(params: Record<string, string>): void {
  location.search = new URLSearchParams(params).toString();
}

function field(label: string, input: HTMLElement): HTMLElement {
  return h("label", {}, h("span", {}, label), input);
}

/**
 * What a listed table is doing, in words that tell apart the tables worth joining from the ones
 * nobody may finish: a round over that waits for every seat's Next round (Settle), a seat left
 * free after the first round, a new table waiting for players, a round being played.
 */
export function tableState(table: TableSummary): { key: string; text: string } {
  const limit = table.roundLimit ? ` of ${table.roundLimit}` : "";
  const free = table.freeSeats === 1 ? "1 free seat" : `${table.freeSeats} free seats`;
  switch (table.phase) {
    case Phase.ROUND_OVER:
      return { key: "round-over", text: `round ${Math.max(1, table.round - 1)}${limit} over, waiting for every seat's Next round (settle)` };
    case Phase.WAITING_FOR_PLAYERS:
      return table.round > 1
        ? { key: "left", text: `a player left after round ${table.round - 1}${limit}: waiting for someone to take the ${free}` }
        : { key: "new", text: `new, waiting for players (${free})` };
    case Phase.AUCTION:
      return { key: "playing", text: `round ${table.round}${limit}: bidding` };
    case Phase.PLAY:
      return { key: "playing", text: `round ${table.round}${limit}: playing` };
    default:
      return { key: "other", text: Phase[table.phase].toLowerCase().replaceAll("_", " ") };
  }
}

/** How long ago ``stamp`` was, in the largest whole unit ("just now" under a minute). */
export function ago(stamp: Timestamp | undefined, nowMs: number): string {
  if (!stamp) return "at an unknown time";
  const seconds = Math.max(0, Math.floor((nowMs - timestampMs(stamp)) / 1000));
  const units: [number, string][] = [[86400, "day"], [3600, "hour"], [60, "min"]];
  for (const [size, unit] of units) {
    const count = Math.floor(seconds / size);
    if (count >= 1) return `${count} ${unit}${count > 1 && unit !== "min" ? "s" : ""} ago`;
  }
  return "just now";
}

/** A listed table's age and when a player last changed it: an old, quiet table is likely abandoned. */
function tableAge(table: TableSummary, nowMs: number): string {
  return `created ${ago(table.createdAt, nowMs)}, last changed ${ago(table.lastActiveAt, nowMs)}`;
}

export function showLobby(root: HTMLElement, openReplayFile: (text: string) => void): void {
  const error = h("p", { class: "refusal", "data-testid": "refusal", role: "alert", hidden: true });
  const fail = (what: string | Refusal) => {
    fill(error, ...(typeof what === "string" ? [what] : refusalParts(what)));
    error.hidden = false;
  };
  const name = h("input", { "data-testid": "name", value: localStorage.getItem("dizhu.name") ?? "", placeholder: "guest", maxlength: 32 });
  const variant = h("select", { "data-testid": "variant" }, h("option", { value: "3" }, "3 players"), h("option", { value: "4" }, "4 players"));
  const rounds = h("input", { "data-testid": "rounds", type: "number", min: 1, max: 20, value: 3 });
  // The bundled bots, strongest first (docs/bots.md); the heuristic ones, quick to answer, are the default.
  const bots = h(
    "select",
    { "data-testid": "bots" },
    h("option", { value: "expert" }, "expert bots"),
    h("option", { value: "learned" }, "learned bots"),
    h("option", { value: "heuristic" }, "heuristic bots"),
    h("option", { value: "random" }, "random bots"),
  );
  bots.value = "heuristic";
  const clock = h("input", { "data-testid": "clock-seconds", type: "number", min: 0, max: 600, value: 30 });
  const apiKey = h("input", { "data-testid": "api-key", placeholder: "only if the referee requires one", "aria-label": "API key" });

  async function create(event: Event): Promise<void> {
    event.preventDefault();
    const players = Number(variant.value);
    const player = name.value.trim() || "guest";
    localStorage.setItem("dizhu.name", player);
    const seconds = Number(clock.value);
    try {
      const created = await tables.createTable(
        {
          requestId: requestId(),
          settings: {
            variant: players === 4 ? Variant.FOUR_PLAYER : Variant.THREE_PLAYER,
            roundLimit: Math.max(1, Number(rounds.value) || 1),
            nextRound: NextRound.WHEN_ALL_SETTLED,
            clock: seconds > 0 ? { decisionTime: { seconds: BigInt(seconds) }, timeoutPolicy: TimeoutPolicy.AUTO_PLAY } : undefined,
          },
        },
        { headers: apiKey.value ? { "x-api-key": apiKey.value } : {} },
      );
      tokens.setCreator(created.tableId, created.creatorToken);
      try {
        const joined = await tables.joinTable({ tableId: created.tableId, requestId: requestId(), playerName: player, seat: 0 });
        tokens.setSeat(created.tableId, joined.seatToken);
        await seatBots(created.tableId, Array(players - 1).fill(bots.value));
      } catch (err) {
        // Nobody will sit at a table made for this person: close it, so that no lobby lists it.
        await tables.closeTable({ tableId: created.tableId, requestId: requestId() }, auth(created.creatorToken)).catch(() => undefined);
        throw err;
      }
      go({ table: created.tableId });
    } catch (err) {
      // The bots API answers in words of its own; the referee's refusals carry a reason.
      fail(err instanceof Error && !(err.name === "ConnectError") ? err.message : refusal(err));
    }
  }

  const tableId = h("input", { "data-testid": "table-id-input", placeholder: "table id" });
  const joinName = h("input", { placeholder: "your name", maxlength: 32 });
  async function join(event: Event): Promise<void> {
    event.preventDefault();
    const id = tableId.value.trim();
    try {
      const joined = await tables.joinTable({ tableId: id, requestId: requestId(), playerName: joinName.value.trim() || "guest" }, auth());
      tokens.setSeat(id, joined.seatToken);
      go({ table: id });
    } catch (err) {
      fail(refusal(err));
    }
  }

  const openTables = h("ul", { class: "open-tables", "data-testid": "open-tables" });
  const more = h("button", { type: "button", "data-testid": "more-tables", hidden: true }, "More tables");
  let nextPage = "";
  /** Whether more than the first page is shown (or asked for): then the list is refreshed only when asked. */
  let expanded = false;
  /** The latest listing asked for: an answer to an earlier one (a refresh overtaken by More tables) is dropped. */
  let asked = 0;
  async function listTables(first: boolean): Promise<void> {
    const listing = ++asked;
    if (!first) expanded = true;
    try {
      const page = await tables.listTables({ pageToken: first ? "" : nextPage, pageSize: TABLES_PER_PAGE });
      if (listing !== asked) return;
      expanded = !first;
      if (first) fill(openTables);
      nextPage = page.nextPageToken;
      more.hidden = !nextPage;
      openTables.append(...page.tables.map(openTable));
      if (first && !page.tables.length) openTables.append(h("li", {}, "No open table yet: create one below."));
    } catch (err) {
      fail(refusal(err));
    }
  }
  function openTable(table: TableSummary): HTMLElement {
    const players = table.playerNames.filter(Boolean).join(", ") || "nobody yet";
    return h(
      "li",
      { "data-testid": "open-table", "data-table": table.tableId, "data-state": tableState(table).key },
      h("b", {}, `${table.variant === Variant.FOUR_PLAYER ? 4 : 3} players`),
      h("code", { "data-testid": "open-table-id", title: "the table's id" }, table.tableId),
      h("span", {}, players),
      h("span", { class: "state", "data-testid": "open-table-state" }, tableState(table).text),
      h("small", { class: "age", "data-testid": "open-table-age" }, tableAge(table, Date.now())),
      h("button", { type: "button", "data-testid": "watch-table", onclick: () => go({ table: table.tableId, spectate: "1" }) }, "Watch"),
      table.freeSeats
        ? h(
            "button",
            { type: "button", "data-testid": "join-table", onclick: () => ((tableId.value = table.tableId), joinName.focus()) },
            `Join (${table.freeSeats} free)`,
          )
        : null,
    );
  }
  more.addEventListener("click", () => void listTables(false));
  void listTables(true);
  // Tables created elsewhere show up on their own, while the lobby is looked at.
  setInterval(() => {
    if (!document.hidden && !expanded && document.contains(openTables)) void listTables(true);
  }, REFRESH_MS);

  const replayTable = h("input", { placeholder: "table id" });
  const replayRound = h("input", { type: "number", min: 1, value: 1 });
  const replayFile = h("input", { type: "file", accept: ".json,application/json", "data-testid": "replay-file" });
  replayFile.addEventListener("change", async () => {
    const file = replayFile.files?.[0];
    if (file) openReplayFile(await file.text());
  });

  fill(
    root,
    h(
      "div",
      { class: "lobby" },
      h("h1", {}, "dizhu ", h("small", {}, "the reference web table")),
      error,
      h(
        "form",
        { class: "card-box", onsubmit: (e: Event) => void create(e) },
        h("h2", {}, "Play against bots"),
        field("Your name", name),
        field("Table", variant),
        field("Rounds", rounds),
        field("Opponents", bots),
        field("Seconds per decision (0: no clock)", clock),
        h("details", {}, h("summary", {}, "API key"), apiKey),
        h("button", { "data-testid": "create" }, "Create the table and sit down"),
      ),
      h(
        "section",
        { class: "card-box", "aria-label": "open tables" },
        h("h2", {}, "Open tables"),
        openTables,
        h("div", { class: "actions" }, more, h("button", { type: "button", onclick: () => void listTables(true) }, "Refresh")),
      ),
      h(
        "form",
        { class: "card-box", onsubmit: (e: Event) => void join(e) },
        h("h2", {}, "Watch or join a table"),
        field("Table id", tableId),
        field("Name (to join)", joinName),
        h(
          "div",
          { class: "actions" },
          h("button", { type: "button", "data-testid": "watch", onclick: () => go({ table: tableId.value.trim(), spectate: "1" }) }, "Watch"),
          h("button", { "data-testid": "join" }, "Take a free seat"),
        ),
      ),
      h(
        "form",
        {
          class: "card-box",
          onsubmit: (e: Event) => (e.preventDefault(), go({ replay: replayTable.value.trim(), round: replayRound.value })),
        },
        h("h2", {}, "Replay a finished round"),
        field("Table id", replayTable),
        field("Round", replayRound),
        h("button", {}, "Open the replay"),
        field("…or a replay JSON file (dizhu replay)", replayFile),
      ),
    ),
  );
}
