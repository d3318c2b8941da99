import { describe, expect, it } from 'vitest';
import { DatapathSync } from '../../../controller/engine/datapath-sync.js';
import { flushStaleNat, NatFlushDebt } from '../../../controller/engine/nat-flush.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';
import { OfpErrorReply } from '../../../southbound/openflow/session/session-errors.js';
import { MemorySwitch } from './memory-switch.js';

/** The SNAT zone flush after a change took a translation's address away, through DatapathSync. */

const ZONE = 33000;
const snat = (ip: string, zone = ZONE): DesiredFlow => ({
  tableId: TABLE.L2_LOOKUP,
  priority: 95,
  cookie: cookieFor('router', 'router/r1'),
  match: [{ field: 'reg2', value: 1 }],
  instructions: [
    {
      type: 'apply_actions',
      actions: [
        {
          type: 'ct',
          flags: 1,
          zone,
          table: TABLE.L2_LOOKUP,
          alg: 0,
          actions: [{ type: 'nat', flags: NAT_SRC, ipv4Min: ip }],
        },
      ],
    },
  ],
});
const other = (port: number): DesiredFlow => ({
  tableId: 60,
  priority: 100,
  cookie: cookieFor('overlay', `endpoint/e${port}`),
  match: [{ field: 'reg7', value: port }],
  instructions: [{ type: 'apply_actions', actions: [{ type: 'output', port, maxLen: 0 }] }],
});

type Lines = Array<{ level: string; obj: Record<string, unknown>; msg: string }>;
function logger(lines: Lines) {
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    lines.push({ level, obj, msg });
  const log = { info: at('info'), warn: at('warn'), debug: () => {} } as never as import('pino').Logger;
  return log;
}

/** A MemorySwitch with conntrack: records each flush in the order of its writes, or fails it. */
class ConntrackSwitch extends MemorySwitch {
  flushes: number[][] = [];
  order: string[] = [];
  fail?: Error;
  /** Called as the switch answers a dump (a test's chance to act meanwhile). */
  onDump?: () => void;
  override async dumpFlows() {
    const flows = await super.dumpFlows();
    this.onDump?.();
    return flows;
  }
  /** The next bundle is applied, but its answer never comes (the connection dropped after it). */
  loseNextAnswer = false;
  override async applyAtomically(...args: Parameters<MemorySwitch['applyAtomically']>) {
    await super.applyAtomically(...args);
    this.order.push('bundle');
    if (this.loseNextAnswer) {
      this.loseNextAnswer = false;
      throw new Error('connection closed before the barrier reply');
    }
  }
  async flushConntrackZones(zones: readonly number[]): Promise<void> {
    if (this.fail) throw this.fail;
    this.flushes.push([...zones]);
    this.order.push('flush');
  }
}

const desired = (...flows: DesiredFlow[]) => ({ flows, groups: [] });
const zones = (debt: NatFlushDebt) => [...debt.owed('00000000000000a1').keys()];

describe('DatapathSync: SNAT zone flush', () => {
  it('flushes a zone after the bundle that changed its address, and only then', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const lines: Lines = [];
    const sync = new DatapathSync(sw, logger(lines));
    await sync.sync(desired(snat('192.0.2.1'), other(1)), 1);
    expect(sw.flushes).toEqual([]); // a new SNAT makes nothing stale
    await sync.sync(desired(snat('192.0.2.1'), other(1), other(2)), 2);
    expect(sw.flushes).toEqual([]); // a change that touches no SNAT flow
    await sync.sync(desired(snat('192.0.2.9'), other(1), other(2)), 3);
    expect(sw.flushes).toEqual([[ZONE]]);
    expect(sw.order).toEqual(['bundle', 'bundle', 'bundle', 'flush']);
    await sync.sync(desired(other(1), other(2)), 4); // SNAT off
    expect(sw.flushes).toEqual([[ZONE], [ZONE]]);
    expect(lines.filter((l) => l.msg.includes('flushed')).map((l) => l.obj)).toEqual([
      { dpid: '00000000000000a1', zones: [ZONE] },
      { dpid: '00000000000000a1', zones: [ZONE] },
    ]);
  });

  it('a switch lost between the bundle and the flush is flushed when it is back, though its diff is then empty', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const lines: Lines = [];
    const debt = new NatFlushDebt();
    const first = new DatapathSync(sw, logger(lines), () => {}, { revision: 0 }, debt);
    await first.sync(desired(snat('192.0.2.1')), 1);
    sw.fail = new Error('connection closed');
    await first.sync(desired(snat('192.0.2.9')), 2);
    expect(sw.flushes).toEqual([]);
    expect(zones(debt)).toEqual([ZONE]);
    expect(lines.at(-1)).toMatchObject({
      level: 'warn',
      msg: 'conntrack zones of a changed SNAT not flushed yet: flushed when the switch is synced again',
    });
    // Reconnected: the engine's next DatapathSync for the switch dumps, finds nothing to change.
    sw.fail = undefined;
    const bundles = sw.bundles.length;
    const again = new DatapathSync(sw, logger(lines), () => {}, { revision: 0 }, debt);
    await again.sync(desired(snat('192.0.2.9')), 2, true);
    expect(sw.bundles.length).toBe(bundles);
    expect(sw.flushes).toEqual([[ZONE]]);
    expect(zones(debt)).toEqual([]);
    // Paid: the next sync asks nothing more.
    await again.sync(desired(snat('192.0.2.9'), other(3)), 3);
    expect(sw.flushes).toEqual([[ZONE]]);
  });

  it('a switch that refuses the flush is not asked again (the flows are right either way)', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const lines: Lines = [];
    const debt = new NatFlushDebt();
    const sync = new DatapathSync(sw, logger(lines), () => {}, { revision: 0 }, debt);
    await sync.sync(desired(snat('192.0.2.1')), 1);
    sw.fail = new OfpErrorReply(1, 1, 'OFPET_BAD_REQUEST', 'OFPBRC_BAD_TYPE', undefined, Buffer.alloc(0), 7);
    await sync.sync(desired(snat('192.0.2.9')), 2);
    expect(zones(debt)).toEqual([]);
    expect(lines.at(-1)).toMatchObject({
      level: 'warn',
      obj: { zones: [ZONE] },
      msg: 'conntrack zones of a changed SNAT not flushed: its connections keep their old translation until they time out',
    });
    expect(sync.appliedRevision).toBe(2);
  });

  it('owed before the bundle: a bundle applied whose answer was lost is flushed at the retry, though its diff is then empty', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const debt = new NatFlushDebt();
    const sync = new DatapathSync(sw, logger([]), () => {}, { revision: 0 }, debt);
    await sync.sync(desired(snat('192.0.2.1')), 1);
    sw.loseNextAnswer = true;
    await sync.sync(desired(snat('192.0.2.9')), 2);
    expect(sw.flushes).toEqual([]);
    const bundles = sw.bundles.length;
    await sync.sync(desired(snat('192.0.2.9')), 3, true);
    expect(sw.bundles.length).toBe(bundles); // nothing left to change
    expect(sw.flushes).toEqual([[ZONE]]);
  });

  it('owes nothing when suspended (HA standby) during the dump: the debt was forgotten and stays so', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const debt = new NatFlushDebt();
    const sync = new DatapathSync(sw, logger([]), () => {}, { revision: 0 }, debt);
    await sync.sync(desired(snat('192.0.2.1')), 1);
    sw.onDump = () => sync.suspend();
    await sync.sync(desired(snat('192.0.2.9')), 2, true);
    // suspend() settles the waiters at once: let the sync in flight run to its end.
    await new Promise((r) => setTimeout(r, 50));
    expect(sw.bundles).toHaveLength(2);
    expect(zones(debt)).toEqual([]);
    expect(sw.flushes).toEqual([]);
  });

  it('forgiven, not flushed, when the switch translates to the address again (the change refused, then undone)', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const debt = new NatFlushDebt();
    const sync = new DatapathSync(sw, logger([]), () => {}, { revision: 0 }, debt);
    await sync.sync(desired(snat('192.0.2.1')), 1);
    sw.failNext = true;
    await sync.sync(desired(snat('192.0.2.9')), 2);
    expect(zones(debt)).toEqual([ZONE]);
    await sync.sync(desired(snat('192.0.2.1')), 3, true);
    expect(sw.flushes).toEqual([]);
    expect(zones(debt)).toEqual([]);
  });
});

describe('NatFlushDebt', () => {
  const lost = (...entries: Array<[number, string[]]>) =>
    new Map(entries.map(([z, ips]) => [z, new Set(ips)]));

  it('keeps each switch its own zones and addresses, sorted by zone; clear forgets them all', () => {
    const debt = new NatFlushDebt();
    debt.owe('a', lost([2, ['192.0.2.2']], [1, ['192.0.2.1']]));
    debt.owe('a', lost([2, ['192.0.2.3']]));
    debt.owe('b', lost([3, ['192.0.2.4']]));
    debt.owe('a', new Map());
    expect([...debt.owed('a')].map(([z, ips]) => [z, [...ips]])).toEqual([
      [1, ['192.0.2.1']],
      [2, ['192.0.2.2', '192.0.2.3']],
    ]);
    debt.paid('a', [1]);
    expect([[...debt.owed('a').keys()], [...debt.owed('b').keys()], [...debt.owed('c').keys()]]).toEqual([
      [2],
      [3],
      [],
    ]);
    debt.clear();
    expect([...debt.owed('a').keys(), ...debt.owed('b').keys()]).toEqual([]);
  });

  it('a port without conntrack pays at once; nothing owed asks nothing', async () => {
    const debt = new NatFlushDebt();
    const lines: Lines = [];
    const port = { dpid: 'a' } as never;
    await flushStaleNat(port, debt, () => new Map(), logger(lines));
    debt.owe('a', lost([ZONE, ['192.0.2.1']]));
    await flushStaleNat(port, debt, () => new Map(), logger(lines));
    expect([...debt.owed('a').keys()]).toEqual([]);
    expect(lines).toEqual([]);
  });
});
