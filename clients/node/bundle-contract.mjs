#!/usr/bin/env node
// Copies what the client reads at run time from outside this folder into ./contract, so that
// the package `npm pack` makes works anywhere (the way the Python SDK's wheel carries them):
// the contract's .proto files (../../proto/dizhu/v1) and the retry policy every dizhu client
// follows (../python/dizhu/client/retry_policy.json). `npm pack` runs it first (prepack) and
// removes the copy afterwards (postpack): in the repository the client reads the originals.
//
//   node bundle-contract.mjs           copy
//   node bundle-contract.mjs --remove  remove the copy

import { cpSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const bundle = join(here, "contract");

rmSync(bundle, { recursive: true, force: true });
if (!process.argv.includes("--remove")) {
  mkdirSync(bundle);
  cpSync(join(here, "..", "..", "proto", "dizhu"), join(bundle, "dizhu"), { recursive: true });
  cpSync(join(here, "..", "python", "dizhu", "client", "retry_policy.json"), join(bundle, "retry_policy.json"));
}
