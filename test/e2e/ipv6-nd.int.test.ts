import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieFor } from '../../controller/pipeline/cookies.js';
import { expectConverged } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * IPv6 neighbour discovery on a real lab: VMs with IPv6 addresses on two hypervisors ping each
 * other over the tunnel; the switch of the asking VM answers its neighbour solicitations (the
 * answer comes even when the target VM no longer holds the address, so it is weft's, not the
 * VM's), and port security keeps a VM from claiming another's address with an unsolicited
 * advertisement (which the same VM does get through with port security off: the test can fail).
 */
let e: E2e;
const VNI = 930;
const A = { name: 'a6', hypervisor: 'hv1', mac: '02:00:00:00:09:0a', ip: '10.0.0.41/24' };
const B = { name: 'b6', hypervisor: 'hv2', mac: '02:00:00:00:09:0b', ip: '10.0.0.42/24' };
const C = { name: 'c6', hypervisor: 'hv2', mac: '02:00:00:00:09:0c', ip: '10.0.0.43/24' };
const V6 = { a6: 'fd00:93::a', b6: 'fd00:93::b', c6: 'fd00:93::c' } as const;

const sh = (vm: string, cmd: string) => e.lab.exec(vm, cmd);
/** The neighbour entry of `ip` in `vm`'s cache: `lladdr MAC STATE`, or '' when there is none. */
const neighbour = async (vm: string, ip: string) =>
  (await sh(vm, `ip -6 neigh show ${ip} dev eth0`)).trim().replace(/^\S+ /, '');

async function putEndpoint(vm: typeof A, portSecurity = true): Promise<void> {
  await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
    networkId: 'n1',
    mac: vm.mac,
    ips: [vm.ip.split('/')[0]!, V6[vm.name as keyof typeof V6]],
    ifaceId: vm.name,
    portSecurity,
  });
}

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [A, B, C]);
  await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', { subnets: ['10.0.0.0/24', 'fd00:93::/64'] });
  for (const vm of [A, B, C]) {
    await putEndpoint(vm);
    await sh(vm.name, `ip -6 addr add ${V6[vm.name as keyof typeof V6]}/64 dev eth0 nodad`);
  }
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('IPv6 neighbour discovery', () => {
  it("carries IPv6 between VMs on two hypervisors, each solicitation answered by the asking VM's switch", async () => {
    await expect
      .poll(async () => (await e.lab.ping('a6', V6.b6, { count: 1, timeoutS: 1 })).received, {
        timeout: 20_000,
      })
      .toBe(1);
    expect((await e.lab.ping('a6', V6.b6, { count: 5, intervalMs: 100 })).received).toBe(5);
    expect((await e.lab.ping('b6', V6.a6, { count: 3, intervalMs: 100 })).received).toBe(3);
    expect(await neighbour('a6', V6.b6)).toMatch(new RegExp(`^lladdr ${B.mac} `));
    // The answer flow for b6's address on hv1 (a6's switch) counted the solicitation it answered.
    const cookie = `0x${cookieFor('arpResponder', 'endpoint/b6').toString(16)}/-1`;
    const flows = await e.lab
      .hv('hv1')
      .ofctl('dump-flows', e.lab.hv('hv1').mgmt('br-int'), `cookie=${cookie}`);
    expect(flows).toMatch(/n_packets=[1-9]\d*, .*icmp_type=135,.*nd_target=fd00:93::b /);
    await expectConverged(e.lab, e.controller.engine);
  }, 90_000);

  it('answers for a known address even when the VM holding it does not (the switch answers, not the VM)', async () => {
    await sh('b6', `ip -6 addr del ${V6.b6}/64 dev eth0`);
    try {
      await sh('a6', 'ip -6 neigh flush dev eth0');
      expect(await neighbour('a6', V6.b6)).toBe('');
      await e.lab.ping('a6', V6.b6, { count: 1, timeoutS: 1 }); // b6 no longer answers the ping itself
      expect(await neighbour('a6', V6.b6)).toMatch(
        new RegExp(`^lladdr ${B.mac} (REACHABLE|STALE|DELAY|PROBE)`),
      );
      // An address no endpoint holds is not answered: the solicitation floods and nobody replies.
      await e.lab.ping('a6', 'fd00:93::99', { count: 1, timeoutS: 1 });
      expect(await neighbour('a6', 'fd00:93::99')).toMatch(/^(INCOMPLETE|FAILED)|^$/);
    } finally {
      await sh('b6', `ip -6 addr add ${V6.b6}/64 dev eth0 nodad`);
    }
  }, 60_000);

  /**
   * c6 takes b6's address (Linux runs duplicate address detection, whose solicitation from ::
   * port security drops, then announces the address with an unsolicited override advertisement:
   * ndisc_notify). With port security on, a6 keeps b6's MAC; with it off, c6's announcement
   * reaches a6 and takes the address over, which is what the guard prevents.
   */
  async function claimB6FromC6(): Promise<string> {
    await sh('a6', `ip -6 neigh flush dev eth0; ping -6 -c 1 -W 1 ${V6.b6} >/dev/null`);
    expect(await neighbour('a6', V6.b6)).toMatch(new RegExp(`^lladdr ${B.mac} `));
    await sh('c6', 'sysctl -qw net.ipv6.conf.eth0.ndisc_notify=1');
    // b6 lets go of the address for the while, or it would answer c6's DAD probe and c6 would
    // give up instead of announcing (weft never answers DAD: it has no source link-layer option).
    await sh('b6', `ip -6 addr del ${V6.b6}/64 dev eth0`);
    await sh('c6', `ip -6 addr add ${V6.b6}/128 dev eth0`);
    try {
      // DAD takes about a second; the announcement follows it.
      await new Promise((r) => setTimeout(r, 2500));
      expect(await sh('c6', `ip -6 addr show dev eth0`)).not.toMatch(/dadfailed/);
      return await neighbour('a6', V6.b6);
    } finally {
      await sh('c6', `ip -6 addr del ${V6.b6}/128 dev eth0`);
      await sh('b6', `ip -6 addr add ${V6.b6}/64 dev eth0 nodad`);
    }
  }

  it("keeps a VM from taking over another's IPv6 address with a forged advertisement (port security)", async () => {
    expect(await claimB6FromC6()).toMatch(new RegExp(`^lladdr ${B.mac} `));
  }, 60_000);

  it('lets the same advertisement through from a port with port security off (the guard is what stops it)', async () => {
    await putEndpoint(C, false);
    try {
      expect(await claimB6FromC6()).toMatch(new RegExp(`^lladdr ${C.mac} `));
    } finally {
      await putEndpoint(C, true);
    }
  }, 60_000);
});
