import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeArgs } from '../../../controller/config/serve-config.js';
import { type Controller, startController } from '../../../controller/main.js';
import type { OfpMessage } from '../../../southbound/openflow/codec/index.js';
import { setRole } from '../../../southbound/openflow/session/operations.js';
import { OfpErrorReply } from '../../../southbound/openflow/session/session-errors.js';
import { addHv1Bridge } from '../../apps/fixtures.js';
import { apiClient } from '../../e2e/api-client.js';
import { type OvsInstance, startOvs } from '../../lab/ovs.js';
import { DURABLE_REDIS, type RedisInstance, startRedis } from '../../lab/redis.js';
import { provisionRed } from './red-network.js';

/**
 * The HA pair in roles mode, for real: two in-process controllers sharing one redis-server, one
 * OVS bridge. The hypervisor only "typed" instance a (standing in for the VIP); weft itself makes
 * the bridge dial both instances and the chassis report to both. Exactly one MASTER; stopping the
 * leader hands MASTER to the standby with the flow table unchanged; the deposed leader's
 * ROLE_REQUEST and FLOW_MOD are refused by OVS.
 */
const TOKEN = 'ha-roles-admin-token-0123456789';
// Long enough that one in-process controller starting (fastify compiles its schemas synchronously,
// seconds on a loaded machine) does not starve the other's renewals; takeover on a clean stop
// does not wait for it (the lease is released).
const TTL = 8000;
let redis: RedisInstance;
let ovs: OvsInstance;
let dir: string;
const running = new Map<string, Controller>();

function args(id: 'a' | 'b'): string[] {
  return [
    '--openflow',
    `unix:${join(dir, `${id}-of.sock`)}`,
    '--ovsdb',
    `punix:${join(dir, `${id}-db.sock`)}`,
    '--api',
    '127.0.0.1:0',
    '--store',
    redis.url,
    '--datapath-type',
    'netdev',
    '--admin-token',
    TOKEN,
    '--resync-interval',
    '0',
    '--log-level',
    process.env.WEFT_HA_LOG ?? 'silent',
    '--ha',
    'redis',
    '--instance-id',
    id,
    '--lease-ttl',
    String(TTL),
    // OVS dials unix: controllers only inside its run dir: symlinks there lead to our sockets.
    '--advertise-openflow',
    `unix:${join(ovs.dir, `${id}-of.sock`)}`,
    '--advertise-ovsdb',
    `unix:${join(dir, `${id}-db.sock`)}`,
  ];
}

async function start(id: 'a' | 'b'): Promise<Controller> {
  const parsed = parseServeArgs(args(id), {});
  if (parsed.help) throw new Error('unexpected help');
  const c = await startController(parsed.config);
  running.set(id, c);
  return c;
}

async function stop(id: 'a' | 'b'): Promise<void> {
  await running.get(id)?.stop();
  running.delete(id);
}

const ofctl = (...a: string[]) => ovs.ofctl('-O', 'OpenFlow13', ...a);
/** Every flow on the bridge, without counters, sorted: the table as the dataplane sees it. */
const flowTable = async () =>
  (await ofctl('--no-stats', 'dump-flows', ovs.mgmt('br-int')))
    .split('\n')
    .filter((l) => l.includes('actions='))
    .map((l) => l.trim())
    .sort();
/** target -> role, as OVS reports it (`ovs-vsctl --columns=role list controller`). */
async function controllerRoles(): Promise<Map<string, string>> {
  const out = await ovs.vsctl(
    '--format=csv',
    '--data=bare',
    '--no-headings',
    '--columns=target,role',
    'list',
    'controller',
  );
  return new Map(
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [target = '', role = ''] = l.split(',');
        return [target.replace(/"/g, ''), role];
      }),
  );
}
const masters = async () =>
  [...(await controllerRoles()).entries()].filter(([, r]) => r === 'master').map(([t]) => t);
const target = (id: string) => `unix:${join(ovs.dir, `${id}-of.sock`)}`;

beforeAll(async () => {
  redis = await startRedis({ config: DURABLE_REDIS });
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-ha-roles-'));
  for (const id of ['a', 'b']) await symlink(join(dir, `${id}-of.sock`), join(ovs.dir, `${id}-of.sock`));
  await ovs.vsctl(
    'set',
    'open_vswitch',
    '.',
    'external_ids:system-id=hv1',
    'external_ids:weft-encap-ip=10.0.0.1',
  );
  await addHv1Bridge(ovs);
  await ovs.vsctl('set', 'interface', 'vm-r1', 'external_ids:iface-id=red1');
}, 60_000);

afterAll(async () => {
  for (const id of [...running.keys()] as Array<'a' | 'b'>) await stop(id).catch(() => undefined);
  await ovs?.stop();
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('HA pair, roles mode, real OVS and Redis', () => {
  it('one MASTER; the standby takes over with an unchanged flow table; the deposed leader is fenced', async () => {
    const a = await start('a');
    await expect.poll(() => a.ha?.status().role, { timeout: 5000 }).toBe('leader');
    const termA = a.ha!.status().term;
    // The hypervisor's operator points it at "the VIP" (here: instance a) and nothing else.
    await ovs.vsctl('set-manager', `unix:${join(dir, 'a-db.sock')}`);
    await ovs.vsctl('set-controller', 'br-int', target('a'));
    const b = await start('b');
    await expect.poll(() => b.ha?.status().role, { timeout: 5000 }).toBe('standby');

    // weft (the leader) made the bridge dial both instances and the chassis report to both.
    await expect
      .poll(async () => [...(await controllerRoles()).keys()].sort(), { timeout: 15_000 })
      .toEqual([target('a'), target('b')]);
    await expect
      .poll(async () => (await ovs.vsctl('get-manager')).split('\n').filter(Boolean).sort(), {
        timeout: 10_000,
      })
      .toEqual([`unix:${join(dir, 'a-db.sock')}`, `unix:${join(dir, 'b-db.sock')}`]);
    // One row per target (no duplicate from the race between the operator and weft), each with
    // the short max_backoff weft sets.
    await expect
      .poll(async () =>
        (await ovs.vsctl('--data=bare', '--no-headings', '--columns=max_backoff', 'list', 'controller'))
          .trim()
          .split(/\s+/),
      )
      .toEqual(['1000', '1000']);
    await expect
      .poll(async () => Object.fromEntries(await controllerRoles()), { timeout: 15_000 })
      .toEqual({ [target('a')]: 'master', [target('b')]: 'slave' });
    expect(a.switches.list().map((s) => s.role)).toEqual(['master']);
    expect(b.switches.list().map((s) => s.role)).toEqual(['slave']);
    const dpid = a.switches.list()[0]!.dpid!;

    // A write through the standby goes to Redis; ?wait=applied there waits for the revision the
    // leader publishes once its switches have it.
    const apiB = apiClient(b.apiUrl, TOKEN);
    await provisionRed(apiB);
    const before = await flowTable();
    expect(before.some((f) => f.includes('02:00:00:00:01:01'))).toBe(true);
    // The standby has the same desired state computed, hot.
    expect(b.engine.desired(dpid)?.flows.length).toBe(a.engine.desired(dpid)?.flows.length);

    // Who leads, as the API says it.
    const statusB = (await apiB.get('/v1/status')).controller as Record<string, unknown>;
    expect(statusB).toMatchObject({ role: 'standby', instanceId: 'b', leaderId: 'a', leaderTerm: termA });
    expect((await fetch(`${a.apiUrl}/readyz?leader=1`)).status).toBe(200);
    expect((await fetch(`${b.apiUrl}/readyz?leader=1`)).status).toBe(503);
    expect((await fetch(`${b.apiUrl}/readyz`)).status).toBe(200);
    const metricsA = await (await fetch(`${a.apiUrl}/metrics`)).text();
    expect(metricsA).toContain('weft_ha_leader{instance="a"} 1');
    expect(metricsA).toContain(`weft_ha_term ${termA}`);

    // The leader stops: the standby becomes MASTER and reconciles from a dump, changing nothing.
    const swB = b.switches.get(dpid)!;
    const t0 = performance.now();
    let masterAt = 0;
    swB.on('role', (ch) => {
      if (ch.role === 'master' && !masterAt) masterAt = performance.now();
    });
    await stop('a');
    await expect.poll(() => b.ha?.status().role, { timeout: 5000, interval: 5 }).toBe('leader');
    await expect.poll(() => masterAt, { timeout: 5000, interval: 5 }).toBeGreaterThan(0);
    await expect.poll(() => masters(), { timeout: 10_000 }).toEqual([target('b')]);
    const ovsSaysAt = performance.now();
    console.log(
      `roles-mode takeover (clean stop of the leader, lease ttl ${TTL} ms): MASTER granted to b ` +
        `${(masterAt - t0).toFixed(0)} ms after stop; OVSDB role column showed it after ${(ovsSaysAt - t0).toFixed(0)} ms`,
    );
    const termB = b.ha!.status().term;
    expect(termB).toBeGreaterThan(termA);
    await expect.poll(() => b.engine.status()[0]?.lastDumpResult?.dumped, { timeout: 10_000 }).toBe(true);
    expect(b.engine.status()[0]!.lastDumpResult).toMatchObject({
      flowsAdded: 0,
      flowsModified: 0,
      flowsRemoved: 0,
    });
    expect(await flowTable()).toEqual(before);

    // a comes back: standby, SLAVE; still exactly one MASTER.
    const a2 = await start('a');
    await expect.poll(() => a2.switches.get(dpid)?.role, { timeout: 15_000 }).toBe('slave');
    expect(a2.ha?.status()).toMatchObject({ role: 'standby', leaderId: 'b', leaderTerm: termB });
    await expect
      .poll(async () => Object.fromEntries(await controllerRoles()), { timeout: 10_000 })
      .toEqual({ [target('a')]: 'slave', [target('b')]: 'master' });

    // Fencing: a deposed leader still speaking with its old term is refused by the switch.
    const swA = a2.switches.get(dpid)!;
    const stale = await setRole(swA, 'master', BigInt(termA)).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(OfpErrorReply);
    expect((stale as OfpErrorReply).codeName).toBe('OFPRRFC_STALE');
    const flowMod: OfpMessage = {
      type: 'FLOW_MOD',
      xid: 0,
      cookie: 0n,
      cookieMask: 0n,
      tableId: 0,
      command: 3, // DELETE: the worst a deposed leader could do
      idleTimeout: 0,
      hardTimeout: 0,
      priority: 0,
      bufferId: 0xffffffff,
      outPort: 0xffffffff,
      outGroup: 0xffffffff,
      flags: 0,
      match: [],
      instructions: [],
    } as OfpMessage;
    const refused = await swA.sendConfirmed([flowMod]);
    expect(refused.map((e) => e.codeName)).toEqual(['OFPBRC_IS_SLAVE']);
    expect(await flowTable()).toEqual(before);
    expect(await masters()).toEqual([target('b')]);
    // b's engine saw no STALE or demotion and still leads.
    expect(b.ha?.status().role).toBe('leader');

    // Redis dies: the leader steps down before its lease could expire, nobody is MASTER, the
    // flows stay, REST writes answer 503. Redis returns (AOF): one leader again, by itself.
    const downAt = performance.now();
    await redis.kill9();
    await expect.poll(() => b.ha?.status().role, { timeout: TTL }).not.toBe('leader');
    console.log(
      `leader stepped down ${(performance.now() - downAt).toFixed(0)} ms after Redis died (lease ttl ${TTL} ms)`,
    );
    await expect.poll(() => masters(), { timeout: 15_000 }).toEqual([]);
    expect(await flowTable()).toEqual(before);
    const writeWhileDown = await fetch(`${b.apiUrl}/v1/tenants/blue`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'blue' }),
    });
    expect(writeWhileDown.status).toBe(503);
    await redis.start();
    const leaders = () => [a2, b].filter((c) => c.ha?.status().role === 'leader');
    await expect.poll(() => leaders().length, { timeout: 20_000 }).toBe(1);
    await expect.poll(() => masters(), { timeout: 15_000 }).toHaveLength(1);
    expect(leaders()[0]!.ha!.status().term).toBeGreaterThan(termB);
    expect(await flowTable()).toEqual(before);
  }, 180_000);
});
