// The dizhu.v1 contract for Node.js: the .proto files of ../../proto loaded at run time
// (no generated code), stubs of TableService and RulesService, and the plumbing every
// client needs: bearer tokens, request ids, retries of the same request, error reasons
// (the google.rpc details of every error, decoded by errorDetails). See docs/api.md.

import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import grpc from "@grpc/grpc-js";
import protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

export { grpc };

const here = dirname(fileURLToPath(import.meta.url));

/**
 * What the package carries (./contract, copied by bundle-contract.mjs when `npm pack` makes it),
 * else the repository's original: `inRepository` is the path from this folder.
 */
const bundled = (inPackage, ...inRepository) =>
  existsSync(join(here, "contract", inPackage)) ? join(here, "contract", inPackage) : join(here, ...inRepository);

/** Where the contract lives: $DIZHU_PROTO_DIR, else the package's copy, else the repository's proto/ folder. */
export const PROTO_DIR = process.env.DIZHU_PROTO_DIR ?? dirname(bundled("dizhu", "..", "..", "proto", "dizhu"));

const definition = protoLoader.loadSync(
  ["dizhu/v1/table_service.proto", "dizhu/v1/rules_service.proto"],
  {
    includeDirs: [PROTO_DIR],
    keepCase: true, // field names as in the .proto files: table_id, your_hand, ...
    longs: String, // uint64 / int64 as decimal strings (versions, sequences, balances)
    enums: String, // enum values by name: "PHASE_PLAY", "VARIANT_THREE_PLAYER", ...
    defaults: false, // unset fields stay undefined, so `optional` fields keep their presence
    arrays: true, // repeated fields always arrays, even when empty
    oneofs: true, // TableEvent.payload names the payload set
  },
);
const dizhu = grpc.loadPackageDefinition(definition).dizhu.v1;

/**
 * Where google/rpc/status.proto and google/rpc/error_details.proto live (the error details
 * of every dizhu.v1 error are google.rpc messages, not part of the contract's files):
 * $GOOGLE_PROTO_DIR, else the google-proto-files package (npm). Python's
 * googleapis-common-protos ships the same two files (its site-packages is such a folder).
 */
export const GOOGLE_PROTO_DIR =
  process.env.GOOGLE_PROTO_DIR ?? dirname(createRequire(import.meta.url).resolve("google-proto-files/package.json"));

let rpcTypes = null;
function rpc() {
  if (rpcTypes === null) {
    const root = new protobuf.Root();
    root.resolvePath = (_, target) => join(GOOGLE_PROTO_DIR, target);
    root.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"], { keepCase: true });
    rpcTypes = Object.fromEntries(
      ["Status", "ErrorInfo", "BadRequest", "RetryInfo"].map((name) => [name, root.lookupType(`google.rpc.${name}`)]),
    );
  }
  return rpcTypes;
}

/**
 * The machine-readable details of a failed call (docs/api.md, "Errors"): the status code
 * and, from the google.rpc.Status in the `grpc-status-details-bin` trailer, the ErrorInfo's
 * reason, domain and metadata, the BadRequest's field violations and the RetryInfo's delay
 * (0 without one). An error without details (a transport failure) gets its code's name as
 * reason, like the Python SDK does.
 *   { code, reason, domain, metadata: { table_id, ... }, fieldViolations: [{ field, description }], retryDelayMs }
 */
export function errorDetails(error) {
  const details = {
    code: error.code,
    reason: codeName(error.code),
    domain: "",
    metadata: {},
    fieldViolations: [],
    retryDelayMs: 0,
  };
  const trailer = error.metadata?.get?.("grpc-status-details-bin")?.[0];
  if (!trailer) return details;
  const { Status, ErrorInfo, BadRequest, RetryInfo } = rpc();
  for (const any of Status.decode(trailer).details) {
    const type = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
    if (type === "google.rpc.ErrorInfo") {
      const info = ErrorInfo.decode(any.value);
      Object.assign(details, { reason: info.reason, domain: info.domain, metadata: { ...info.metadata } });
    } else if (type === "google.rpc.BadRequest") {
      details.fieldViolations = BadRequest.decode(any.value).field_violations.map(({ field, description }) => ({
        field,
        description,
      }));
    } else if (type === "google.rpc.RetryInfo") {
      const delay = RetryInfo.decode(any.value).retry_delay ?? {};
      details.retryDelayMs = Number(delay.seconds ?? 0) * 1000 + Math.ceil(Number(delay.nanos ?? 0) / 1e6);
    }
  }
  return details;
}

/** Channel options: after a lost connection try again within 0.2 s, then at most every 2 s. */
export const CHANNEL_OPTIONS = {
  "grpc.initial_reconnect_backoff_ms": 200,
  "grpc.max_reconnect_backoff_ms": 2000,
};

/**
 * The stubs of one referee, sharing one channel. `credentials`: how to reach it, plaintext by
 * default; for a referee serving TLS (`dizhu serve --tls-cert`), `grpc.credentials.createSsl(ca)`
 * with its authority's certificate (PEM), or `createSsl()` for the system's authorities.
 */
export function connect(target, { credentials = grpc.credentials.createInsecure() } = {}) {
  const tables = new dizhu.TableService(target, credentials, CHANNEL_OPTIONS);
  const rules = new dizhu.RulesService(target, credentials, {
    ...CHANNEL_OPTIONS,
    channelOverride: tables.getChannel(),
  });
  return { tables, rules, close: () => tables.close() };
}

/** A fresh idempotency key. */
export const newRequestId = () => randomUUID().replaceAll("-", "");

/** Call metadata carrying `token` (if any) as `authorization: Bearer <token>`. */
export function bearer(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set("authorization", `Bearer ${token}`);
  return metadata;
}

/**
 * The one retry policy of every dizhu client (docs/api.md, "Retries"): a gRPC service config,
 * $DIZHU_RETRY_POLICY, else the package's copy, else the file the Python SDK ships
 * (clients/python/dizhu/client/retry_policy.json).
 */
export const SERVICE_CONFIG = JSON.parse(
  readFileSync(
    process.env.DIZHU_RETRY_POLICY ??
      bundled("retry_policy.json", "..", "python", "dizhu", "client", "retry_policy.json"),
    "utf8",
  ),
);
const methodConfig = SERVICE_CONFIG.methodConfig[0];
const retryPolicy = methodConfig.retryPolicy;
const millis = (duration) => Math.round(Number(duration.replace(/s$/, "")) * 1000);

/** Status codes after which the same request may be sent again: the service config's retryableStatusCodes. */
export const RETRYABLE = new Set(retryPolicy.retryableStatusCodes.map((name) => grpc.status[name]));

/** The contract's descriptors as protobufjs reads them, options included (errors.proto, cards.proto). */
const CONTRACT = (() => {
  const root = new protobuf.Root();
  const protobufjs = dirname(createRequire(import.meta.url).resolve("protobufjs/package.json"));
  root.resolvePath = (_, target) => join(target.startsWith("google/protobuf/") ? protobufjs : PROTO_DIR, target);
  root.loadSync(["dizhu/v1/errors.proto", "dizhu/v1/cards.proto"], { keepCase: true });
  return root;
})();

const RANK = CONTRACT.lookupEnum("dizhu.v1.Rank").values;
const SUIT = CONTRACT.lookupEnum("dizhu.v1.Suit").values;

/**
 * The contract's card id (docs/api.md, "Card id") of a card whose enums are value names (as the
 * stubs and proto3 JSON give them): 54*copy + 4*(rank-1) + (suit-1), jokers 54*copy + 52 / 53.
 */
export function cardId(card) {
  const rank = RANK[card.rank ?? "RANK_UNSPECIFIED"];
  const copy = Number(card.copy ?? 0);
  if (rank >= RANK.RANK_BLACK_JOKER) return 54 * copy + 52 + rank - RANK.RANK_BLACK_JOKER;
  return 54 * copy + 4 * (rank - 1) + SUIT[card.suit ?? "SUIT_UNSPECIFIED"] - 1;
}

/**
 * Each ErrorReason's facts as errors.proto states them (its `facts` option), read from the
 * contract: `reason -> { code, category, retry_info }` (protobufjs keeps one value of a
 * repeated option, so the metadata keys are left to docs/api.md).
 */
export const ERROR_FACTS = (() => {
  const reasons = CONTRACT.lookupEnum("dizhu.v1.ErrorReason");
  const facts = {};
  for (const [name, options] of Object.entries(reasons.valuesOptions ?? {})) {
    facts[name.replace(/^ERROR_REASON_/, "")] = {
      code: options["(facts).code"],
      category: options["(facts).category"],
      retry_info: options["(facts).retry_info"] ?? false,
    };
  }
  return facts;
})();

/** Reasons meaning the table moved on (the turn, the phase, the version): read it again, decide again (category MOVED_ON). */
export const MOVED_ON_REASONS = new Set(
  Object.keys(ERROR_FACTS).filter((reason) => ERROR_FACTS[reason].category === "ERROR_CATEGORY_MOVED_ON"),
);

/** Reasons whose request may be sent again as it is, after the referee's RetryInfo delay (category RETRYABLE). */
export const RETRYABLE_REASONS = new Set(
  Object.keys(ERROR_FACTS).filter((reason) => ERROR_FACTS[reason].category === "ERROR_CATEGORY_RETRYABLE"),
);

/**
 * How long a bot sends a failed call again, and reopens a lost stream, before it gives up: long
 * enough to ride out a referee's restart (a minute is the horizon of every example bot). Pass it
 * to `call` as `{ attempts: Infinity, horizonMs: RETRY_HORIZON_MS }`.
 */
export const RETRY_HORIZON_MS = 90_000;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long to wait before sending `error`'s request again (ms), or null when it must not be sent again. */
function retryWait(error, backoffMs, maxDelayMs) {
  if (RETRYABLE.has(error.code)) return backoffMs;
  const { reason, retryDelayMs } = errorDetails(error);
  if (!RETRYABLE_REASONS.has(reason) || retryDelayMs > maxDelayMs) return null;
  return Math.max(backoffMs, retryDelayMs);
}

/**
 * Calls `stub[method](request)` with `token`, retrying the very same request (same
 * request_id) on the service config's retryable codes (UNAVAILABLE, DEADLINE_EXCEEDED,
 * CANCELLED) with its exponential backoff, and on the reasons of the RETRYABLE category
 * (RATE_LIMITED, STORE_FULL) after the delay the referee asks for (its RetryInfo; not when
 * longer than `maxDelayMs`, the config's maxBackoff): the referee answers a
 * repeated request id with its first answer, so nothing applies twice. It gives up after
 * `attempts` attempts or once `horizonMs` have passed since the first (if given), whichever
 * comes first. `onRetry(error)` is called before each retry. Other errors are thrown at once,
 * with `.code` and `.details`.
 */
export async function call(
  stub,
  method,
  request,
  token,
  {
    attempts = retryPolicy.maxAttempts,
    timeoutMs = millis(methodConfig.timeout),
    maxDelayMs = millis(retryPolicy.maxBackoff),
    horizonMs = Infinity,
    onRetry = () => {},
  } = {},
) {
  let delay = millis(retryPolicy.initialBackoff);
  const giveUp = Date.now() + horizonMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await new Promise((resolve, reject) => {
        stub[method](request, bearer(token), { deadline: Date.now() + timeoutMs }, (error, response) =>
          error ? reject(error) : resolve(response),
        );
      });
    } catch (error) {
      const more = attempt < attempts && Date.now() < giveUp;
      const wait = more ? retryWait(error, delay * (0.5 + Math.random() / 2), maxDelayMs) : null;
      if (wait === null) throw error;
      onRetry(error);
      await sleep(wait);
      delay = Math.min(delay * retryPolicy.backoffMultiplier, maxDelayMs);
    }
  }
}

/** The name of a status code, for messages ("FAILED_PRECONDITION"). */
export const codeName = (code) => Object.keys(grpc.status).find((name) => grpc.status[name] === code) ?? String(code);

/** Standings as plain JSON: every field present, balances as numbers. */
export const plainStandings = (standings) =>
  standings.map((standing) => ({
    place: standing.place ?? 0,
    seat: standing.seat ?? 0,
    player_name: standing.player_name ?? "",
    balance: Number(standing.balance ?? 0),
  }));
