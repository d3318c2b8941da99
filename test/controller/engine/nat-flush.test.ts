import { describe, expect, it } from 'vitest';
import { DatapathSync, type SyncResult } from '../../../controller/engine/datapath-sync.js';
import { flushStaleNat, NatFlushDebt } from '../../../controller/engine/nat-flush.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { NAT_DST, NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';
import type { CtFlushFilter } from '../../../southbound/openflow/codec/nx-ct-flush.js';
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
/** A port forward of 192.0.2.1's TCP `port` to `to`:80, as apps/router/snat.ts commits it. */
const forward = (port: number, to: string): DesiredFlow => ({
  tableId: TABLE.L3_ROUTE,
  priority: 310,
  cookie: cookieFor('router', 'router/r1'),
  match: [
    { field: 'eth_type', value: 0x800 },
    { field: 'ipv4_dst', value: '192.0.2.1' },
    { field: 'ip_proto', value: 6 },
    { field: 'tcp_dst', value: port },
  ],
  instructions: [
    {
      type: 'apply_actions',
      actions: [
        {
          type: 'ct',
          flags: 1,
          zone: ZONE,
          table: TABLE.L3_ROUTE,
          alg: 0,
          actions: [{ type: 'nat', flags: NAT_DST, ipv4Min: to, protoMin: 80 }],
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
  const log = {
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    debug: () => {},
  } as never as import('pino').Logger;
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
    this.order.push('flush zones');
  }
  /** Each filtered flush; `filtered = false` answers it as OVS before 3.1 does (OFPBRC_BAD_SUBTYPE, (1, 4) in 1.3). */
  filters: CtFlushFilter[][] = [];
  filtered = true;
  /** Thrown by the filtered flush only (a switch that knows it, refusing one). */
  filterFail?: Error;
  async flushConntrack(filters: readonly CtFlushFilter[]): Promise<void> {
    if (this.fail) throw this.fail;
    if (this.filterFail) throw this.filterFail;
    if (!this.filtered)
      throw new OfpErrorReply(
        1,
        4,
        'OFPET_BAD_REQUEST',
        'OFPBRC_BAD_EXP_TYPE',
        undefined,
        Buffer.alloc(0),
        9,
      );
    this.filters.push([...filters]);
    this.order.push('flush');
  }
}

const desired = (...flows: DesiredFlow[]) => ({ flows, groups: [] });
const zones = (debt: NatFlushDebt) => [...debt.owed('00000000000000a1').keys()];

describe('DatapathSync: conntrack flush of gone NAT translations', () => {
  it('flushes a zone after the bundle that changed its address, and only then', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const lines: Lines = [];
    const results: SyncResult[] = [];
    const sync = new DatapathSync(sw, logger(lines), (_, r) => results.push(r));
    await sync.sync(desired(snat('192.0.2.1'), other(1)), 1);
    expect(sw.flushes).toEqual([]); // a new SNAT makes nothing stale
    await sync.sync(desired(snat('192.0.2.1'), other(1), other(2)), 2);
    expect(sw.flushes).toEqual([]); // a change that touches no SNAT flow
    expect(results.at(-1)!.conntrackFlush).toBeUndefined();
    await sync.sync(desired(snat('192.0.2.9'), other(1), other(2)), 3);
    expect(results.at(-1)!.conntrackFlush).toBe('filtered'); // what weft_conntrack_flushes_total counts
    // The connections that left from the old address, and no others of the zone.
    expect(sw.filters).toEqual([[{ zone: ZONE, reply: { dst: '192.0.2.1' } }]]);
    expect(sw.order).toEqual(['bundle', 'bundle', 'bundle', 'flush']);
    await sync.sync(desired(other(1), other(2)), 4); // SNAT off: the zone serves nothing any more
    expect(sw.flushes).toEqual([[ZONE]]); // whole zones go by the message every OVS knows
    expect(results.at(-1)!.conntrackFlush).toBe('zones');
    expect(sw.filters).toHaveLength(1);
    expect(lines.filter((l) => l.msg.includes('flushed')).map((l) => l.obj)).toEqual([
      { dpid: '00000000000000a1', flushed: [`${ZONE} snat 192.0.2.1`] },
      { dpid: '00000000000000a1', flushed: [`${ZONE} snat 192.0.2.9`, `${ZONE} zone`] },
    ]);
  });

  it("a removed or retargeted port forward: its connections only, the zone's others live on", async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const sync = new DatapathSync(sw, logger([]));
    const forwards = [forward(8080, '10.1.0.5'), forward(2222, '10.1.0.6')];
    await sync.sync(desired(snat('192.0.2.1'), ...forwards), 1);
    await sync.sync(desired(snat('192.0.2.1'), forwards[1]!), 2);
    expect(sw.filters).toEqual([[{ zone: ZONE, ipProto: 6, orig: { dst: '192.0.2.1', dstPort: 8080 } }]]);
    await sync.sync(desired(snat('192.0.2.1'), forward(2222, '10.1.0.7')), 3);
    expect(sw.filters.at(-1)).toEqual([
      { zone: ZONE, ipProto: 6, orig: { dst: '192.0.2.1', dstPort: 2222 } },
    ]);
    await sync.sync(desired(snat('192.0.2.1'), forward(2222, '10.1.0.7'), other(4)), 4);
    expect(sw.filters).toHaveLength(2); // nothing of it changed
  });

  it('a switch without the filtered flush (OVS < 3.1): whole zones for a lost address, nothing for a lost forward alone', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    sw.filtered = false;
    const lines: Lines = [];
    const debt = new NatFlushDebt();
    const results: SyncResult[] = [];
    const sync = new DatapathSync(sw, logger(lines), (_, r) => results.push(r), { revision: 0 }, debt);
    await sync.sync(desired(snat('192.0.2.1'), forward(8080, '10.1.0.5')), 1);
    await sync.sync(desired(snat('192.0.2.1')), 2);
    expect(results.at(-1)!.conntrackFlush).toBe('kept');
    expect([sw.flushes, zones(debt)]).toEqual([[], []]);
    expect(lines.at(-1)).toMatchObject({
      level: 'warn',
      obj: { flushed: [`${ZONE} forward tcp 192.0.2.1:8080 10.1.0.5:80`], zones: [] },
      msg: 'conntrack: the switch cannot flush connections one by one (OVS < 3.1): those of removed port forwards live until they time out',
    });
    await sync.sync(desired(snat('192.0.2.9')), 3);
    expect(results.at(-1)!.conntrackFlush).toBe('zones');
    expect(sw.flushes).toEqual([[ZONE]]);
    expect(lines.at(-1)).toMatchObject({
      level: 'warn',
      obj: { zones: [ZONE] },
      msg: 'conntrack: the switch cannot flush connections one by one (OVS < 3.1): whole zones flushed',
    });
  });

  it('a switch lost between the bundle and the flush is flushed when it is back, though its diff is then empty', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const lines: Lines = [];
    const debt = new NatFlushDebt();
    const first = new DatapathSync(sw, logger(lines), () => {}, { revision: 0 }, debt);
    await first.sync(desired(snat('192.0.2.1')), 1);
    sw.fail = new Error('connection closed');
    await first.sync(desired(snat('192.0.2.9')), 2);
    expect(sw.filters).toEqual([]);
    expect(zones(debt)).toEqual([ZONE]);
    expect(lines.slice(-2).map((l) => [l.level, l.msg])).toEqual([
      [
        'warn',
        'conntrack: connections that outlived their flows not flushed yet: flushed when the switch is synced again',
      ],
      ['warn', 'sync failed; will dump and retry'],
    ]);
    // Not applied: applied means flushed too.
    expect(first.appliedRevision).toBe(1);
    first.close(); // the engine's part when the connection is gone
    // Reconnected: the engine's next DatapathSync for the switch dumps, finds nothing to change.
    sw.fail = undefined;
    const bundles = sw.bundles.length;
    const again = new DatapathSync(sw, logger(lines), () => {}, { revision: 0 }, debt);
    await again.sync(desired(snat('192.0.2.9')), 2, true);
    expect(sw.bundles.length).toBe(bundles);
    expect(sw.filters).toEqual([[{ zone: ZONE, reply: { dst: '192.0.2.1' } }]]);
    expect(zones(debt)).toEqual([]);
    // Paid: the next sync asks nothing more.
    await again.sync(desired(snat('192.0.2.9'), other(3)), 3);
    expect(sw.filters).toHaveLength(1);
  });

  it('a switch that refuses the flush is not asked again (the flows are right either way)', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const lines: Lines = [];
    const debt = new NatFlushDebt();
    const results: SyncResult[] = [];
    const sync = new DatapathSync(sw, logger(lines), (_, r) => results.push(r), { revision: 0 }, debt);
    await sync.sync(desired(snat('192.0.2.1')), 1);
    sw.fail = new OfpErrorReply(1, 5, 'OFPET_BAD_REQUEST', 'OFPBRC_EPERM', undefined, Buffer.alloc(0), 7);
    await sync.sync(desired(snat('192.0.2.9')), 2);
    expect(results.at(-1)!.conntrackFlush).toBe('refused');
    expect(zones(debt)).toEqual([]);
    expect(lines.at(-1)).toMatchObject({
      level: 'warn',
      obj: { flushed: [`${ZONE} snat 192.0.2.1`] },
      msg: 'conntrack: connections that outlived their flows not flushed: they live until they time out',
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
    expect(sw.filters).toEqual([]);
    const bundles = sw.bundles.length;
    await sync.sync(desired(snat('192.0.2.9')), 3, true);
    expect(sw.bundles.length).toBe(bundles); // nothing left to change
    expect(sw.filters).toEqual([[{ zone: ZONE, reply: { dst: '192.0.2.1' } }]]);
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
    expect(sw.filters).toEqual([]);
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
    expect(sw.filters).toEqual([]);
    expect(zones(debt)).toEqual([]);
  });
});

describe('flushStaleNat: what each answer of the switch costs', () => {
  const owing = (sw: ConntrackSwitch, debt: NatFlushDebt, ...keys: string[]) =>
    debt.owe(sw.dpid, new Map([[ZONE, new Set(keys)]]));

  it('a refusal other than "unknown message" (OVS 3.1+ saying no) flushes no whole zone instead', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    sw.filterFail = new OfpErrorReply(
      1,
      10,
      'OFPET_BAD_REQUEST',
      'OFPBRC_IS_SLAVE',
      undefined,
      Buffer.alloc(0),
      9,
    );
    const debt = new NatFlushDebt();
    const lines: Lines = [];
    owing(sw, debt, 'snat 192.0.2.1');
    await flushStaleNat(sw, debt, () => new Map(), logger(lines));
    expect([sw.flushes, zones(debt)]).toEqual([[], []]);
    expect(lines.at(-1)?.msg).toBe(
      'conntrack: connections that outlived their flows not flushed: they live until they time out',
    );
  });

  it('a zone flush instead that fails to reach the switch stays owed, and says so by throwing', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    sw.filtered = false;
    const debt = new NatFlushDebt();
    owing(sw, debt, 'snat 192.0.2.1');
    sw.flushConntrackZones = async () => {
      throw new Error('connection closed');
    };
    await expect(flushStaleNat(sw, debt, () => new Map(), logger([]))).rejects.toThrow('connection closed');
    expect(zones(debt)).toEqual([ZONE]);
  });

  it('a translation no filter can name (a flow on the switch may be anything) is logged and paid, the others flushed', async () => {
    const sw = new ConntrackSwitch('00000000000000a1');
    const debt = new NatFlushDebt();
    const lines: Lines = [];
    owing(sw, debt, 'forward tcp 192.0.2.1:0 10.1.0.5:80', 'snat 192.0.2.1');
    await flushStaleNat(sw, debt, () => new Map(), logger(lines));
    expect(sw.filters).toEqual([[{ zone: ZONE, reply: { dst: '192.0.2.1' } }]]);
    expect(zones(debt)).toEqual([]);
    expect(lines[0]).toMatchObject({
      level: 'error',
      obj: { zone: ZONE, key: 'forward tcp 192.0.2.1:0 10.1.0.5:80' },
      msg: 'conntrack: no flush can name this translation',
    });
  });
});

describe('NatFlushDebt', () => {
  const lost = (...entries: Array<[number, string[]]>) =>
    new Map(entries.map(([z, ips]) => [z, new Set(ips)]));

  it('keeps each switch its own zones and translations, sorted by zone; pays translation by translation; clear forgets them all', () => {
    const debt = new NatFlushDebt();
    debt.owe('a', lost([2, ['192.0.2.2']], [1, ['192.0.2.1']]));
    debt.owe('a', lost([2, ['192.0.2.3']]));
    debt.owe('b', lost([3, ['192.0.2.4']]));
    debt.owe('a', new Map());
    expect([...debt.owed('a')].map(([z, ips]) => [z, [...ips]])).toEqual([
      [1, ['192.0.2.1']],
      [2, ['192.0.2.2', '192.0.2.3']],
    ]);
    const seen = debt.snapshot('a');
    debt.paid('a', new Map([[1, seen.get(1)!]]));
    expect([...debt.owed('a')].map(([z, ips]) => [z, [...ips]])).toEqual([[2, ['192.0.2.2', '192.0.2.3']]]);
    debt.paid('a', seen);
    expect([[...debt.owed('a').keys()], [...debt.owed('b').keys()], [...debt.owed('c').keys()]]).toEqual([
      [],
      [3],
      [],
    ]);
    debt.clear();
    expect([...debt.owed('a').keys(), ...debt.owed('b').keys()]).toEqual([]);
  });

  it('pays only what it saw: a translation owed again meanwhile, or after a clear, stays owed', () => {
    const debt = new NatFlushDebt();
    debt.owe('a', lost([1, ['snat 192.0.2.1']], [2, ['snat 192.0.2.2']]));
    const inFlight = debt.snapshot('a');
    debt.owe('a', lost([1, ['snat 192.0.2.1']])); // lost again while its flush was in flight
    debt.paid('a', inFlight);
    expect([...debt.owed('a')].map(([z, k]) => [z, [...k]])).toEqual([[1, ['snat 192.0.2.1']]]);
    const before = debt.snapshot('a');
    debt.clear();
    debt.owe('a', lost([1, ['snat 192.0.2.1']]));
    debt.paid('a', before);
    expect([...debt.owed('a').keys()]).toEqual([1]);
  });

  it('a port without conntrack pays at once; nothing owed asks nothing', async () => {
    const debt = new NatFlushDebt();
    const lines: Lines = [];
    const port = { dpid: 'a' } as never;
    expect(await flushStaleNat(port, debt, () => new Map(), logger(lines))).toBeUndefined();
    debt.owe('a', lost([ZONE, ['192.0.2.1']]));
    expect(await flushStaleNat(port, debt, () => new Map(), logger(lines))).toBe('kept');
    expect([...debt.owed('a').keys()]).toEqual([]);
    expect(lines).toEqual([]);
  });
});
