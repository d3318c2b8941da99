import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { meterStatsRequest, portLimits, qosCounters } from '../../../controller/counters/meter-counters.js';
import { type CounterSwitch, readObjectCounters } from '../../../controller/counters/read-counters.js';
import type { Qos } from '../../../controller/intent/model.js';
import { endpointMeterId } from '../../../controller/pipeline/meters.js';
import { ObjectCounters } from '../../../northbound/counters-schema.js';
import {
  type MeterStats,
  type MultipartReplyBody,
  type MultipartRequestBody,
  ofpet,
  ofpm,
} from '../../../southbound/openflow/codec/index.js';
import { OfpErrorReply, RequestTimeoutError } from '../../../southbound/openflow/session/session-errors.js';

/** An endpoint's meters read back from its hypervisor (controller/counters/meter-counters.ts). */
const OFPORT = 5;
const EGRESS = endpointMeterId(OFPORT, 'egress'); // 32778
const INGRESS = endpointMeterId(OFPORT, 'ingress'); // 32779

const meter = (meterId: number, packets: number, dropped: number): MeterStats => ({
  meterId,
  flowCount: 1,
  packetInCount: BigInt(packets),
  byteInCount: BigInt(packets * 1500),
  durationSec: 10,
  durationNsec: 0,
  bandStats: [{ packetBandCount: BigInt(dropped), byteBandCount: BigInt(dropped * 1500) }],
});

/** A switch that answers FLOW and PORT_STATS with nothing and METER with `meters` (or throws). */
const fakeSwitch = (chassis: string, meters: () => MeterStats[] | Error) => {
  const asked: MultipartRequestBody[] = [];
  const sw: CounterSwitch = {
    datapathId: `dp-${chassis}`,
    chassis,
    async multipart(body): Promise<MultipartReplyBody[]> {
      asked.push(body);
      if (body.kind === 'METER') {
        const r = meters();
        if (r instanceof Error) throw r;
        return [{ kind: 'METER', meters: r }];
      }
      return body.kind === 'FLOW' ? [{ kind: 'FLOW', flows: [] }] : [];
    },
  };
  return { sw, asked, meterAsks: () => asked.filter((b) => b.kind === 'METER') };
};

const read = (switches: CounterSwitch[], qos: Qos | undefined, chassis = 'hv1') =>
  readObjectCounters(switches, 'endpoint', 'e1', ['endpoint/e1'], { chassis, ofport: OFPORT, qos });

describe('portLimits and the request', () => {
  it('derives the meter ids apps/qos uses and fills in the default burst', () => {
    expect(
      portLimits({
        chassis: 'hv1',
        ofport: OFPORT,
        qos: { egress: { kbps: 10000 }, ingress: { kbps: 500, burstKb: 64 } },
      }),
    ).toEqual([
      { direction: 'egress', meterId: 32778, kbps: 10000, burstKb: 8000 },
      { direction: 'ingress', meterId: 32779, kbps: 500, burstKb: 64 },
    ]);
    expect(portLimits({ chassis: 'hv1', ofport: OFPORT, qos: {} })).toEqual([]);
  });

  it('asks for the one meter of a single limit, and for all meters when both directions are limited', () => {
    const both = portLimits({
      chassis: 'hv1',
      ofport: 3,
      qos: { egress: { kbps: 8 }, ingress: { kbps: 8 } },
    });
    expect(meterStatsRequest(both.slice(1))).toEqual({
      kind: 'METER',
      meterId: endpointMeterId(3, 'ingress'),
    });
    expect(meterStatsRequest(both)).toEqual({ kind: 'METER', meterId: ofpm.ALL });
  });
});

describe('qosCounters', () => {
  const limits = portLimits({
    chassis: 'hv1',
    ofport: OFPORT,
    qos: { egress: { kbps: 10000, burstKb: 8000 } },
  });

  it('reads what reached the meter and what its drop band dropped, ignoring other meters', () => {
    expect(
      qosCounters(limits, 'hv1', { meters: [meter(INGRESS + 2, 9, 9), meter(EGRESS, 1204, 83)] }),
    ).toEqual({
      egress: {
        meterId: EGRESS,
        kbps: 10000,
        burstKb: 8000,
        packets: 1204,
        bytes: 1204 * 1500,
        droppedPackets: 83,
        droppedBytes: 83 * 1500,
      },
    });
  });

  it('leaves out the counts of a meter the switch lacks, saying it is not applied yet', () => {
    const q = qosCounters(limits, 'hv1', { meters: [] });
    expect(q.egress).toEqual({
      meterId: EGRESS,
      kbps: 10000,
      burstKb: 8000,
      note: `meter ${EGRESS} is not on hv1: the limit is not applied there (not yet, or the switch refused it: see the controller log)`,
    });
    expect(q).not.toHaveProperty('ingress');
  });
});

describe('reading the meters of an endpoint', () => {
  it('asks its own hypervisor only, with one METER request, and reports both directions', async () => {
    const hv1 = fakeSwitch('hv1', () => [meter(EGRESS, 1204, 83), meter(INGRESS, 50, 0), meter(70000, 1, 1)]);
    const hv2 = fakeSwitch('hv2', () => [meter(EGRESS, 999, 999)]);
    const c = await read([hv1.sw, hv2.sw], {
      egress: { kbps: 10000, burstKb: 8000 },
      ingress: { kbps: 2000 },
    });
    expect(hv1.meterAsks()).toEqual([{ kind: 'METER', meterId: ofpm.ALL }]);
    expect(hv2.meterAsks()).toEqual([]);
    expect(c.qos).toEqual({
      egress: expect.objectContaining({ meterId: EGRESS, packets: 1204, droppedPackets: 83 }),
      ingress: expect.objectContaining({
        meterId: INGRESS,
        kbps: 2000,
        burstKb: 1600,
        packets: 50,
        droppedPackets: 0,
      }),
    });
    expect(Value.Check(ObjectCounters, c)).toBe(true);
  });

  it('has no qos part for an endpoint without limits, and asks no meter', async () => {
    const hv1 = fakeSwitch('hv1', () => []);
    expect(await read([hv1.sw], undefined)).not.toHaveProperty('qos');
    expect(await read([hv1.sw], {})).not.toHaveProperty('qos');
    expect(hv1.meterAsks()).toEqual([]);
  });

  it("takes OVS refusing one meter's stats (not applied yet) as a note, not an error", async () => {
    const unknown = new OfpErrorReply(
      ofpet.METER_MOD_FAILED,
      3,
      'OFPET_METER_MOD_FAILED',
      'OFPMMFC_UNKNOWN_METER',
      undefined,
      Buffer.alloc(0),
      7,
    );
    const hv1 = fakeSwitch('hv1', () => unknown);
    const c = await read([hv1.sw], { egress: { kbps: 10000 } });
    expect(hv1.meterAsks()).toEqual([{ kind: 'METER', meterId: EGRESS }]);
    expect(c.qos?.egress).not.toHaveProperty('packets');
    expect(c.qos?.egress?.note).toContain('is not on hv1:');
    expect(c.unreachable).toEqual([]);
    expect(Value.Check(ObjectCounters, c)).toBe(true);
  });

  it('notes a silent or disconnected hypervisor in each direction, and still answers the flows', async () => {
    const hv1 = fakeSwitch('hv1', () => new RequestTimeoutError('MULTIPART_REQUEST', 9, 3000));
    const silent = await read([hv1.sw], { egress: { kbps: 100 }, ingress: { kbps: 100 } });
    expect(silent.qos?.egress?.note).toMatch(/^no answer from hv1: no answer to MULTIPART_REQUEST/);
    expect(silent.qos?.ingress?.note).toBe(silent.qos?.egress?.note);
    expect(silent.flows).toEqual([]);

    const gone = await read([hv1.sw], { ingress: { kbps: 100 } }, 'hv9');
    expect(gone.qos).toEqual({
      ingress: { meterId: INGRESS, kbps: 100, burstKb: 80, note: 'hv9 is not connected: no meter counts' },
    });
    expect(gone).not.toHaveProperty('port');
  });
});
