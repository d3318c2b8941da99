import { portMeters } from '../../apps/qos/compute.js';
import type { QosCounters } from '../../northbound/counters-schema.js';
import type { MeterStats, MultipartRequestBody } from '../../southbound/openflow/codec/index.js';
import { ofpm } from '../../southbound/openflow/codec/index.js';
import type { Qos } from '../intent/model.js';
import { type MeterDirection, meterPlace } from '../pipeline/meters.js';

/**
 * What an endpoint's rate limits did, from the counters of its meters (apps/qos): how many packets
 * reached each meter and how many its drop band dropped. Pure but for the request's shape: these
 * functions only name and pick what the switch said.
 */

/** A bound endpoint with limits: where its meters are (its port on its hypervisor) and what they hold. */
export interface LimitedPort {
  chassis: string;
  ofport: number;
  qos: Qos;
}

export interface PortLimit {
  direction: MeterDirection;
  meterId: number;
  kbps: number;
  burstKb: number;
}

/** The endpoint's meters, the very ones apps/qos makes, each with the direction it polices. */
export function portLimits(port: LimitedPort): PortLimit[] {
  return portMeters(port).map((m) => ({ direction: meterPlace(m.meterId)!.direction, ...m }));
}

/**
 * One METER stats request for all of them: the meter itself when one direction is limited, else
 * every meter of the switch (OpenFlow asks for one meter or all; the rest are filtered out).
 */
export function meterStatsRequest(limits: readonly PortLimit[]): MultipartRequestBody {
  return { kind: 'METER', meterId: limits.length === 1 ? limits[0]!.meterId : ofpm.ALL };
}

/** What the hypervisor's switch said: its meters' stats, or why there are none to read. */
export type MeterAnswer = { meters: readonly MeterStats[] } | { note: string };

/**
 * Each limit with its meter's counts. A meter the switch lacks is not an error: the limit was just
 * set (or the endpoint just bound) and the reconciler has not applied it yet, so its counts are
 * left out and a note says so; the same when the switch cannot be asked.
 */
export function qosCounters(limits: readonly PortLimit[], chassis: string, answer: MeterAnswer): QosCounters {
  const out: QosCounters = {};
  for (const l of limits) {
    const base = { meterId: l.meterId, kbps: l.kbps, burstKb: l.burstKb };
    if ('note' in answer) {
      out[l.direction] = { ...base, note: answer.note };
      continue;
    }
    const m = answer.meters.find((s) => s.meterId === l.meterId);
    if (!m) {
      out[l.direction] = {
        ...base,
        note: `meter ${l.meterId} is not on ${chassis}: the limit is not applied there (not yet, or the switch refused it: see the controller log)`,
      };
      continue;
    }
    // weft's meters have one band, the drop band (controller/pipeline/meters.ts): what it counts
    // is what was above the rate, past the burst, and dropped.
    const band = m.bandStats[0];
    out[l.direction] = {
      ...base,
      packets: Number(m.packetInCount),
      bytes: Number(m.byteInCount),
      droppedPackets: Number(band?.packetBandCount ?? 0n),
      droppedBytes: Number(band?.byteBandCount ?? 0n),
    };
  }
  return out;
}
