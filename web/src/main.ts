// The reference web table of the dizhu referee. One page, three views chosen by the URL:
//   /?table=<id>[&spectate=1]     a table: the seat this browser holds there, or a spectator's view
//   /?replay=<id>&round=<n>       a finished round's replay, from the referee
//   /?replay_url=<url>            a replay JSON (dizhu.replay/v1) from a URL
//   /                             the lobby: play against bots, watch, join, open a replay
// ?api=<url> points the page at a referee other than the one serving it (which must allow
// this page's origin with --cors-origin).
import { showLobby } from "./lobby";
import { badRound, isRoundNumber, ReplayPage } from "./replay";
import { TablePage } from "./table";

const root = document.getElementById("app")!;
const params = new URLSearchParams(location.search);

function replayFile(text: string): void {
  new ReplayPage(root).open(text);
}

if (params.get("table")) {
  void new TablePage(root, params.get("table")!, params.get("spectate") === "1").start();
} else if (params.get("replay")) {
  const round = params.get("round") ?? "1";
  // Rounds are numbered 1, 2, ... (a uint32): anything else never reaches the referee.
  if (isRoundNumber(round)) void new ReplayPage(root).fromReferee(params.get("replay")!, Number(round));
  else badRound(root, params.get("replay")!, round);
} else if (params.get("replay_url")) {
  void new ReplayPage(root).fromUrl(params.get("replay_url")!);
} else {
  showLobby(root, replayFile);
}
