import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countersText } from '../../northbound/cli/counters-command.js';
import type { ObjectCounters } from '../../northbound/counters-schema.js';
import { emptyStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/** The qos part of an endpoint's counters through the route and `weft counters`; the switch side is a fake. */
const answer = (id: string): ObjectCounters => ({
  kind: 'endpoint',
  id,
  packets: 0,
  bytes: 0,
  flows: [],
  port: {
    datapathId: '00000000000000a1',
    chassis: 'hv1',
    ofport: 5,
    fromVm: { packets: 1300, bytes: 1_900_000, dropped: 0, errors: 0 },
    toVm: { packets: 700, bytes: 50_000, dropped: 0, errors: 0 },
  },
  qos: {
    egress: {
      meterId: 32778,
      kbps: 10000,
      burstKb: 8000,
      packets: 1204,
      bytes: 1_800_000,
      droppedPackets: 83,
      droppedBytes: 124_000,
    },
    ingress: {
      meterId: 32779,
      kbps: 2000,
      burstKb: 1600,
      note: 'meter 32779 is not on hv1: the limit is not applied there (not yet, or the switch refused it: see the controller log)',
    },
  },
  unreachable: [],
});

let h: Harness;
let api: string;
beforeAll(async () => {
  h = await startHarness({
    statusProvider: {
      ...emptyStatus,
      counters: {
        endpoint: async (id) => answer(id),
        acl: async () => {
          throw new Error('not asked');
        },
        router: async () => {
          throw new Error('not asked');
        },
        drops: async () => {
          throw new Error('not asked');
        },
      },
    },
  });
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  await h.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
  await h.intents.put('endpoint', 'q1', { networkId: 'rn', ips: ['10.0.0.5'] });
});
afterAll(async () => {
  await h?.close();
});

describe('endpoint counters with rate limits', () => {
  it('serialize the qos part whole: counts of one direction, the note of the other', async () => {
    const res = await h.app.inject({ url: '/v1/endpoints/q1/counters', headers: h.admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(answer('q1'));
  });

  it('print one line per limit after the port lines: rate, burst, packets, dropped and the share', async () => {
    const r = await runWeft('counters endpoint q1', { WEFT_API: api, WEFT_TOKEN: ADMIN });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(
      [
        'endpoint q1 on hv1 port 5:',
        '  sent     1300 packets, 1900000 bytes (0 dropped)',
        '  received 700 packets, 50000 bytes (0 dropped)',
        '  policed egress at 10000 kbit/s (burst 8000 kbit): 1204 packets, 83 dropped (6.9%)',
        '  policed ingress at 2000 kbit/s (burst 1600 kbit): meter 32779 is not on hv1: the limit is not applied there (not yet, or the switch refused it: see the controller log)',
        '',
        'endpoint q1: 0 packets, 0 bytes in its 0 flows',
      ].join('\n'),
    );
    const json = JSON.parse(
      (await runWeft('counters endpoint q1 --json', { WEFT_API: api, WEFT_TOKEN: ADMIN })).out,
    );
    expect(json.qos.egress).toMatchObject({ packets: 1204, droppedPackets: 83 });
  });

  it('print no share for a meter nothing reached yet, and the limits of an endpoint whose switch is gone', () => {
    const idle = answer('q1');
    idle.qos = {
      egress: {
        meterId: 32778,
        kbps: 10000,
        burstKb: 8000,
        packets: 0,
        bytes: 0,
        droppedPackets: 0,
        droppedBytes: 0,
      },
    };
    expect(countersText(idle)).toContain(
      '  policed egress at 10000 kbit/s (burst 8000 kbit): 0 packets, 0 dropped\n',
    );

    const unbound = answer('q1');
    delete unbound.port;
    unbound.qos = {
      egress: { meterId: 32778, kbps: 10000, burstKb: 8000, note: 'hv1 is not connected: no meter counts' },
    };
    expect(countersText(unbound)).toMatch(
      /^endpoint q1: not bound to a connected switch\n {2}policed egress at 10000 kbit\/s \(burst 8000 kbit\): hv1 is not connected: no meter counts\n\n/,
    );
    const plain = answer('q1');
    delete plain.qos;
    expect(countersText(plain)).not.toContain('policed');
  });
});
