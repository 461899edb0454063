// The referee, as the page reaches it: gRPC-Web clients of the contract, tokens, refusals.
//
// Every call goes to the page's own origin (dizhu serve --http-address serves both), or to
// the referee named by ?api=<url> (that referee must allow the page's origin: --cors-origin).
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { RulesService } from "./gen/dizhu/v1/rules_service_pb";
import { TableService } from "./gen/dizhu/v1/table_service_pb";
import { ErrorInfoSchema } from "./gen/google/rpc/error_info_pb";
import serviceConfig from "../../clients/python/dizhu/client/retry_policy.json";

/** Where the referee's HTTP side is: ?api=<url>, else this page's origin. */
export function apiBase(): string {
  const asked = new URLSearchParams(location.search).get("api");
  return (asked ?? location.origin).replace(/\/+$/, "");
}

const transport = createGrpcWebTransport({ baseUrl: apiBase() });
export const tables: Client<typeof TableService> = createClient(TableService, transport);
export const rules: Client<typeof RulesService> = createClient(RulesService, transport);

/** The call options that authenticate with `token` (a seat or creator token), if any. */
export function auth(token?: string | null, signal?: AbortSignal): { headers: Record<string, string>; signal?: AbortSignal } {
  return { headers: token ? { authorization: `Bearer ${token}` } : {}, signal };
}

/** A fresh idempotency key for one decision (the referee answers a retried one once). */
export function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A refusal as the referee stated it: the gRPC code, the ErrorInfo reason, the message. */
export interface Refusal {
  code: string;
  reason: string;
  message: string;
  metadata: Record<string, string>;
}

/** What went wrong with a call, read from its error (any error, not only the referee's). */
export function refusal(error: unknown): Refusal {
  const err = ConnectError.from(error);
  const info = err.findDetails(ErrorInfoSchema)[0];
  return {
    code: Code[err.code] ?? String(err.code),
    reason: info?.reason ?? Code[err.code] ?? "UNKNOWN",
    message: err.rawMessage,
    metadata: info ? { ...info.metadata } : {},
  };
}

/** The codes every dizhu client sends a request again after: the one retry policy's (docs/api.md, "Retries"). */
const RETRYABLE_CODES: ReadonlySet<string> = new Set(serviceConfig.methodConfig[0].retryPolicy.retryableStatusCodes);

/** A Connect code by its gRPC name ("DEADLINE_EXCEEDED"; Connect spells CANCELLED with one L). */
function grpcName(code: Code): string {
  return (Code[code] ?? "").replace(/(?<=.)(?=[A-Z])/g, "_").toUpperCase().replace("CANCELED", "CANCELLED");
}

/**
 * Whether a failed call may succeed if tried again (the referee restarting, a lost connection):
 * the retry policy's codes, and UNKNOWN, which is how a browser's fetch reports a lost connection.
 */
export function retryable(error: unknown): boolean {
  const code = ConnectError.from(error).code;
  return RETRYABLE_CODES.has(grpcName(code)) || code === Code.Unknown;
}

/** Seat bundled bots at a table (they run on the server as ordinary clients of the referee). */
export async function seatBots(tableId: string, bots: string[]): Promise<number[]> {
  const response = await fetch(`${apiBase()}/api/bots`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ table_id: tableId, bots }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.reason ? `${body.reason}: ${body.error}` : body.error);
  return body.seats;
}

/** The tokens this browser holds, kept per table so that a reload resumes the same seat. */
export const tokens = {
  seat(tableId: string): string | null {
    return localStorage.getItem(`dizhu.seat.${tableId}`);
  },
  setSeat(tableId: string, token: string): void {
    localStorage.setItem(`dizhu.seat.${tableId}`, token);
  },
  forgetSeat(tableId: string): void {
    localStorage.removeItem(`dizhu.seat.${tableId}`);
  },
  creator(tableId: string): string | null {
    return localStorage.getItem(`dizhu.creator.${tableId}`);
  },
  setCreator(tableId: string, token: string): void {
    localStorage.setItem(`dizhu.creator.${tableId}`, token);
  },
};

/**
 * The names this tab saw at each seat of a table, kept for the tab's life (reloads too): a
 * free seat's balance still belongs to the player who left it, whom the view no longer names.
 */
export const seatNames = {
  key(tableId: string, seat: number): string {
    return `dizhu.name.${tableId}.${seat}`;
  },
  remember(tableId: string, seat: number, name: string): void {
    if (name) sessionStorage.setItem(this.key(tableId, seat), name);
  },
  seen(tableId: string, seat: number): string | null {
    return sessionStorage.getItem(this.key(tableId, seat));
  },
};
