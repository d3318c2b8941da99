import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbClient, type TableUpdates, type TableUpdates2 } from '../../../southbound/ovsdb/client.js';
import { OvsdbError, OvsdbSchemaError } from '../../../southbound/ovsdb/errors.js';
import { VSWITCH_DB, type VswitchTables } from '../../../southbound/ovsdb/vswitch.js';
import { type OvsInstance, startOvs } from '../../lab/ovs.js';

// The client against a real ovsdb-server 3.1 (no vswitchd: pure OVSDB behaviour).
let ovs: OvsInstance;
let client: OvsdbClient;
const clients: OvsdbClient[] = [];
const connect = async () => {
  const c = await OvsdbClient.connect(ovs.dbTarget);
  clients.push(c);
  return c;
};
const vsctl = (...args: string[]) => ovs.vsctl('--no-wait', ...args);

/** Next notification of a kind, or fail after a while. */
function next<A extends unknown[]>(
  c: OvsdbClient,
  event: 'update' | 'update2' | 'update3' | 'locked' | 'stolen',
) {
  return new Promise<A>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no ${event} within 5 s`)), 5000);
    c.once(event, (...args: unknown[]) => {
      clearTimeout(t);
      resolve(args as A);
    });
  });
}

beforeAll(async () => {
  ovs = await startOvs({ vswitchd: false });
  client = await connect();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await ovs?.stop();
});

describe('OVSDB client against ovsdb-server', () => {
  it('lists databases and reads the schema', async () => {
    expect(await client.listDbs()).toContain('Open_vSwitch');
    const schema = await client.getSchema(VSWITCH_DB);
    expect(schema.tables.get('Interface')?.columns.get('ofport')).toMatchObject({ min: 0, max: 1 });
  });

  it('inserts rows tied by named-uuids, then selects, updates, mutates and deletes them', async () => {
    const txn = await client.transaction<VswitchTables>(VSWITCH_DB);
    const ovsRow = (
      await client.run((await client.transaction<VswitchTables>(VSWITCH_DB)).select('Open_vSwitch', []))
    )[0]!.rows![0]!;
    txn
      .insert('Interface', { name: 'tap1', type: 'internal', external_ids: { 'iface-id': 'vm-a' } }, 'i1')
      .insert('Port', { name: 'tap1', interfaces: ['i1'] }, 'p1')
      .insert('Bridge', { name: 'brA', ports: ['p1'], protocols: ['OpenFlow13'], fail_mode: 'secure' }, 'b')
      .mutate('Open_vSwitch', [['_uuid', '==', ovsRow._uuid]], [['bridges', 'insert', ['b']]])
      .comment('weft test: insert with named uuids')
      .commit(false);
    const inserted = await client.run(txn);
    expect(inserted[0]!.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(await vsctl('get', 'interface', 'tap1', 'external_ids:iface-id')).toContain('vm-a');
    expect((await vsctl('list-ports', 'brA')).trim()).toBe('tap1');

    const t2 = await client.transaction<VswitchTables>(VSWITCH_DB);
    t2.update('Interface', [['name', '==', 'tap1']], { mtu_request: 1400 })
      .mutate(
        'Interface',
        [['name', '==', 'tap1']],
        [['external_ids', 'insert', { 'attached-mac': '02:00:00:00:00:01' }]],
      )
      .select('Interface', [['name', '==', 'tap1']], ['name', 'mtu_request', 'external_ids']);
    const [upd, mut, sel] = await client.run(t2);
    expect(upd!.count).toBe(1);
    expect(mut!.count).toBe(1);
    const row = sel!.rows![0]!;
    expect(row.mtu_request).toBe(1400);
    expect(row.external_ids).toEqual(
      new Map([
        ['iface-id', 'vm-a'],
        ['attached-mac', '02:00:00:00:00:01'],
      ]),
    );

    const t3 = await client.transaction<VswitchTables>(VSWITCH_DB);
    t3.wait('Interface', [['name', '==', 'tap1']], ['mtu_request'], '==', [{ mtu_request: 1400 }], 0)
      .mutate('Bridge', [['name', '==', 'brA']], [['ports', 'delete', [inserted[1]!.uuid!]]])
      .delete('Bridge', [['name', '==', 'brA']])
      .mutate('Open_vSwitch', [], [['bridges', 'delete', [inserted[2]!.uuid!]]]);
    const [, , del] = await client.run(t3);
    expect(del!.count).toBe(1);
    expect((await vsctl('list-br')).trim()).toBe('');
  });

  it('reports abort, a failed assert and an unsatisfied wait as OvsdbError with OVSDB details', async () => {
    const t = await client.transaction<VswitchTables>(VSWITCH_DB);
    t.comment('about to abort').abort();
    await expect(client.run(t)).rejects.toMatchObject({ error: 'aborted', operationIndex: 1 });

    const a = await client.transaction<VswitchTables>(VSWITCH_DB);
    a.assert('weft_nobody_holds_this');
    await expect(client.run(a)).rejects.toMatchObject({ error: 'not owner' });

    const w = await client.transaction<VswitchTables>(VSWITCH_DB);
    w.wait('Open_vSwitch', [], ['next_cfg'], '==', [{ next_cfg: 987654 }], 0);
    await expect(client.run(w)).rejects.toMatchObject({ error: 'timed out' });
  });

  it('cancels a transaction blocked in a wait', async () => {
    const w = await client.transaction<VswitchTables>(VSWITCH_DB);
    w.wait('Open_vSwitch', [], ['next_cfg'], '==', [{ next_cfg: 987654 }], 60_000);
    const started = client.start(w);
    await new Promise((r) => setTimeout(r, 100));
    client.cancel(started.id);
    await expect(started.result).rejects.toMatchObject({ error: 'canceled' });
    // The session goes on, and the cancelled wait never completes later.
    expect(await client.echo(['after cancel'])).toEqual(['after cancel']);
  });

  it('surfaces unknown tables and columns (schema mismatch) as OvsdbError with details', async () => {
    const e1 = await client
      .transactRaw(VSWITCH_DB, [{ op: 'insert', table: 'NoSuchTable', row: {} }])
      .catch((e) => e);
    expect(e1).toBeInstanceOf(OvsdbError);
    expect(e1).toMatchObject({ error: 'syntax error', operationIndex: 0 });
    expect(e1.details).toMatch(/No table named NoSuchTable/);
    const e2 = await client
      .transactRaw(VSWITCH_DB, [{ op: 'select', table: 'Bridge', where: [['nmae', '==', 'x']] }])
      .catch((e) => e);
    expect(e2).toMatchObject({ error: 'unknown column' });
    expect(e2.details).toMatch(/nmae/);
    // The typed builder refuses the same mistakes before anything is sent.
    const t = await client.transaction(VSWITCH_DB);
    expect(() => t.insert('NoSuchTable', {})).toThrow(OvsdbSchemaError);
    expect(() => t.insert('Bridge', { nmae: 'x' })).toThrow(/no column "nmae"/);
    expect(() => t.insert('Bridge', { name: 5 })).toThrow(/Bridge.name: expected string/);
  });

  it('reports a constraint violation and a referential integrity violation with their details', async () => {
    await vsctl('add-br', 'brU', '--', 'set', 'bridge', 'brU', 'datapath_type=netdev');
    const dup = await client.transaction<VswitchTables>(VSWITCH_DB);
    dup.insert('Bridge', { name: 'brU' }, 'b2').mutate('Open_vSwitch', [], [['bridges', 'insert', ['b2']]]);
    const e1 = await client.run(dup).catch((e) => e);
    expect(e1).toBeInstanceOf(OvsdbError);
    expect(e1.error).toBe('constraint violation');
    expect(e1.details).toMatch(/brU/);
    expect(e1.operationIndex).toBe(2); // the commit, after both operations

    const dangling = await client.transaction<VswitchTables>(VSWITCH_DB);
    dangling.insert('Port', { name: 'px', interfaces: ['11111111-2222-3333-4444-555555555555'] });
    const e2 = await client.run(dangling).catch((e) => e);
    expect(e2.error).toBe('referential integrity violation');
    expect(e2.details).toMatch(/nonexistent row 11111111-2222-3333-4444-555555555555/);
    // Nothing was written by either.
    expect((await vsctl('list-br')).trim()).toBe('brU');
  });

  it('gets an error reply for an unknown method and keeps the session', async () => {
    await expect(client.rpc.request('frobnicate', [])).rejects.toMatchObject({ error: 'unknown method' });
    expect(await client.echo(['ping'])).toEqual(['ping']);
  });

  it('follows add-port, rename (del+add in one transaction) and del-port through monitor (update)', async () => {
    const c = await connect();
    const initial = await c.monitor(VSWITCH_DB, 'mon1', { Port: { columns: ['name'] } });
    expect(Object.values(initial.Port ?? {}).map((r) => r.new?.name)).toContain('brU');
    let u = next<[unknown, TableUpdates]>(c, 'update');
    await vsctl('add-port', 'brU', 'tapX');
    const [id, added] = await u;
    expect(id).toBe('mon1');
    const [uuid, change] = Object.entries(added.Port!)[0]!;
    expect(change).toEqual({ new: { name: 'tapX' } });
    // Port.name is immutable in the schema: a rename is delete + insert in one transaction.
    u = next(c, 'update');
    await vsctl('del-port', 'brU', 'tapX', '--', 'add-port', 'brU', 'tapY');
    const renamed = (await u)[1].Port!;
    expect(renamed[uuid]).toEqual({ old: { name: 'tapX' } });
    const [newUuid, inserted] = Object.entries(renamed).find(([k]) => k !== uuid)!;
    expect(inserted).toEqual({ new: { name: 'tapY' } });
    u = next(c, 'update');
    await vsctl('del-port', 'brU', 'tapY');
    expect((await u)[1].Port![newUuid]).toEqual({ old: { name: 'tapY' } });
    await c.monitorCancel('mon1');
  });

  it('filters with monitor_cond, changes the condition with monitor_cond_change', async () => {
    const c = await connect();
    await vsctl('add-port', 'brU', 'tapA', '--', 'add-port', 'brU', 'tapB');
    const init = await c.monitorCond(VSWITCH_DB, 'mc1', {
      Port: { columns: ['name'], where: [['name', '==', 'tapA']] },
    });
    expect(Object.values(init.Port!).map((r) => r.initial?.name)).toEqual(['tapA']);
    const u = next<[unknown, TableUpdates2]>(c, 'update2');
    await c.monitorCondChange('mc1', 'mc2', { Port: { where: [['name', '==', 'tapB']] } });
    const [id, swap] = await u;
    expect(id).toBe('mc2');
    const kinds = Object.values(swap.Port!).map((r) => Object.keys(r)[0]);
    expect(kinds.sort()).toEqual(['delete', 'insert']);
  });

  it('resumes with monitor_cond_since and receives update3', async () => {
    const c = await connect();
    const r = await c.monitorCondSince(VSWITCH_DB, 'mcs', {
      Interface: { columns: ['name', 'external_ids'] },
    });
    expect(r.found).toBe(false); // a fresh client has no transaction id to resume from
    expect(Object.keys(r.updates.Interface ?? {}).length).toBeGreaterThan(0);
    const u = next<[unknown, string, TableUpdates2]>(c, 'update3');
    await vsctl('set', 'interface', 'tapA', 'external_ids:iface-id=vm-7');
    const [id, txnId, upd] = await u;
    expect(id).toBe('mcs');
    expect(txnId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.values(upd.Interface!)[0]).toEqual({
      modify: { external_ids: ['map', [['iface-id', 'vm-7']]] },
    });
  });

  it('hands a lock over with lock / steal / unlock and locked / stolen notifications', async () => {
    const a = await connect();
    const b = await connect();
    expect(await a.lock('weft_leader')).toBe(true);
    const stolen = next<[string]>(a, 'stolen');
    expect(await b.steal('weft_leader')).toBe(true);
    expect(await stolen).toEqual(['weft_leader']);
    // b owns it now: an assert passes for b.
    const t = await b.transaction<VswitchTables>(VSWITCH_DB);
    await expect(b.run(t.assert('weft_leader'))).resolves.toHaveLength(1);
    // a lets go of its stolen claim and queues again; when b unlocks, a is told it holds the lock.
    await a.unlock('weft_leader');
    expect(await a.lock('weft_leader')).toBe(false);
    const locked = next<[string]>(a, 'locked');
    await b.unlock('weft_leader');
    expect(await locked).toEqual(['weft_leader']);
  });
});
