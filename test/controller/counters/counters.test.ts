import { describe, expect, it } from 'vitest';
import { compute as computePipeline } from '../../../apps/pipeline/compute.js';
import {
  dropCounters,
  objectCounters,
  objectSelector,
  portCounters,
  SG_DENIED_SELECTORS,
  TABLE_MISS_SELECTOR,
} from '../../../controller/counters/counters.js';
import {
  type CounterSwitch,
  readDrops,
  readObjectCounters,
} from '../../../controller/counters/read-counters.js';
import { cookieFor, objectCookie } from '../../../controller/pipeline/cookies.js';
import { TABLE, tableDecl } from '../../../controller/pipeline/tables.js';
import {
  type FlowStats,
  type MultipartRequestBody,
  OFPCML_NO_BUFFER,
  ofpp,
} from '../../../southbound/openflow/codec/index.js';

const stats = (
  tableId: number,
  cookie: bigint,
  packets: number,
  over: Partial<FlowStats> = {},
): FlowStats => ({
  tableId,
  durationSec: 1,
  durationNsec: 0,
  priority: 100,
  idleTimeout: 0,
  hardTimeout: 0,
  flags: 0,
  cookie,
  packetCount: BigInt(packets),
  byteCount: BigInt(packets * 100),
  match: [],
  instructions: [{ type: 'goto_table', tableId: 50 }],
  ...over,
});
const miss = (tableId: number, packets: number, goto?: number) =>
  stats(tableId, cookieFor('pipeline', `table-miss/${tableId}`), packets, {
    priority: 0,
    instructions: goto === undefined ? [] : [{ type: 'goto_table', tableId: goto }],
  });

describe('counter selectors', () => {
  it("select every app's flows of one object, and only the pipeline's table misses", () => {
    const s = objectSelector('endpoint/e1');
    for (const app of ['overlay', 'portSecurity', 'arpResponder', 'dhcp'] as const) {
      expect(objectCookie(app, 'endpoint', 'e1') & s.cookieMask).toBe(s.cookie);
    }
    expect(objectCookie('overlay', 'endpoint', 'e2') & s.cookieMask).not.toBe(s.cookie);
    expect(cookieFor('pipeline', 'table-miss/10') & TABLE_MISS_SELECTOR.cookieMask).toBe(
      TABLE_MISS_SELECTOR.cookie,
    );
    expect(cookieFor('acl', 'acl/a1') & TABLE_MISS_SELECTOR.cookieMask).not.toBe(TABLE_MISS_SELECTOR.cookie);
  });
});

describe('objectCounters', () => {
  it('names each flow by chassis, table and app, busiest first, and sums them', () => {
    const c = objectCounters(
      'endpoint',
      'e1',
      [
        {
          datapathId: 'dp1',
          chassis: 'hv1',
          flows: [stats(40, objectCookie('overlay', 'endpoint', 'e1'), 3)],
        },
        {
          datapathId: 'dp2',
          flows: [
            stats(60, objectCookie('overlay', 'endpoint', 'e1'), 7),
            stats(30, objectCookie('arpResponder', 'endpoint', 'e1'), 1),
          ],
        },
      ],
      [{ datapathId: 'dp3', error: 'timed out' }],
    );
    expect(c).toMatchObject({ kind: 'endpoint', id: 'e1', packets: 11, bytes: 1100 });
    expect(c.flows.map((f) => [f.chassis ?? f.datapathId, f.table, f.tableName, f.app, f.packets])).toEqual([
      ['dp2', 60, 'output', 'overlay', 7],
      ['hv1', 40, 'l2-lookup', 'overlay', 3],
      ['dp2', 30, 'arp-responder', 'arpResponder', 1],
    ]);
    expect(c.unreachable).toEqual([{ datapathId: 'dp3', error: 'timed out' }]);
    expect(c).not.toHaveProperty('port');
  });
});

describe('dropCounters', () => {
  it('counts only the table misses that drop, per switch and per table, with the reason', () => {
    const d = dropCounters(
      [
        {
          datapathId: 'dp1',
          chassis: 'hv1',
          flows: [miss(TABLE.PORT_SECURITY, 5), miss(TABLE.EGRESS_ACL, 9, 25), miss(TABLE.INGRESS_SG_CT, 2)],
        },
        { datapathId: 'dp2', chassis: 'hv2', flows: [miss(TABLE.INGRESS_SG_CT, 4), miss(TABLE.CLASSIFY, 0)] },
      ],
      [],
    );
    expect(d.packets).toBe(11);
    expect(d.tables.map((t) => [t.table, t.packets, t.reason])).toEqual([
      [56, 6, 'no ingress security-group rule admits it (default deny)'],
      [10, 5, "source MAC or address not the endpoint's own (port security)"],
      [0, 0, 'from a port that is no bound endpoint, tunnel or VLAN binding'],
    ]);
    expect(d.switches.map((s) => [s.chassis, s.packets])).toEqual([
      ['hv1', 7],
      ['hv2', 4],
    ]);
  });
});

describe('dropCounters over the table misses the pipeline app emits', () => {
  // Every table miss as apps/pipeline computes it, as the switch reports it: `packets` each.
  const misses = (packets: (tableId: number) => number): FlowStats[] =>
    computePipeline().flows.map((f) =>
      stats(f.tableId, f.cookie, packets(f.tableId), {
        priority: f.priority,
        match: [...f.match],
        instructions: [...f.instructions],
      }),
    );

  it('counts the l3-neighbor miss, which sends up to the controller, as a drop with its why', () => {
    const flows = misses((t) => (t === TABLE.L3_NEIGHBOR ? 6 : t === TABLE.L3_ROUTE ? 50 : 0));
    const neighborMiss = flows.find((f) => f.tableId === TABLE.L3_NEIGHBOR)!;
    // It forwards nothing: its only action is the whole packet up (for a host unreachable).
    expect(neighborMiss.instructions).toEqual([
      {
        type: 'apply_actions',
        actions: [{ type: 'output', port: ofpp.CONTROLLER, maxLen: OFPCML_NO_BUFFER }],
      },
    ]);
    const d = dropCounters([{ datapathId: 'dp1', chassis: 'hv1', flows }], []);
    const why = tableDecl(TABLE.L3_NEIGHBOR)?.miss;
    expect(why?.kind).toBe('controller');
    const reason = why?.kind === 'controller' ? why.why : '';
    expect(reason).toMatch(/no endpoint .* holds/);
    expect(d.tables.find((t) => t.table === TABLE.L3_NEIGHBOR)).toEqual({
      table: TABLE.L3_NEIGHBOR,
      tableName: 'l3-neighbor',
      reason,
      packets: 6,
      bytes: 600,
    });
    expect(d.switches[0]!.tables.find((t) => t.table === TABLE.L3_NEIGHBOR)).toMatchObject({
      packets: 6,
      reason,
    });
    // l3-route's miss goes on to l2-lookup: forwarded, not a drop, however busy.
    expect(d.tables.some((t) => t.table === TABLE.L3_ROUTE)).toBe(false);
    expect(d.packets).toBe(6);
  });

  it('counts exactly the tables whose miss forwards nothing, none that goes on to another', () => {
    const d = dropCounters([{ datapathId: 'dp1', flows: misses(() => 1) }], []);
    const forwarding = computePipeline()
      .flows.filter((f) => f.priority === 0 && f.instructions.some((i) => i.type === 'goto_table'))
      .map((f): number => f.tableId);
    const counted = d.tables.map((t) => t.table);
    expect(counted.filter((t) => forwarding.includes(t))).toEqual([]);
    const misses0 = computePipeline().flows.filter((f) => f.priority === 0);
    expect(counted.length + forwarding.length).toBe(misses0.length);
    expect(counted).toContain(TABLE.L3_NEIGHBOR);
    expect(d.tables.every((t) => t.reason !== 'no flow matches')).toBe(true);
  });
});

describe('portCounters', () => {
  it("reads OVS's rx as what the VM sent and tx as what it received", () => {
    const p = portCounters('dp1', 'hv1', {
      portNo: 5,
      rxPackets: 10n,
      txPackets: 20n,
      rxBytes: 1000n,
      txBytes: 2000n,
      rxDropped: 1n,
      txDropped: 2n,
      rxErrors: 0n,
      txErrors: 3n,
      rxFrameErr: 0n,
      rxOverErr: 0n,
      rxCrcErr: 0n,
      collisions: 0n,
      durationSec: 1,
      durationNsec: 0,
    });
    expect(p).toEqual({
      datapathId: 'dp1',
      chassis: 'hv1',
      ofport: 5,
      fromVm: { packets: 10, bytes: 1000, dropped: 1, errors: 0 },
      toVm: { packets: 20, bytes: 2000, dropped: 2, errors: 3 },
    });
  });
});

describe('reading from switches', () => {
  const fakeSwitch = (
    datapathId: string,
    chassis: string | undefined,
    answer: (b: MultipartRequestBody) => FlowStats[] | Error,
  ) => {
    const asked: MultipartRequestBody[] = [];
    const sw: CounterSwitch = {
      datapathId,
      ...(chassis ? { chassis } : {}),
      async multipart(body) {
        asked.push(body);
        const r = answer(body);
        if (r instanceof Error) throw r;
        if (body.kind === 'PORT_STATS') {
          return [{ kind: 'PORT_STATS', ports: [portCounterStats(body.portNo)] }];
        }
        return [{ kind: 'FLOW', flows: r }];
      },
    };
    return { sw, asked };
  };
  const portCounterStats = (portNo: number) => ({
    portNo,
    rxPackets: 1n,
    txPackets: 2n,
    rxBytes: 3n,
    txBytes: 4n,
    rxDropped: 0n,
    txDropped: 0n,
    rxErrors: 0n,
    txErrors: 0n,
    rxFrameErr: 0n,
    rxOverErr: 0n,
    rxCrcErr: 0n,
    collisions: 0n,
    durationSec: 0,
    durationNsec: 0,
  });

  it('asks every switch by cookie for each key, lists the silent ones, and reads the port on its chassis', async () => {
    const ep = objectCookie('overlay', 'endpoint', 'e1');
    const a = fakeSwitch('dp1', 'hv1', () => [stats(40, ep, 2)]);
    const b = fakeSwitch('dp2', 'hv2', (body) => (body.kind === 'FLOW' ? [stats(60, ep, 1)] : []));
    const c = fakeSwitch('dp3', 'hv3', () => new Error('switch session closed'));
    const out = await readObjectCounters(
      [a.sw, b.sw, c.sw],
      'endpoint',
      'e1',
      ['endpoint/e1', 'sg-port/e1'],
      {
        chassis: 'hv2',
        ofport: 7,
      },
    );
    expect(a.asked).toEqual([
      expect.objectContaining({ kind: 'FLOW', tableId: 255, ...objectSelector('endpoint/e1') }),
      expect.objectContaining({ kind: 'FLOW', tableId: 255, ...objectSelector('sg-port/e1') }),
    ]);
    expect(b.asked.map((x) => x.kind)).toEqual(['FLOW', 'FLOW', 'PORT_STATS']);
    expect(out.packets).toBe(2 * 2 + 1 * 2); // each fake answers both keys alike
    expect(out.port).toMatchObject({
      chassis: 'hv2',
      ofport: 7,
      fromVm: { packets: 1 },
      toVm: { packets: 2 },
    });
    expect(out.unreachable).toEqual([{ datapathId: 'dp3', chassis: 'hv3', error: 'switch session closed' }]);
  });

  it('reads every switch table misses for the drops, and the security-group tables for logged denials', async () => {
    const a = fakeSwitch('dp1', 'hv1', (body) =>
      body.kind === 'FLOW' && body.tableId === TABLE.INGRESS_SG_CT
        ? [stats(TABLE.INGRESS_SG_CT, objectCookie('acl', 'sg-denied', 'vm1'), 3, { priority: 1 })]
        : body.kind === 'FLOW' && body.tableId === TABLE.EGRESS_SG_CT
          ? []
          : [miss(TABLE.PORT_SECURITY, 4)],
    );
    const d = await readDrops([a.sw]);
    expect(a.asked).toEqual([
      expect.objectContaining({ kind: 'FLOW', ...TABLE_MISS_SELECTOR }),
      ...SG_DENIED_SELECTORS.map((s) => expect.objectContaining({ kind: 'FLOW', ...s })),
    ]);
    expect(SG_DENIED_SELECTORS.map((s) => s.tableId)).toEqual([TABLE.EGRESS_SG_CT, TABLE.INGRESS_SG_CT]);
    expect(d.tables.map((t) => [t.table, t.packets])).toEqual([
      [TABLE.PORT_SECURITY, 4],
      [TABLE.INGRESS_SG_CT, 3],
    ]);
  });
});
