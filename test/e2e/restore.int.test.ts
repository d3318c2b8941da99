import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportYaml } from '../../northbound/cli/export-command.js';
import { expectConverged } from './converged.js';
import { type E2e, everyChassisRegistered, startE2e, waitFor } from './harness.js';

/**
 * Disaster recovery: the store is lost, a new controller starts on an empty one with
 * `--restore` of the last `weft export`. It must come up with the same intent before any switch
 * meets it, so it finds nothing to change on the switches (no flow deleted for a moment, none
 * rewritten) and traffic never stops: the same ids, MACs, VNIs and rule ids give the same flows.
 */
let e: E2e;
const VMS = [
  { name: 'web', hypervisor: 'hv1', mac: '02:00:00:00:b1:01', ip: '10.0.0.11/24' },
  { name: 'db', hypervisor: 'hv2', mac: '02:00:00:00:b1:02', ip: '10.0.0.12/24' },
  { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:b1:03', ip: '10.0.0.13/24', vlan: 43 },
];

beforeAll(async () => {
  e = await startE2e(2, VMS);
  await everyChassisRegistered(e, 2);
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] });
  await e.api.put('/v1/security-groups/sg', {
    tenantId: 't1',
    name: 'sg',
    rules: [
      {
        direction: 'ingress',
        ethertype: 'ipv4',
        protocol: 'tcp',
        portMin: 5432,
        portMax: 5432,
        remoteGroupId: 'sg',
      },
      { direction: 'ingress', ethertype: 'ipv4', protocol: 'icmp' },
      { direction: 'egress', ethertype: 'ipv4', protocol: 'any' },
    ],
  });
  for (const vm of VMS.slice(0, 2)) {
    await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: 'n1',
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]],
      securityGroupIds: ['sg'],
    });
  }
  await e.api.put('/v1/vlan-bindings/metal?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 43,
    networkId: 'n1',
  });
  await e.api.post('/v1/acls?wait=applied&timeout=20s', {
    networkId: 'n1',
    priority: 100,
    direction: 'ingress',
    action: 'drop',
    protocol: 'udp',
    portMin: 2222,
    portMax: 2232,
  });
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

describe('weft serve --restore after the store is lost', () => {
  it('comes back with the same intent and finds nothing to change on any switch', async () => {
    await expectConverged(e.lab, e.controller.engine);
    expect(await e.lab.tcpProbe('web', '10.0.0.12', 5432, 2000)).toBe('db');
    const exported = (await e.api.get('/v1/export')) as { ops: never[] };
    const revision = e.controller.intents.revision();
    const file = join(e.dir, 'backup.yaml');
    await writeFile(file, await exportYaml(exported.ops, String(revision), new Date()));

    await e.restartController({ freshStore: true, restore: file });
    // One commit: the restored intent is at revision 1 of the new store, whatever it was before.
    expect(e.controller.intents.revision()).toBe(1);
    await expect
      .poll(() => e.controller.engine.status().filter((s) => s.lastDumpResult).length, { timeout: 30_000 })
      .toBe(2);
    const changes = e.controller.engine.status().map((s) => {
      const r = s.lastDumpResult!;
      return [s.chassisId, r.flowsAdded, r.flowsModified, r.flowsRemoved, r.groupsChanged];
    });
    expect(changes.sort()).toEqual([
      ['hv1', 0, 0, 0, 0],
      ['hv2', 0, 0, 0, 0],
    ]);
    expect(await e.api.get('/v1/export')).toEqual(exported);
    expect(await e.lab.tcpProbe('web', '10.0.0.12', 5432, 2000)).toBe('db');
    expect((await e.lab.ping('web', '10.0.0.13', { count: 2, intervalMs: 200 })).received).toBe(2);
  }, 90_000);

  it('restarted again with the flag left in place, keeps the intent it has', async () => {
    await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', { name: 'renamed' });
    await e.restartController({ restore: join(e.dir, 'backup.yaml') });
    expect(((await e.api.get('/v1/networks/n1')) as { name: string }).name).toBe('renamed');
    await expectConverged(e.lab, e.controller.engine);
  }, 90_000);
});
