import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Replica } from '../../../southbound/ovsdb/replica.js';
import { OvsdbSession } from '../../../southbound/ovsdb/session.js';
import type { Row } from '../../../southbound/ovsdb/values.js';
import { VSWITCH_DB, VSWITCH_TABLES, type VswitchTables } from '../../../southbound/ovsdb/vswitch.js';
import { run } from '../../lab/exec.js';
import { type OvsInstance, startOvs } from '../../lab/ovs.js';

// The typed replica against a real ovsdb-server, including a server restart with changes made
// while the client was away: the replica must end up equal to the database, announcing each
// change once and nothing that did not change.
let ovs: OvsInstance;
let session: OvsdbSession;
const replica = new Replica<VswitchTables>({ db: VSWITCH_DB, tables: VSWITCH_TABLES });
const events: string[] = [];
const vsctl = (...args: string[]) => ovs.vsctl('--no-wait', ...args);

const until = async (what: string, ok: () => boolean, ms = 8000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; events: ${events.join(' | ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};
const names = (t: 'Port' | 'Interface') => [...replica.table(t).values()].map((r) => r.name).sort();

beforeAll(async () => {
  ovs = await startOvs({ vswitchd: false });
  await vsctl('add-br', 'br0', '--', 'set', 'bridge', 'br0', 'datapath_type=netdev');
  await vsctl(
    'add-port',
    'br0',
    'p1',
    '--',
    'add-port',
    'br0',
    'p2',
    '--',
    'set',
    'interface',
    'p1',
    'external_ids:iface-id=vm1',
  );
  for (const kind of ['added', 'changed', 'removed'] as const) {
    replica.on(kind, (table: string, row: Row) => {
      if (table === 'Port' || table === 'Interface') events.push(`${kind} ${table} ${row.name}`);
    });
  }
  session = new OvsdbSession(ovs.dbTarget, { backoffMinMs: 50, backoffMaxMs: 400 });
  session.on('connected', (client) => void replica.attach(client).catch(() => client.close()));
  session.start();
});
afterAll(async () => {
  session?.stop();
  await ovs?.stop();
});

describe('Replica of Open_vSwitch', () => {
  it('loads every row with schema-typed columns', async () => {
    await until('initial sync', () => replica.table('Interface').size === 3);
    expect(names('Port')).toEqual(['br0', 'p1', 'p2']);
    const p1 = [...replica.table('Interface').values()].find((i) => i.name === 'p1')!;
    expect(p1.external_ids).toEqual(new Map([['iface-id', 'vm1']]));
    expect(p1.ofport).toBeNull(); // optional integer, empty without vswitchd
    const br = [...replica.table('Bridge').values()][0]!;
    expect(br.ports).toHaveLength(3);
    expect(br.datapath_type).toBe('netdev');
    expect(replica.table('Open_vSwitch').size).toBe(1);
  });

  it('applies inserts, modifications and deletions as they happen', async () => {
    events.length = 0;
    await vsctl('add-port', 'br0', 'p3');
    await until('p3', () => names('Port').includes('p3'));
    await vsctl('set', 'interface', 'p3', 'external_ids:iface-id=vm3', 'mtu_request=1400');
    await until('vm3', () =>
      [...replica.table('Interface').values()].some((i) => i.external_ids.get('iface-id') === 'vm3'),
    );
    const p3 = [...replica.table('Interface').values()].find((i) => i.name === 'p3')!;
    expect(p3.mtu_request).toBe(1400);
    await vsctl('remove', 'interface', 'p3', 'external_ids', 'iface-id');
    await until('vm3 gone', () =>
      [...replica.table('Interface').values()].every((i) => i.external_ids.size === 0 || i.name !== 'p3'),
    );
    await vsctl('del-port', 'br0', 'p3');
    await until('p3 gone', () => !names('Port').includes('p3'));
    // Within one transaction the table order is the server's; compare as a multiset.
    expect(events.sort()).toEqual([
      'added Interface p3',
      'added Port p3',
      'changed Interface p3',
      'changed Interface p3',
      'removed Interface p3',
      'removed Port p3',
    ]);
  });

  it('reconnects after an ovsdb-server restart and resyncs without losing or repeating rows', async () => {
    events.length = 0;
    const p2Port = [...replica.table('Port').values()].find((p) => p.name === 'p2')!;
    const br = [...replica.table('Bridge').values()][0]!;
    const synced = new Promise((resolve) => replica.once('synced', resolve));
    await ovs.stopOvsdb();
    // Changes while the client cannot see them, written straight into the database file.
    const ops = [
      VSWITCH_DB,
      {
        op: 'update',
        table: 'Interface',
        where: [['name', '==', 'p1']],
        row: { external_ids: ['map', [['iface-id', 'vm1-moved']]] },
      },
      {
        op: 'mutate',
        table: 'Bridge',
        where: [['_uuid', '==', ['uuid', br._uuid]]],
        mutations: [['ports', 'delete', ['set', [['uuid', p2Port._uuid]]]]],
      },
    ];
    await run('ovsdb-tool', ['transact', `${ovs.dir}/conf.db`, JSON.stringify(ops)]);
    await ovs.startOvsdb();
    const result = (await synced) as { incremental: boolean; changes: number };
    expect(result.incremental).toBe(false); // a standalone server keeps no transaction history
    await until('resync', () => !names('Port').includes('p2'));
    expect(names('Port')).toEqual(['br0', 'p1']);
    expect(names('Interface')).toEqual(['br0', 'p1']);
    const p1 = [...replica.table('Interface').values()].find((i) => i.name === 'p1')!;
    expect(p1.external_ids.get('iface-id')).toBe('vm1-moved');
    // Exactly the real changes: nothing re-added, nothing lost.
    expect(events.sort()).toEqual(['changed Interface p1', 'removed Interface p2', 'removed Port p2']);
  });

  it('keeps following after the resync', async () => {
    events.length = 0;
    await vsctl('add-port', 'br0', 'p4');
    await until('p4', () => names('Port').includes('p4'));
    expect(events.sort()).toEqual(['added Interface p4', 'added Port p4']);
  });
});
