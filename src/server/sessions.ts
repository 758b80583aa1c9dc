// VM sessions that outlive one request (`ruffian.session`): functions, globals and memory[]
// persist across the requests of a conversation. Sessions expire when idle, and their number is
// capped (the least recently used idle one makes room).
import type { Engine } from "../engine/types.js";
import { createLiveVm, type LiveVm } from "../decode/sequence.js";
import type { VmProfileName } from "../vm/limits.js";
import { ApiError } from "./errors.js";

interface Entry {
  live: LiveVm;
  lastUsed: number;
  users: number;
}

export interface SessionOptions {
  /** Most live sessions (default 64). */
  max?: number;
  /** Idle time after which a session is dropped (default 10 minutes). */
  idleMs?: number;
}

export class SessionStore {
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;
  private readonly idleMs: number;

  constructor(
    private readonly engine: Engine,
    options: SessionOptions = {},
  ) {
    this.max = options.max ?? 64;
    this.idleMs = options.idleMs ?? 10 * 60_000;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The session named `id`, made on first use with `profile`; release() it when done. */
  acquire(id: string, profile: VmProfileName): LiveVm {
    const now = Date.now();
    this.expire(now);
    let entry = this.entries.get(id);
    if (!entry) {
      if (this.entries.size >= this.max) this.evictOne();
      entry = { live: createLiveVm(this.engine, 0, profile), lastUsed: now, users: 0 };
      this.entries.set(id, entry);
    }
    entry.users++;
    entry.lastUsed = now;
    return entry.live;
  }

  release(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.users = Math.max(0, entry.users - 1);
    entry.lastUsed = Date.now();
  }

  private expire(now: number): void {
    for (const [id, e] of this.entries)
      if (e.users === 0 && now - e.lastUsed > this.idleMs) this.entries.delete(id);
  }

  private evictOne(): void {
    let oldest: [string, Entry] | undefined;
    for (const kv of this.entries)
      if (kv[1].users === 0 && (!oldest || kv[1].lastUsed < oldest[1].lastUsed)) oldest = kv;
    if (!oldest)
      throw new ApiError(
        503,
        `all ${this.max} VM sessions are in use; retry later`,
        "server_overloaded",
        "ruffian.session",
        "sessions_full",
        { "retry-after": "1" },
      );
    this.entries.delete(oldest[0]);
  }
}
