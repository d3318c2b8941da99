import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Lab } from './topology.js';

/** udhcpc's hook: prints what it was handed, and on a lease configures eth0 with it. */
const HOOK = `#!/bin/sh
echo "event=$1 ip=$ip subnet=$subnet router=$router dns=$dns domain=$domain lease=$lease mtu=$mtu serverid=$serverid"
if [ "$1" = bound ]; then ip addr add "$ip/$subnet" dev "$interface"; fi
exit 0
`;

export interface DhcpLease {
  /** The hook's variables on `bound` (ip, subnet, router, dns, domain, lease, mtu, serverid), or undefined: no lease. */
  bound: Record<string, string> | undefined;
  /** Everything the client printed, for failure messages. */
  out: string;
}

/**
 * Runs a real DHCP client (busybox udhcpc) on eth0 of lab VM `vm`, its IPv4 address removed first:
 * 3 discovers 1 s apart, then it gives up. On a lease eth0 carries the address it was handed.
 * `dir` holds the client's hook script (a temp dir of the caller's, removed by it).
 */
export async function runDhcpClient(lab: Lab, vm: string, dir: string): Promise<DhcpLease> {
  const script = join(dir, 'udhcpc-hook.sh');
  await writeFile(script, HOOK, { mode: 0o755 });
  // IPv4 only: its IPv6 link-local address is what a DHCPv6 client asks from.
  await lab.exec(vm, ['ip', '-4', 'addr', 'flush', 'dev', 'eth0']);
  let out: string;
  try {
    // -f foreground, -q quit once bound, -n exit without a lease; -O mtu asks for option 26.
    out = await lab.exec(vm, [
      'busybox',
      'udhcpc',
      ...['-f', '-q', '-n', '-t', '3', '-T', '1', '-O', 'mtu', '-i', 'eth0', '-s', script],
    ]);
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? err);
  }
  const line = out.split('\n').find((l) => l.startsWith('event=bound'));
  // "dns=A B" is one variable holding several servers: split on the names, not on spaces.
  const bound = line
    ? Object.fromEntries([...line.matchAll(/(\w+)=(.*?)(?= \w+=|$)/g)].map((m) => [m[1]!, m[2]!]))
    : undefined;
  return { bound, out };
}
