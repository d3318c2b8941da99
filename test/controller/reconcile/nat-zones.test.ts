import { describe, expect, it } from 'vitest';
import type { DatapathPort } from '../../../controller/engine/datapath-port.js';
import { flushStaleNat } from '../../../controller/engine/nat-flush.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { natTranslations, natZonesTouched, staleNatZones } from '../../../controller/reconcile/nat-zones.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import { NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';

const routerCookie = cookieFor('router', 'router/r1');
const ct = (zone: number, commit: boolean, nat?: Action): Action => ({
  type: 'ct',
  flags: commit ? 1 : 0,
  zone,
  table: TABLE.L2_LOOKUP,
  alg: 0,
  actions: nat ? [nat] : [],
});
const snatCommit = (zone: number, ip = '192.0.2.1'): Action =>
  ct(zone, true, { type: 'nat', flags: NAT_SRC, ipv4Min: ip });
const flow = (action: Action, over: Partial<DesiredFlow> = {}): DesiredFlow => ({
  tableId: TABLE.L2_LOOKUP,
  priority: 95,
  cookie: routerCookie,
  match: [{ field: 'reg2', value: 1 }],
  instructions: [{ type: 'apply_actions', actions: [action] }],
  ...over,
});

describe('natZonesTouched', () => {
  it('names the zones of source-NAT commits the diff rewrites or removes, sorted, once each', () => {
    const diff = {
      modify: [flow(snatCommit(33000)), flow(snatCommit(32800))],
      remove: [flow(snatCommit(33000, '192.0.2.9')), flow(snatCommit(40000))],
    };
    expect(natZonesTouched(diff)).toEqual([32800, 33000, 40000]);
  });

  it('ignores lookups, commits without NAT, other tables and other apps', () => {
    const diff = {
      modify: [flow(ct(33000, false, { type: 'nat', flags: 0 })), flow(ct(33001, true))],
      remove: [
        flow(snatCommit(33002), { tableId: TABLE.L3_ROUTE }),
        flow(snatCommit(33003), { cookie: cookieFor('acl', 'sg/x') }),
      ],
    };
    expect(natZonesTouched(diff)).toEqual([]);
  });
});

describe('natTranslations / staleNatZones', () => {
  const before = natTranslations([
    flow(snatCommit(33000, '192.0.2.1')),
    flow(snatCommit(33001, '192.0.2.7')),
  ]);

  it("reads each zone's addresses from the router's commits only", () => {
    const read = natTranslations([
      flow(snatCommit(33000, '192.0.2.1')),
      flow(snatCommit(33000, '192.0.2.1')),
      flow(ct(33002, false, { type: 'nat', flags: 0 })),
      flow(snatCommit(33003), { cookie: cookieFor('acl', 'sg/x') }),
    ]);
    expect([...read].map(([z, ips]) => [z, [...ips]])).toEqual([[33000, ['192.0.2.1']]]);
  });

  it('a zone whose address changed or that lost its commits is stale; one whose address stays is not', () => {
    // 33000 moved to another address; 33001 keeps its own (a source network was detached, say).
    const after = natTranslations([
      flow(snatCommit(33000, '192.0.2.9')),
      flow(snatCommit(33001, '192.0.2.7')),
    ]);
    expect(staleNatZones(before, after)).toEqual([33000]);
    expect(staleNatZones(before, natTranslations([]))).toEqual([33000, 33001]);
    expect(staleNatZones(before, before)).toEqual([]);
    // A new SNAT makes nothing stale.
    expect(staleNatZones(natTranslations([]), before)).toEqual([]);
  });
});

describe('flushStaleNat', () => {
  const lines: Array<{ level: string; obj: unknown; msg: string }> = [];
  const log = {
    info: (obj: unknown, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: unknown, msg: string) => lines.push({ level: 'warn', obj, msg }),
  } as never;
  const port = (flush?: (zones: readonly number[]) => Promise<void>): DatapathPort =>
    ({ dpid: '00000000000000a1', ...(flush ? { flushConntrackZones: flush } : {}) }) as DatapathPort;

  it('flushes the zones on the switch and says so', async () => {
    lines.length = 0;
    const asked: number[][] = [];
    await flushStaleNat(
      port(async (z) => void asked.push([...z])),
      [33000],
      log,
    );
    expect(asked).toEqual([[33000]]);
    expect(lines).toEqual([
      {
        level: 'info',
        obj: { dpid: '00000000000000a1', zones: [33000] },
        msg: 'SNAT address changed or gone: its conntrack zones flushed',
      },
    ]);
  });

  it('asks nothing for no zone, or of a port without conntrack', async () => {
    lines.length = 0;
    const asked: number[][] = [];
    await flushStaleNat(
      port(async (z) => void asked.push([...z])),
      [],
      log,
    );
    await flushStaleNat(port(), [1], log);
    expect(asked).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('logs a refusal and goes on: the flows are applied either way', async () => {
    lines.length = 0;
    const refuse = async () => {
      throw new Error('OFPBRC_BAD_TYPE');
    };
    await expect(flushStaleNat(port(refuse), [33000], log)).resolves.toBeUndefined();
    expect(lines.map((l) => [l.level, (l.obj as { err?: string }).err])).toEqual([
      ['warn', 'OFPBRC_BAD_TYPE'],
    ]);
  });
});
