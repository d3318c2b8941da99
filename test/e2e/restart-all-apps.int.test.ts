import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportYaml } from '../../northbound/cli/export-command.js';
import { expectConverged } from './converged.js';
import { changesOnReconnect, type E2e, startE2e, waitFor } from './harness.js';

/**
 * "Restarting the controller changes 0 flows", also when it restarts on an empty store restored
 * from `weft export` (`weft serve --restore`), with every app's flows on the switches: security
 * groups (conntrack, logging with a meter), network ACLs in both directions (one logging), a VLAN binding (push/pop VLAN, flood
 * buckets), port security on and off, the ARP responder. The new controller reads each switch
 * back through the OpenFlow codec and must find nothing to change; any flow whose dumped form
 * the reconciler cannot match to its desired form would be rewritten here on every restart.
 */
let e: E2e;
const backup = () => join(e.dir, 'backup.yaml');
const VMS = [
  { name: 'web', hypervisor: 'hv1', mac: '02:00:00:00:a1:01', ip: '10.0.0.11/24' },
  { name: 'db', hypervisor: 'hv2', mac: '02:00:00:00:a1:02', ip: '10.0.0.12/24' },
  { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:a1:03', ip: '10.0.0.13/24', vlan: 42 },
];

beforeAll(async () => {
  e = await startE2e(2, VMS);
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/n1', { tenantId: 't1', name: 'n1', vni: 790, subnets: ['10.0.0.0/24'] });
  await e.api.put('/v1/security-groups/sg', {
    tenantId: 't1',
    name: 'sg',
    // Logging too: its copies (NXAST_CONTROLLER2 with a meter) and its packets-per-second meter.
    log: 'all',
    rules: [
      { direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 5432, portMax: 5432 },
      { direction: 'ingress', ethertype: 'ipv4', protocol: 'icmp' },
      { direction: 'egress', ethertype: 'ipv4', protocol: 'any' },
    ],
  });
  await e.api.put('/v1/endpoints/web?wait=applied&timeout=20s', {
    networkId: 'n1',
    mac: VMS[0]!.mac,
    ips: ['10.0.0.11'],
    ifaceId: 'web',
    portSecurity: false,
  });
  await e.api.put('/v1/endpoints/db?wait=applied&timeout=20s', {
    networkId: 'n1',
    mac: VMS[1]!.mac,
    ips: ['10.0.0.12'],
    ifaceId: 'db',
    securityGroupIds: ['sg'],
  });
  await e.api.put('/v1/vlan-bindings/metal?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 42,
    networkId: 'n1',
  });
  for (const [direction, port] of [
    ['ingress', 2222],
    ['egress', 3333],
  ] as const) {
    await e.api.post('/v1/acls?wait=applied&timeout=20s', {
      networkId: 'n1',
      priority: 100,
      direction,
      action: 'drop',
      protocol: 'udp',
      portMin: port,
      portMax: port + 10,
      // The egress one logs: its copies' meter, shared by the chassis, must survive a restart too.
      ...(direction === 'egress' ? { log: true } : {}),
    });
  }
  await waitFor(
    async () => (await e.lab.ping('web', '10.0.0.13', { count: 1, timeoutS: 1 })).received,
    1,
    30_000,
    'web reaches metal',
  );
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

const NOTHING_CHANGED = [
  ['hv1', 0, 0, 0, 0],
  ['hv2', 0, 0, 0, 0],
];
const trafficFlows = async () => {
  expect(await e.lab.tcpProbe('web', '10.0.0.12', 5432, 2000)).toBe('db');
  expect((await e.lab.ping('web', '10.0.0.13', { count: 2, intervalMs: 200 })).received).toBe(2);
};

describe('controller restart with every app in play', () => {
  it('finds nothing to change on any switch, and traffic still flows', async () => {
    await expectConverged(e.lab, e.controller.engine);
    expect(await e.lab.tcpProbe('web', '10.0.0.12', 5432, 2000)).toBe('db');
    await e.restartController();
    expect(await changesOnReconnect(e, 2)).toEqual(NOTHING_CHANGED);
    await trafficFlows();
  }, 90_000);

  it('restored from its export on an empty store (the old one lost), finds nothing to change either', async () => {
    const exported = (await e.api.get('/v1/export')) as { ops: never[] };
    await writeFile(
      backup(),
      await exportYaml(exported.ops, String(e.controller.intents.revision()), new Date()),
    );
    await e.restartController({ freshStore: true, restore: backup() });
    // One commit: the restored intent is revision 1 of the new store, whatever it was before.
    expect(e.controller.intents.revision()).toBe(1);
    expect(await changesOnReconnect(e, 2)).toEqual(NOTHING_CHANGED);
    expect(await e.api.get('/v1/export')).toEqual(exported);
    await trafficFlows();
  }, 90_000);

  it('restarted with --restore left in place, keeps the intent it has', async () => {
    await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', { name: 'renamed' });
    await e.restartController({ restore: backup() });
    expect(((await e.api.get('/v1/networks/n1')) as { name: string }).name).toBe('renamed');
    expect(await changesOnReconnect(e, 2)).toEqual(NOTHING_CHANGED);
  }, 90_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
