import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP_KIND, groupId } from '../../controller/pipeline/groups.js';
import type { Bucket } from '../../southbound/openflow/codec/buckets.js';
import { type Capture, startCapture } from '../lab/capture.js';
import { TUNNEL_OFPORT } from '../lab/lab-spec.js';
import { expectConverged } from './converged.js';
import { arpRounds, groupStats, whoHas } from './flood-probes.js';
import { type E2e, startE2e, waitFor } from './harness.js';

/**
 * A VLAN-bound physical host across the overlay, with real traffic. `metal` sits on VLAN 42 behind
 * hv2's top-of-rack port; `vm` is an overlay VM on hv1. The intent knows no address of metal, so
 * vm's ARP for it floods: out of hv1's FLOOD_ALL group into the tunnel, out of hv2's FLOOD_LOCAL
 * group through the bucket that pushes tag 42, to metal, whose reply comes back. Removing the
 * binding cuts metal off and leaves no VLAN flow or bucket behind; adding it back restores it.
 */
let e: E2e;
const VNI = 740;
const VM = { name: 'vm', hypervisor: 'hv1', mac: '02:00:00:00:74:01', ip: '10.0.0.61/24' };
const METAL = { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:74:02', ip: '10.0.0.63/24', vlan: 42 };
const METAL_IP = METAL.ip.split('/')[0]!;
const VM_IP = VM.ip.split('/')[0]!;
const BINDING = { chassisId: 'hv2', port: 'phy-metal', vlan: 42, networkId: 'n1' };
const captures: Capture[] = [];

const dpid = async (hv: string) =>
  JSON.parse((await e.lab.hv(hv).vsctl('get', 'bridge', 'br-int', 'datapath_id')).trim()) as string;
const bucketIndex = async (hv: string, id: number, pick: (b: Bucket) => boolean) =>
  e.controller.engine
    .desired(await dpid(hv))
    ?.groups.find((g) => g.groupId === id)
    ?.buckets.findIndex(pick) ?? -1;

beforeAll(async () => {
  e = await startE2e(2, [VM, METAL]);
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/n1', { tenantId: 't1', name: 'n1', vni: VNI, subnets: ['10.0.0.0/24'] });
  await e.api.put('/v1/endpoints/vm?wait=applied&timeout=20s', {
    networkId: 'n1',
    mac: VM.mac,
    ips: [VM.ip.split('/')[0]],
    ifaceId: 'vm',
  });
  await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', BINDING);
  // The tagging switch learns as it goes: the first frames may be spent on that.
  await waitFor(
    async () => (await e.lab.ping('vm', METAL_IP, { count: 1, timeoutS: 1 })).received,
    1,
    30_000,
    'vm reaches metal',
  );
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('a VLAN-bound physical host across the overlay', () => {
  it('carries ARP for the host through the ALL group, the tunnel and the VLAN bucket, and back', async () => {
    const allId = groupId(GROUP_KIND.FLOOD_ALL, VNI);
    const localId = groupId(GROUP_KIND.FLOOD_LOCAL, VNI);
    const tunnelBucket = await bucketIndex('hv1', allId, (b) =>
      b.actions.some((a) => a.type === 'output' && a.port === TUNNEL_OFPORT),
    );
    const vlanBucket = await bucketIndex('hv2', localId, (b) =>
      b.actions.some((a) => a.type === 'push_vlan'),
    );
    expect([tunnelBucket, vlanBucket].every((i) => i >= 0)).toBe(true);
    const [hv1, hv2] = [e.lab.hv('hv1'), e.lab.hv('hv2')];
    const before = { all: await groupStats(hv1, allId), local: await groupStats(hv2, localId) };

    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['arp']);
    captures.push(c);
    const ROUNDS = 3;
    expect(await arpRounds(e.lab, 'vm', METAL_IP, ROUNDS)).toBe(ROUNDS);
    expect(await e.lab.exec('vm', ['ip', 'neigh', 'show', METAL_IP])).toContain(`lladdr ${METAL.mac}`);
    await expect
      .poll(
        async () => (await groupStats(hv1, allId)).buckets[tunnelBucket]! - before.all.buckets[tunnelBucket]!,
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThanOrEqual(ROUNDS);
    await expect
      .poll(
        async () => (await groupStats(hv2, localId)).buckets[vlanBucket]! - before.local.buckets[vlanBucket]!,
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThanOrEqual(ROUNDS);
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    expect(
      whoHas(lines, METAL_IP).filter((l) => l.includes(`${VM.mac} > ff:ff:ff:ff:ff:ff`)).length,
    ).toBeGreaterThanOrEqual(ROUNDS);
    expect(
      lines.filter((l) => l.includes(`Reply ${METAL_IP} is-at ${METAL.mac}`)).length,
    ).toBeGreaterThanOrEqual(ROUNDS);
    expect(await e.lab.tcpProbe('vm', METAL_IP, 8080, 2000)).toBe('metal');
  }, 90_000);

  it('lets the host speak first: its ARP for the VM is answered back to it tagged', async () => {
    // Neither side knows the other: the host's ARP request is what weft answers (no flood).
    await e.lab.exec('metal', ['ip', 'neigh', 'flush', 'all']);
    await e.lab.exec('vm', ['ip', 'neigh', 'flush', 'all']);
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['arp']);
    captures.push(c);
    const ping = await e.lab.ping('metal', VM_IP, { count: 3, intervalMs: 200, timeoutS: 1 });
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    expect(lines.filter((l) => l.includes(`Reply ${VM_IP} is-at ${VM.mac}`)).length).toBeGreaterThanOrEqual(
      1,
    );
    expect(ping.received).toBe(3);
    expect(await e.lab.tcpProbe('metal', VM_IP, 8080, 2000)).toBe('vm');
  }, 60_000);

  it('lets the host use a weft router: gateway ARP, pings to it and its ICMP errors reach it tagged', async () => {
    // No address given: the router takes 10.0.0.1, the first host address of n1's subnet.
    const r = await e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
      tenantId: 't1',
      interfaces: [{ networkId: 'n1' }],
    });
    expect((r.interfaces as Array<{ ip: string }>)[0]!.ip).toBe('10.0.0.1');
    await e.lab.exec('metal', ['ip', 'neigh', 'flush', 'all']);
    expect((await e.lab.ping('metal', '10.0.0.1', { count: 3, intervalMs: 200, timeoutS: 1 })).received).toBe(
      3,
    );
    await e.lab.exec('metal', ['ip', 'route', 'replace', 'default', 'via', '10.0.0.1']);
    // The router's ICMP error, sent by the controller out of the VLAN port with the tag pushed.
    expect(await e.lab.exec('metal', 'ping -n -c 1 -W 2 10.9.9.9 2>&1; true')).toMatch(
      /From 10\.0\.0\.1 icmp_seq=1 Destination Net Unreachable/,
    );
    await e.lab.exec('metal', ['ip', 'route', 'del', 'default']);
    await e.api.delete('/v1/routers/r1?wait=applied&timeout=20s');
  }, 60_000);

  it('cuts the host off when the binding goes, without a VLAN flow or bucket left behind', async () => {
    await e.api.delete('/v1/vlan-bindings/metal42?wait=applied&timeout=20s');
    await expectConverged(e.lab, e.controller.engine);
    const hv2 = e.lab.hv('hv2');
    const [flows, groups] = [
      await hv2.ofctl('--no-stats', 'dump-flows', hv2.mgmt('br-int')),
      await hv2.ofctl('dump-groups', hv2.mgmt('br-int')),
    ];
    expect(flows).not.toMatch(/dl_vlan=42|vlan_vid|pop_vlan|push_vlan/);
    expect(groups).not.toMatch(/push_vlan/);
    expect((await e.lab.ping('vm', METAL_IP, { count: 2, intervalMs: 200, timeoutS: 1 })).received).toBe(0);

    await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', BINDING);
    await expect
      .poll(async () => (await e.lab.ping('vm', METAL_IP, { count: 1, timeoutS: 1 })).received, {
        timeout: 15_000,
      })
      .toBe(1);
  }, 60_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
