import type { Hypervisor } from '../lab/hypervisor.js';
import type { Lab } from '../lab/topology.js';

/** What the flood tests read: group packet counters, and ARP as tcpdump prints it. */
export interface GroupStats {
  packets: number;
  /** packet_count of each bucket, in bucket order. */
  buckets: number[];
}

/** packet_count of a group of br-int and of each of its buckets (`dump-group-stats`). */
export async function groupStats(hv: Hypervisor, id: number): Promise<GroupStats> {
  const out = await hv.ofctl('dump-group-stats', hv.mgmt('br-int'), `group_id=${id}`);
  const line = out.split('\n').find((l) => l.includes(`group_id=${id},`));
  if (!line) throw new Error(`${hv.name}: no stats for group ${id} in: ${out}`);
  const packets = Number(/,packet_count=(\d+)/.exec(line)?.[1]);
  const buckets = [...line.matchAll(/bucket\d+:packet_count=(\d+)/g)].map((m) => Number(m[1]));
  return { packets, buckets };
}

/**
 * `rounds` fresh ARP resolutions from a VM: flush its neighbour cache, ping once, again. Each round
 * makes the kernel broadcast one request. Resolves to the number of pings answered.
 */
export async function arpRounds(lab: Lab, vm: string, ip: string, rounds: number): Promise<number> {
  let received = 0;
  for (let i = 0; i < rounds; i++) {
    await lab.exec(vm, ['ip', 'neigh', 'flush', 'all']);
    received += (await lab.ping(vm, ip, { count: 1, timeoutS: 2 })).received;
  }
  return received;
}

/** tcpdump lines of ARP requests for `ip`. */
export const whoHas = (lines: string[], ip: string): string[] =>
  lines.filter((l) => l.includes(`Request who-has ${ip} tell`));

/**
 * Group stats once they stop moving: the datapath credits packets to groups a little after the
 * fact, so a baseline read while earlier traffic is still being credited would be off.
 */
export async function settledGroupStats(hv: Hypervisor, id: number, timeoutMs = 10_000): Promise<GroupStats> {
  const deadline = Date.now() + timeoutMs;
  let last = await groupStats(hv, id);
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const now = await groupStats(hv, id);
    if (now.packets === last.packets) return now;
    if (Date.now() > deadline)
      throw new Error(`${hv.name}: group ${id} counters still moving after ${timeoutMs} ms`);
    last = now;
  }
}
