import { ofpmbt } from './constants.js';
import type { MeterBand, MeterMod } from './messages.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/** Meter bands (ofp_meter_band_*) and METER_MOD; bands are also used by METER_CONFIG replies. */

export function readMeterBands(r: OfReader): MeterBand[] {
  const bands: MeterBand[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const bandType = r.u16('band type');
    const len = r.u16('band length');
    if (len < 12) r.fail('bad-length', `meter band length ${len} is below 12`, at + 2);
    const body = r.sub(len - 4, `${r.context}/band`);
    const rate = body.u32('rate');
    const burstSize = body.u32('burst_size');
    if (bandType === ofpmbt.DROP && len === 16) {
      body.pad(4, 'drop band pad');
      bands.push({ kind: 'drop', rate, burstSize });
    } else if (bandType === ofpmbt.DSCP_REMARK && len === 16) {
      const precLevel = body.u8('prec_level');
      body.pad(3, 'dscp_remark band pad');
      bands.push({ kind: 'dscp_remark', rate, burstSize, precLevel });
    } else if (bandType === ofpmbt.EXPERIMENTER && len >= 16) {
      const experimenter = body.u32('experimenter');
      bands.push({ kind: 'experimenter', rate, burstSize, experimenter, data: body.bytes(body.remaining) });
    } else {
      bands.push({ kind: 'opaque', bandType, rate, burstSize, data: body.bytes(body.remaining) });
    }
  }
  return bands;
}

export function writeMeterBands(w: OfWriter, bands: MeterBand[]): void {
  for (const b of bands) {
    switch (b.kind) {
      case 'drop':
        w.u16(ofpmbt.DROP).u16(16).u32(b.rate).u32(b.burstSize).zeros(4);
        break;
      case 'dscp_remark':
        w.u16(ofpmbt.DSCP_REMARK).u16(16).u32(b.rate).u32(b.burstSize).u8(b.precLevel).zeros(3);
        break;
      case 'experimenter':
        w.u16(ofpmbt.EXPERIMENTER)
          .u16(16 + b.data.length)
          .u32(b.rate)
          .u32(b.burstSize);
        w.u32(b.experimenter).bytes(b.data);
        break;
      default:
        w.u16(b.bandType)
          .u16(12 + b.data.length)
          .u32(b.rate)
          .u32(b.burstSize)
          .bytes(b.data);
    }
  }
}

export function decodeMeterMod(r: OfReader, xid: number): MeterMod {
  const command = r.u16('command');
  const flags = r.u16('flags');
  const meterId = r.u32('meter_id');
  return { type: 'METER_MOD', xid, command, flags, meterId, bands: readMeterBands(r) };
}

export function encodeMeterMod(w: OfWriter, m: MeterMod): void {
  w.u16(m.command).u16(m.flags).u32(m.meterId);
  writeMeterBands(w, m.bands);
}
