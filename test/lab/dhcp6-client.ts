import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Lab } from './topology.js';

/**
 * dhclient's script: prints what it was handed, and on a lease puts the address on the interface
 * (on-link /64 as the lab's IPv6 subnets are; IA_NA hands out the address alone). Nothing else:
 * the stock dhclient-script would rewrite the machine's /etc/resolv.conf.
 */
const SCRIPT6 = `#!/bin/sh
echo "reason=$reason ip6=$new_ip6_address prefixlen=$new_ip6_prefixlen search=$new_dhcp6_domain_search dns=$new_dhcp6_name_servers"
case "$reason" in
  BOUND6|RENEW6|REBIND6|REBOOT6) ip -6 addr add "$new_ip6_address/64" dev "$interface" nodad ;;
esac
exit 0
`;
/** Gives up after 8 s without an answer (the default is 60). */
const CONFIG6 = 'timeout 8;\n';

export interface Dhcp6Lease {
  /** The script's variables when it bound (ip6, prefixlen, search, dns), or undefined: no lease. */
  bound: Record<string, string> | undefined;
  /** Everything the client printed, for failure messages. */
  out: string;
}

/**
 * Runs a real DHCPv6 client (ISC dhclient -6, stateful: it asks for an address, IA_NA) on eth0 of
 * lab VM `vm`, once: it solicits, requests what it was advertised, and on the reply the script
 * puts the address on eth0; without an answer it gives up after 8 s. The client it leaves in the
 * background once bound is killed by its pid. `dir` holds its script, config, lease and pid files
 * (a temp dir of the caller's, removed by it); its IPv6 global addresses are removed first.
 */
export async function runDhcp6Client(lab: Lab, vm: string, dir: string): Promise<Dhcp6Lease> {
  const file = (name: string) => join(dir, `${vm}-dhclient6.${name}`);
  await writeFile(file('sh'), SCRIPT6, { mode: 0o755 });
  await writeFile(file('conf'), CONFIG6);
  await rm(file('leases'), { force: true });
  await lab.exec(vm, ['ip', '-6', 'addr', 'flush', 'dev', 'eth0', 'scope', 'global']);
  // The client binds to its link-local address, which it cannot while duplicate address detection
  // still holds it tentative (a second or so after the link came up).
  for (let i = 0; i < 50; i++) {
    const tentative = await lab.exec(vm, [
      'ip',
      '-6',
      '-o',
      'addr',
      'show',
      'dev',
      'eth0',
      'scope',
      'link',
      'tentative',
    ]);
    if (tentative.trim() === '') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  let out: string;
  try {
    out = await lab.exec(vm, [
      'dhclient',
      ...['-6', '-1', '-v', '-cf', file('conf'), '-lf', file('leases'), '-pf', file('pid')],
      ...['-sf', file('sh'), 'eth0'],
    ]);
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    out = `${e.stdout ?? ''}${e.stderr ?? String(err)}`;
  } finally {
    const pid = Number((await readFile(file('pid'), 'utf8').catch(() => '')).trim());
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone already (it gave up).
      }
    }
    await rm(file('pid'), { force: true });
  }
  const line = out.split('\n').find((l) => l.startsWith('reason=BOUND6'));
  const bound = line
    ? Object.fromEntries([...line.matchAll(/(\w+)=(.*?)(?= \w+=|$)/g)].map((m) => [m[1]!, m[2]!]))
    : undefined;
  return { bound, out };
}
