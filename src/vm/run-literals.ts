// String literals that live for one block's run. C gives every string literal static storage,
// so a session keeps each block's literals for good (16 bytes of VM memory for a short one), as
// a pointer to one may be stored anywhere; but a literal written straight as an argument of
// printf or puts in a block's top-level statements is read during that call and never again
// (the entry runs once), and over 100,000 never-seen blocks those alone held 1.6 MB (issue 14).
// Such literals go to one region that each block overwrites.
import type { VmMemory } from "./memory.js";

/** Host functions that read their string arguments during the call and keep no pointer into
 * them (nor return one). */
export const READ_ONLY_CALLEES: ReadonlySet<string> = new Set([
  "printf",
  "puts",
  "sprintf",
  "snprintf",
]);

export class RunLiterals {
  private addr = 0;
  private size = 0;
  private used = 0;
  /** Whether the block being parsed may place literals here (see VmSession.run). */
  active = false;

  constructor(private readonly mem: VmMemory) {}

  /** Starts a block: its literals overwrite the previous block's. */
  startBlock(): void {
    this.used = 0;
    this.active = true;
  }

  /** The address of a copy of `bytes` for this run; 0 when VM memory is exhausted. A block that
   * outgrows the region moves on to a larger one (the old one keeps its literals for this run
   * and then lies unused: the sizes double, so that waste stays below the largest block's). */
  place(bytes: Uint8Array): number {
    if (this.used + bytes.length > this.size) {
      const size = Math.max(256, 2 * (this.size + bytes.length));
      const addr = this.mem.allocStatic(size, 8);
      if (addr === 0) return 0;
      this.addr = addr;
      this.size = size;
      this.used = 0;
    }
    const p = this.addr + this.used;
    this.mem.writeBytes(p, bytes);
    this.used += bytes.length;
    return p;
  }
}
