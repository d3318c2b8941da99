import { decodeBuckets } from './buckets.js';
import { readGroupType } from './msg-flow.js';
import { readMeterBands } from './msg-meter.js';
import type { GroupDesc, GroupStats, MeterConfig, MeterStats } from './multipart-types.js';
import type { OfReader } from './reader.js';

/** Group and meter multipart reply entries (variable-length records with their own length field). */

export function readGroupStats(r: OfReader): GroupStats[] {
  const out: GroupStats[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const len = r.u16('group stats length');
    if (len < 40 || (len - 40) % 16 !== 0)
      r.fail('bad-length', `group stats length ${len} is not 40 + 16n`, at);
    const e = r.sub(len - 2, 'MULTIPART_REPLY/group');
    e.pad(2);
    const groupId = e.u32('group_id');
    const refCount = e.u32('ref_count');
    e.pad(4);
    const packetCount = e.u64();
    const byteCount = e.u64();
    const durationSec = e.u32();
    const durationNsec = e.u32();
    const bucketStats: GroupStats['bucketStats'] = [];
    while (e.remaining > 0) bucketStats.push({ packetCount: e.u64(), byteCount: e.u64() });
    out.push({ groupId, refCount, packetCount, byteCount, durationSec, durationNsec, bucketStats });
  }
  return out;
}

export function readGroupDesc(r: OfReader): GroupDesc[] {
  const out: GroupDesc[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const len = r.u16('group desc length');
    if (len < 8) r.fail('bad-length', `group desc length ${len} is below 8`, at);
    const e = r.sub(len - 2, 'MULTIPART_REPLY/group_desc');
    const groupType = readGroupType(e);
    e.pad(1);
    const groupId = e.u32('group_id');
    out.push({ groupType, groupId, buckets: decodeBuckets(e) });
  }
  return out;
}

export function readMeterStats(r: OfReader): MeterStats[] {
  const out: MeterStats[] = [];
  while (r.remaining > 0) {
    const meterId = r.u32('meter_id');
    const at = r.offset;
    const len = r.u16('meter stats length');
    if (len < 40 || (len - 40) % 16 !== 0)
      r.fail('bad-length', `meter stats length ${len} is not 40 + 16n`, at);
    const e = r.sub(len - 6, 'MULTIPART_REPLY/meter');
    e.pad(6);
    const flowCount = e.u32('flow_count');
    const packetInCount = e.u64();
    const byteInCount = e.u64();
    const durationSec = e.u32();
    const durationNsec = e.u32();
    const bandStats: MeterStats['bandStats'] = [];
    while (e.remaining > 0) bandStats.push({ packetBandCount: e.u64(), byteBandCount: e.u64() });
    out.push({ meterId, flowCount, packetInCount, byteInCount, durationSec, durationNsec, bandStats });
  }
  return out;
}

export function readMeterConfig(r: OfReader): MeterConfig[] {
  const out: MeterConfig[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const len = r.u16('meter config length');
    if (len < 8) r.fail('bad-length', `meter config length ${len} is below 8`, at);
    const e = r.sub(len - 2, 'MULTIPART_REPLY/meter_config');
    const flags = e.u16('flags');
    const meterId = e.u32('meter_id');
    out.push({ flags, meterId, bands: readMeterBands(e) });
  }
  return out;
}
