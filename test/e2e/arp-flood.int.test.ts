import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP_KIND, groupId } from '../../controller/pipeline/groups.js';
import { type Capture, startCapture } from '../lab/capture.js';
import { TUNNEL_OFPORT } from '../lab/lab-spec.js';
import { expectConverged } from './converged.js';
import { arpRounds as rounds, settledGroupStats, groupStats as stats, whoHas } from './flood-probes.js';
import { type E2e, startE2e, waitFor } from './harness.js';

/**
 * ARP across hypervisors through the flood group, with real traffic. r2 and b2 (two tenants, the
 * same addresses) each hold a second address, 10.0.0.52, that the intent does not know, so the ARP
 * responder cannot answer for it: r1's request must leave hv1 through red's FLOOD_ALL group, cross
 * the tunnel, come out of hv2's FLOOD_LOCAL group at r2, and r2's reply must come back. The group
 * packet counters and tcpdump in the VMs show the path, and that blue never sees red's ARP.
 */
let e: E2e;
const RED_VNI = 310;
const BLUE_VNI = 320;
const HIDDEN_IP = '10.0.0.52';
const VMS = [
  { name: 'r1', hypervisor: 'hv1', mac: '02:00:00:00:31:01', ip: '10.0.0.1/24', net: 'red' },
  { name: 'r2', hypervisor: 'hv2', mac: '02:00:00:00:31:02', ip: '10.0.0.2/24', net: 'red' },
  { name: 'b1', hypervisor: 'hv1', mac: '02:00:00:00:32:01', ip: '10.0.0.1/24', net: 'blue' },
  { name: 'b2', hypervisor: 'hv2', mac: '02:00:00:00:32:02', ip: '10.0.0.2/24', net: 'blue' },
] as const;
const mac = (vm: string) => VMS.find((v) => v.name === vm)!.mac;
const captures: Capture[] = [];
const groupStats = (hv: string, id: number) => stats(e.lab.hv(hv), id);
const arpRounds = (vm: string, ip: string, n: number) => rounds(e.lab, vm, ip, n);

const capture = async (vm: string) => {
  const c = await startCapture(e.lab.vm(vm).netns, 'eth0', ['arp']);
  captures.push(c);
  return c;
};
const stop = async (c: Capture) => {
  captures.splice(captures.indexOf(c), 1);
  return c.stop();
};
beforeAll(async () => {
  e = await startE2e(
    2,
    VMS.map(({ net: _, ...vm }) => vm),
  );
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  for (const [t, vni] of [
    ['red', RED_VNI],
    ['blue', BLUE_VNI],
  ] as const) {
    await e.api.put(`/v1/tenants/${t}`, { name: t });
    await e.api.put(`/v1/networks/${t}`, { tenantId: t, name: t, vni, subnets: ['10.0.0.0/24'] });
  }
  for (const vm of VMS) {
    const hidden = vm.name.endsWith('2');
    await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: vm.net,
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]],
      ifaceId: vm.name,
      // The second address is outside the intent: it may only be used with port security off.
      ...(hidden ? { portSecurity: false } : {}),
    });
    // No IPv6 chatter (router solicitations, MLD) in the flood groups while counters are read.
    await e.lab.exec(vm.name, ['sysctl', '-qw', 'net.ipv6.conf.all.disable_ipv6=1']);
    if (hidden) await e.lab.exec(vm.name, ['ip', 'addr', 'add', `${HIDDEN_IP}/24`, 'dev', 'eth0']);
  }
  await waitFor(
    async () => (await e.lab.ping('r1', '10.0.0.2', { count: 1, timeoutS: 1 })).received,
    1,
    30_000,
    'r1 reaches r2',
  );
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('ARP across hypervisors', () => {
  it('answers ARP for an address the intent knows on the spot: nothing floods to the owner', async () => {
    // r2 forgets r1 too, so its own request for r1 shows the capture sees ARP at all.
    await e.lab.exec('r2', ['ip', 'neigh', 'flush', 'all']);
    const atR2 = await capture('r2');
    expect(await arpRounds('r1', '10.0.0.2', 3)).toBe(3);
    const lines = await stop(atR2);
    expect(whoHas(lines, '10.0.0.1').length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.includes(`Reply 10.0.0.1 is-at ${mac('r1')}`)).length).toBeGreaterThan(0);
    expect(whoHas(lines, '10.0.0.2')).toEqual([]);
  }, 60_000);

  it('floods ARP for an unknown address through the ALL group, across the tunnel, and the reply returns', async () => {
    const redAll = groupId(GROUP_KIND.FLOOD_ALL, RED_VNI);
    const redLocal = groupId(GROUP_KIND.FLOOD_LOCAL, RED_VNI);
    const blueAll = groupId(GROUP_KIND.FLOOD_ALL, BLUE_VNI);
    const blueLocal = groupId(GROUP_KIND.FLOOD_LOCAL, BLUE_VNI);
    const hv1Dpid = JSON.parse(
      (await e.lab.hv('hv1').vsctl('get', 'bridge', 'br-int', 'datapath_id')).trim(),
    );
    const tunnelBucket = e.controller.engine
      .desired(hv1Dpid)
      ?.groups.find((g) => g.groupId === redAll)
      ?.buckets.findIndex((b) => b.actions.some((a) => a.type === 'output' && a.port === TUNNEL_OFPORT));
    expect(tunnelBucket).toBeGreaterThanOrEqual(0);

    const before = {
      redAll: await groupStats('hv1', redAll),
      redLocal: await groupStats('hv2', redLocal),
      blueAll: await settledGroupStats(e.lab.hv('hv1'), blueAll),
      blueLocal: await settledGroupStats(e.lab.hv('hv2'), blueLocal),
    };
    const [atR2, atB1, atB2] = [await capture('r2'), await capture('b1'), await capture('b2')];
    const ROUNDS = 3;
    expect(await arpRounds('r1', HIDDEN_IP, ROUNDS)).toBe(ROUNDS);
    // r1 learned the hidden address from r2, the VM of its own tenant, never from b2.
    expect(await e.lab.exec('r1', ['ip', 'neigh', 'show', HIDDEN_IP])).toContain(`lladdr ${mac('r2')}`);

    // The requests crossed the tunnel through the groups: counters move on both sides.
    await expect
      .poll(
        async () =>
          (await groupStats('hv1', redAll)).buckets[tunnelBucket!]! - before.redAll.buckets[tunnelBucket!]!,
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThanOrEqual(ROUNDS);
    await expect
      .poll(async () => (await groupStats('hv2', redLocal)).packets - before.redLocal.packets, {
        timeout: 15_000,
      })
      .toBeGreaterThanOrEqual(ROUNDS);

    // Blue's flood groups did not move: red's broadcast never entered blue's network.
    expect((await groupStats('hv1', blueAll)).packets).toBe(before.blueAll.packets);
    expect((await groupStats('hv2', blueLocal)).packets).toBe(before.blueLocal.packets);
    // Blue asks for the same hidden address: b2 answers (it sees blue's request, so the
    // captures in blue work), and red's r2 does not hear of it.
    expect(await arpRounds('b1', HIDDEN_IP, 1)).toBe(1);
    expect(await e.lab.exec('b1', ['ip', 'neigh', 'show', HIDDEN_IP])).toContain(`lladdr ${mac('b2')}`);

    const [r2Lines, b1Lines, b2Lines] = [await stop(atR2), await stop(atB1), await stop(atB2)];
    // r2 saw each broadcast request from r1 and answered it; nothing of blue.
    const fromR1 = whoHas(r2Lines, HIDDEN_IP).filter((l) => l.includes(`${mac('r1')} > ff:ff:ff:ff:ff:ff`));
    expect(fromR1.length).toBeGreaterThanOrEqual(ROUNDS);
    expect(
      r2Lines.filter((l) => l.includes(`Reply ${HIDDEN_IP} is-at ${mac('r2')}`)).length,
    ).toBeGreaterThanOrEqual(ROUNDS);
    expect(r2Lines.filter((l) => l.includes(mac('b1')))).toEqual([]);
    // Blue, with the very same addresses (b2 even holds the hidden one), saw blue's ARP only.
    expect(whoHas(b2Lines, HIDDEN_IP).filter((l) => l.includes(mac('b1'))).length).toBeGreaterThanOrEqual(1);
    expect(b2Lines.filter((l) => l.includes(mac('r1')))).toEqual([]);
    expect(b1Lines.filter((l) => l.includes(mac('r1')))).toEqual([]);
  }, 90_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
