// The conformance kit's protocol cases (../../conformance/protocol/cases.json) run from Node.js
// against a live referee: the same cases and rules as `dizhu conformance protocol`, in a
// second language, through this client (docs/conformance.md).
//
//   node conformance.mjs --target HOST:PORT [--kit DIR] [--implementation NAME] [--profile NAME]
//                        [--only PREFIX] [--json]
//
// Exit status: 0 every case passed (or failed as NAME's known-failing list says), 1 otherwise,
// 2 bad arguments or an unreadable kit.

import { randomUUID } from "node:crypto";
import { readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { cardId, codeName, connect, errorDetails, grpc } from "./dizhu.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const DEFAULTS = [0, "", false, "0"];

class CaseFailure extends Error {}

/** `value` with "$name", "${name}" and "$fresh:name" replaced, as the Python runner does. */
function resolve(value, saved) {
  if (Array.isArray(value)) return value.map((item) => resolve(item, saved));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, saved)]));
  }
  if (typeof value !== "string") return value;
  if (value.startsWith("$fresh:")) {
    if (!(value in saved)) saved[value] = randomUUID().replaceAll("-", "");
    return saved[value];
  }
  if (value.startsWith("$") && !value.startsWith("${")) {
    if (!(value.slice(1) in saved)) throw new CaseFailure(`${value} was never saved by an earlier step`);
    return saved[value.slice(1)];
  }
  return value.replace(/\$\{([A-Za-z0-9_:.-]+)\}/g, (_, name) => String(resolve(`$${name}`, saved)));
}

/** An answer as proto3 JSON writes it: bytes in base64, empty fields left out. */
function asJson(value) {
  if (value instanceof Uint8Array) return value.length ? Buffer.from(value).toString("base64") : undefined;
  if (Array.isArray(value)) return value.length ? value.map(asJson) : undefined;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([key]) => key !== "payload") // the oneof's name, not a field
      .map(([key, item]) => [key, asJson(item)])
      .filter(([, item]) => item !== undefined);
    return Object.fromEntries(entries);
  }
  return value;
}

function lookup(data, path) {
  for (const part of path.match(/[^.[\]]+|\[\d+\]/g)) {
    if (data === undefined || data === null) return undefined;
    data = part.startsWith("[") ? data[Number(part.slice(1, -1))] : data[part];
  }
  return data ?? undefined;
}

function same(actual, expected) {
  if (actual === undefined) {
    return (
      expected === null ||
      DEFAULTS.includes(expected) ||
      (Array.isArray(expected) && !expected.length) ||
      (typeof expected === "string" && expected.endsWith("_UNSPECIFIED")) ||
      (typeof expected === "object" && expected !== null && !Object.keys(expected).length)
    );
  }
  if (typeof expected === "number" && typeof actual === "string") return Number(actual) === expected;
  return JSON.stringify(sortKeys(actual)) === JSON.stringify(sortKeys(expected));
}

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys(value[key])]),
    );
  }
  return value;
}

function checkAnswer(answer, checks, saved) {
  for (const check of checks) {
    const actual = lookup(answer, check.path);
    const shown = JSON.stringify(actual);
    if ("equals" in check && !same(actual, resolve(check.equals, saved))) {
      throw new CaseFailure(`${check.path}: expected ${JSON.stringify(resolve(check.equals, saved))}, got ${shown}`);
    }
    if ("not_equals" in check && same(actual, resolve(check.not_equals, saved))) {
      throw new CaseFailure(`${check.path}: expected anything but ${shown}`);
    }
    if ("length" in check && (actual ?? []).length !== check.length) {
      throw new CaseFailure(`${check.path}: expected ${check.length} items, got ${(actual ?? []).length}`);
    }
    if ("present" in check && (actual !== undefined) !== check.present) {
      throw new CaseFailure(`${check.path}: expected ${check.present ? "a value" : "nothing"}, got ${shown}`);
    }
    if ("card_ids" in check) {
      const got = (actual ?? []).map(cardId).sort((a, b) => a - b);
      const wanted = [...check.card_ids].sort((a, b) => a - b);
      if (JSON.stringify(got) !== JSON.stringify(wanted)) throw new CaseFailure(`${check.path}: expected the cards ${wanted}`);
    }
  }
}

function checkError(error, expect, saved) {
  const details = errorDetails(error);
  const code = codeName(error.code);
  if ((expect.code ?? "OK") !== code) {
    throw new CaseFailure(`expected ${expect.code ?? "OK"}, got ${code} ${details.reason}: ${error.details}`);
  }
  if ("reason" in expect && (details.reason !== expect.reason || details.domain !== "dizhu.v1")) {
    throw new CaseFailure(`expected reason ${expect.reason}, got ${details.reason} (domain ${details.domain})`);
  }
  const missing = (expect.metadata_keys ?? []).filter((key) => !(key in details.metadata));
  if (missing.length) throw new CaseFailure(`ErrorInfo metadata lacks ${missing}`);
  for (const [key, value] of Object.entries(resolve(expect.metadata ?? {}, saved))) {
    if (details.metadata[key] !== String(value)) {
      throw new CaseFailure(`metadata ${key}: expected ${value}, got ${details.metadata[key]}`);
    }
  }
  const fields = details.fieldViolations.map((violation) => violation.field);
  for (const field of expect.field_violations ?? []) {
    if (!fields.includes(field)) throw new CaseFailure(`BadRequest names ${fields}, not ${field}`);
  }
}

function metadataOf(step, saved) {
  const metadata = new grpc.Metadata();
  for (const [key, value] of step.metadata ?? []) metadata.set(key, String(resolve(value, saved)));
  if (step.token !== undefined && step.token !== null) metadata.set("authorization", `Bearer ${resolve(step.token, saved)}`);
  return metadata;
}

function unary(stub, method, request, metadata) {
  return new Promise((resolvePromise, reject) => {
    stub[method](request, metadata, { deadline: Date.now() + 10_000 }, (error, response) =>
      error ? reject(error) : resolvePromise(asJson(response) ?? {}),
    );
  });
}

function stream(stub, method, request, metadata, take) {
  return new Promise((resolvePromise, reject) => {
    const messages = [];
    const call = stub[method](request, metadata, { deadline: Date.now() + 10_000 });
    call.on("data", (message) => {
      messages.push(asJson(message) ?? {});
      if (messages.length === take) {
        call.cancel();
        resolvePromise({ messages });
      }
    });
    call.on("error", (error) => (error.code === grpc.status.CANCELLED ? null : reject(error)));
    call.on("end", () => resolvePromise({ messages }));
  });
}

/** Make a step's call; throws CaseFailure unless it answers as the step expects. */
async function runStep(clients, step, saved) {
  const [service, method] = step.call.split(".");
  const stub = service === "RulesService" ? clients.rules : clients.tables;
  const expect = step.expect ?? {};
  let answer;
  try {
    const request = resolve(step.request ?? {}, saved);
    answer =
      method === "WatchTable"
        ? await stream(stub, method, request, metadataOf(step, saved), step.take ?? 1)
        : await unary(stub, method, request, metadataOf(step, saved));
  } catch (error) {
    if (error instanceof CaseFailure) throw error;
    checkError(error, expect, saved);
    return;
  }
  if ((expect.code ?? "OK") !== "OK") throw new CaseFailure(`expected ${expect.code}, got OK`);
  checkAnswer(answer, expect.checks ?? [], saved);
  for (const [name, path] of Object.entries(step.save ?? {})) {
    const value = lookup(answer, path);
    if (value === undefined) throw new CaseFailure(`nothing at ${path} to save as ${name}`);
    saved[name] = value;
  }
}

/** A case's steps in order (a step with `repeat: N` up to N times, until it answers as expected). */
async function runCase(clients, testCase) {
  const saved = {};
  for (const [index, step] of testCase.steps.entries()) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await runStep(clients, step, saved);
        break;
      } catch (failure) {
        if (!(failure instanceof CaseFailure)) throw failure;
        if (attempt >= (step.repeat ?? 1)) throw new CaseFailure(`step ${index + 1} (${step.call}): ${failure.message}`);
      }
    }
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      target: { type: "string" },
      kit: { type: "string", default: process.env.DIZHU_CONFORMANCE_KIT ?? join(here, "..", "..", "conformance") },
      implementation: { type: "string", default: "dizhu-node" },
      only: { type: "string" },
      profile: { type: "string", default: "default" },
      json: { type: "boolean", default: false },
    },
  });
  if (!values.target) {
    console.error("conformance.mjs: --target HOST:PORT is required");
    return 2;
  }
  let cases, version;
  try {
    ({ cases } = JSON.parse(readFileSync(join(values.kit, "protocol", "cases.json"), "utf8")));
    version = readFileSync(join(values.kit, "VERSION"), "utf8").trim();
  } catch (error) {
    console.error(`conformance.mjs: cannot read the kit at ${values.kit}: ${error.message}`);
    return 2;
  }
  const listFile = join(values.kit, "known-failing", `${values.implementation}.json`);
  const known = new Set(existsSync(listFile) ? JSON.parse(readFileSync(listFile, "utf8")).cases : []);
  const clients = connect(values.target);
  const results = [];
  try {
    for (const testCase of cases) {
      if ((testCase.profile ?? "default") !== values.profile) continue;
      if (values.only && !testCase.id.startsWith(values.only)) continue;
      let failure = null;
      try {
        await runCase(clients, testCase);
      } catch (error) {
        failure = error instanceof CaseFailure ? error.message : `runner error: ${error.stack ?? error}`;
      }
      const listed = known.has(testCase.id);
      const status = failure === null ? (listed ? "unexpected_pass" : "passed") : listed ? "known_failing" : "failed";
      results.push({ case_id: testCase.id, group: testCase.area, status, detail: failure ?? "" });
    }
  } finally {
    clients.close();
  }
  const count = (status) => results.filter((result) => result.status === status).length;
  const ok = count("failed") === 0 && count("unexpected_pass") === 0;
  const statuses = ["passed", "failed", "known_failing", "unexpected_pass"];
  if (values.json) {
    const report = {
      suite: "protocol",
      implementation: values.implementation,
      kit_version: version,
      ok,
      totals: Object.fromEntries(statuses.map((status) => [status, count(status)])),
      cases: results,
    };
    console.log(JSON.stringify(report, null, 1));
  } else {
    console.log(`conformance.mjs protocol: ${values.implementation} against kit ${version}`);
    for (const result of results.filter((r) => r.status === "failed" || r.status === "unexpected_pass")) {
      console.log(`  ${result.status.toUpperCase()} ${result.case_id}: ${result.detail}`);
    }
    console.log(`  ${ok ? "OK" : "FAILED"}: ${statuses.map((status) => `${count(status)} ${status}`).join(", ")}`);
  }
  return ok ? 0 : 1;
}

process.exitCode = await main();
