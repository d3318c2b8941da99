import { describe, expect, it } from 'vitest';
import type { DatapathPort } from '../../../controller/engine/datapath-port.js';
import { flushStaleNat } from '../../../controller/engine/nat-flush.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { natZonesTouched } from '../../../controller/reconcile/nat-zones.js';
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

describe('flushStaleNat', () => {
  const lines: Array<{ level: string; obj: unknown; msg: string }> = [];
  const log = {
    info: (obj: unknown, msg: string) => lines.push({ level: 'info', obj, msg }),
    warn: (obj: unknown, msg: string) => lines.push({ level: 'warn', obj, msg }),
  } as never;
  const port = (flush?: (zones: readonly number[]) => Promise<void>): DatapathPort =>
    ({ dpid: '00000000000000a1', ...(flush ? { flushConntrackZones: flush } : {}) }) as DatapathPort;

  it('flushes the touched zones on the switch and says so', async () => {
    lines.length = 0;
    const asked: number[][] = [];
    await flushStaleNat(
      port(async (z) => void asked.push([...z])),
      { modify: [], remove: [flow(snatCommit(33000))] },
      log,
    );
    expect(asked).toEqual([[33000]]);
    expect(lines).toEqual([
      {
        level: 'info',
        obj: { dpid: '00000000000000a1', zones: [33000] },
        msg: 'SNAT changed: its conntrack zones flushed',
      },
    ]);
  });

  it('asks nothing when no SNAT flow changed, or of a port without conntrack', async () => {
    lines.length = 0;
    const asked: number[][] = [];
    await flushStaleNat(
      port(async (z) => void asked.push([...z])),
      { modify: [], remove: [] },
      log,
    );
    await flushStaleNat(port(), { modify: [flow(snatCommit(1))], remove: [] }, log);
    expect(asked).toEqual([]);
    expect(lines).toEqual([]);
  });

  it('logs a refusal and goes on: the flows are applied either way', async () => {
    lines.length = 0;
    const refuse = async () => {
      throw new Error('OFPBRC_BAD_TYPE');
    };
    await expect(
      flushStaleNat(port(refuse), { modify: [flow(snatCommit(33000))], remove: [] }, log),
    ).resolves.toBeUndefined();
    expect(lines.map((l) => [l.level, (l.obj as { err?: string }).err])).toEqual([
      ['warn', 'OFPBRC_BAD_TYPE'],
    ]);
  });
});
