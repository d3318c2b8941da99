import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hypervisor } from '../lab/hypervisor.js';

/**
 * What OVS itself saw while a test's traffic was lost: the coverage counters that moved (drops,
 * revalidations, upcall failures, connection churn) and what ovs-vswitchd logged, per
 * hypervisor, from a snapshot taken before the fault. A round that lost packets prints these, so
 * a rare loss in CI explains itself instead of needing a rerun to reproduce.
 */
export interface OvsDropWatch {
  /** One line per hypervisor with what moved, then its log lines since the snapshot. */
  notes(): Promise<string[]>;
}

/** Counters worth naming when packets went missing (names as `ovs-appctl coverage/show` prints them). */
const TELLING = /drop|fail|error|rev_|upcall|rconn|overflow|lost|neigh|route/;

/** `name ... total: N` lines of `coverage/show`, by name. */
export function coverageTotals(text: string): Map<string, number> {
  const totals = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s.*total: (\d+)\s*$/.exec(line);
    if (m) totals.set(m[1] as string, Number(m[2]));
  }
  return totals;
}

/** The telling counters that grew between two readings, as `name +delta`. */
export function grownCounters(before: Map<string, number>, after: Map<string, number>): string[] {
  const grown: string[] = [];
  for (const [name, total] of after) {
    const delta = total - (before.get(name) ?? 0);
    if (delta > 0 && TELLING.test(name)) grown.push(`${name} +${delta}`);
  }
  return grown.sort();
}

/** ovs-vswitchd's log lines stamped at or after `sinceIso` (OVS writes ISO UTC stamps), memory reports left out. */
export function logLinesSince(log: string, sinceIso: string, max = 20): string[] {
  const lines = log
    .split('\n')
    .filter((l) => /^\d{4}-/.test(l) && l.slice(0, 23) >= sinceIso.slice(0, 23) && !l.includes('|memory|'));
  return lines.length > max ? [...lines.slice(0, max), `... ${lines.length - max} more`] : lines;
}

/** The rows of `ovs-appctl tnl/neigh/show` (its two header lines dropped), one space between columns. */
function neighbourRows(text: string): string[] {
  return text
    .trim()
    .split('\n')
    .slice(2)
    .map((l) => l.replace(/\s+/g, ' '));
}

/** What OVS saw, as the tail of a "packets lost" assertion message ('' when nothing was collected). */
export function ovsSawText(ovs: readonly string[] | undefined): string {
  return ovs?.length ? `; what OVS saw meanwhile:\n${ovs.join('\n')}\n` : '';
}

export async function watchOvsDrops(hypervisors: readonly Hypervisor[]): Promise<OvsDropWatch> {
  const sinceIso = new Date().toISOString();
  const read = (hv: Hypervisor) =>
    hv
      .appctl('coverage/show')
      .then(coverageTotals)
      .catch(() => new Map<string, number>());
  const before = await Promise.all(hypervisors.map(read));
  return {
    async notes() {
      const notes: string[] = [];
      for (const [i, hv] of hypervisors.entries()) {
        const grown = grownCounters(before[i] ?? new Map(), await read(hv));
        const log = await readFile(join(hv.dir, 'vswitchd.log'), 'utf8').catch(() => '');
        notes.push(`${hv.name}: counters ${grown.join(', ') || 'none of note'}`);
        // The userspace tunnel's own ARP cache: a missing next hop drops tunnelled packets.
        const neigh = await hv.appctl('tnl/neigh/show').catch((err: Error) => err.message);
        notes.push(`${hv.name} tunnel neighbours: ${neighbourRows(neigh).join(' | ') || 'none'}`);
        for (const line of logLinesSince(log, sinceIso)) notes.push(`${hv.name} log: ${line}`);
      }
      return notes;
    },
  };
}
