// The deal's fairness as a player checks it: SHA-256 of the revealed seed against the
// commitment published before the auction (docs/rules.md §8). Pure JavaScript SHA-256, so
// that it also works where the browser keeps crypto.subtle from plain-HTTP pages.
import { sha256 } from "@noble/hashes/sha2.js";

export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Whether sha256(seed) is the commitment. */
export function seedMatches(seed: Uint8Array, commitment: Uint8Array): boolean {
  return seed.length > 0 && hex(sha256(seed)) === hex(commitment);
}

/** The commitments this page saw before each deal's auction, kept for the tab's life (reloads too). */
export const commitments = {
  key(tableId: string, round: number, deal: number): string {
    return `dizhu.commitment.${tableId}.${round}.${deal}`;
  },
  remember(tableId: string, round: number, deal: number, commitment: Uint8Array): void {
    if (commitment.length) sessionStorage.setItem(this.key(tableId, round, deal), hex(commitment));
  },
  seen(tableId: string, round: number, deal: number): Uint8Array | null {
    const text = sessionStorage.getItem(this.key(tableId, round, deal));
    return text ? fromHex(text) : null;
  },
};
