import { type Action, decodeActions, encodeActions } from './actions.js';
import { put16, put32 } from './oxm.js';
import { countTlvs, type OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * The six OpenFlow 1.3 instructions (spec 7.2.4) plus experimenter instructions and unknown
 * types, which keep their bytes (`data` = everything after the type/length header; for
 * experimenter, everything after the experimenter id).
 */
export type Instruction =
  | { type: 'goto_table'; tableId: number }
  | { type: 'write_metadata'; metadata: bigint; mask: bigint }
  | { type: 'write_actions'; actions: Action[] }
  | { type: 'apply_actions'; actions: Action[] }
  | { type: 'clear_actions' }
  | { type: 'meter'; meterId: number }
  | { type: 'experimenter'; experimenter: number; data: Buffer }
  | { type: 'opaque'; instructionType: number; data: Buffer };

export const OFPIT = {
  GOTO_TABLE: 1,
  WRITE_METADATA: 2,
  WRITE_ACTIONS: 3,
  APPLY_ACTIONS: 4,
  CLEAR_ACTIONS: 5,
  METER: 6,
  EXPERIMENTER: 0xffff,
} as const;

export function encodeInstruction(w: OfWriter, ins: Instruction): void {
  const start = w.offset;
  switch (ins.type) {
    case 'goto_table': {
      w.ensure(8);
      const buf = w.buf;
      put16(buf, start, OFPIT.GOTO_TABLE);
      put16(buf, start + 2, 8);
      put32(buf, start + 4, (ins.tableId & 0xff) * 0x1000000);
      w.offset = start + 8;
      return;
    }
    case 'write_metadata':
      w.u16(OFPIT.WRITE_METADATA).u16(24).zeros(4).u64(ins.metadata).u64(ins.mask);
      return;
    case 'write_actions':
    case 'apply_actions': {
      w.ensure(8);
      const buf = w.buf;
      put16(buf, start, ins.type === 'apply_actions' ? OFPIT.APPLY_ACTIONS : OFPIT.WRITE_ACTIONS);
      put32(buf, start + 4, 0);
      w.offset = start + 8;
      encodeActions(w, ins.actions);
      put16(w.buf, start + 2, w.offset - start);
      return;
    }
    case 'clear_actions':
      w.u16(OFPIT.CLEAR_ACTIONS).u16(8).zeros(4);
      return;
    case 'meter':
      w.u16(OFPIT.METER).u16(8).u32(ins.meterId);
      return;
    case 'experimenter':
      w.u16(OFPIT.EXPERIMENTER)
        .u16(8 + ins.data.length)
        .u32(ins.experimenter)
        .bytes(ins.data);
      return;
    case 'opaque':
      w.u16(ins.instructionType)
        .u16(4 + ins.data.length)
        .bytes(ins.data);
      return;
  }
}

export function encodeInstructions(w: OfWriter, ins: Instruction[]): void {
  for (let i = 0; i < ins.length; i++) encodeInstruction(w, ins[i]!);
}

export function decodeInstruction(r: OfReader): Instruction {
  const start = r.offset;
  const type = r.u16('instruction type');
  const len = r.u16('instruction length');
  if (len < 8 || len % 8 !== 0) {
    r.fail('bad-length', `instruction type ${type} length ${len} is not a multiple of 8 (min 8)`, start + 2);
  }
  if (r.remaining < len - 4) {
    r.fail(
      'truncated',
      `instruction type ${type} length ${len} runs past the list (${r.remaining + 4} left)`,
      start + 2,
    );
  }
  switch (type) {
    case OFPIT.GOTO_TABLE: {
      if (len !== 8) fixedLength(r, start, len, 8, 'goto_table');
      const tableId = r.u8();
      r.pad(3, 'goto_table padding');
      return { type: 'goto_table', tableId };
    }
    case OFPIT.WRITE_METADATA: {
      if (len !== 24) fixedLength(r, start, len, 24, 'write_metadata');
      r.pad(4, 'write_metadata padding');
      const metadata = r.u64();
      return { type: 'write_metadata', metadata, mask: r.u64() };
    }
    case OFPIT.WRITE_ACTIONS:
    case OFPIT.APPLY_ACTIONS: {
      const name = type === OFPIT.APPLY_ACTIONS ? 'apply_actions' : 'write_actions';
      r.pad(4, `${name} padding`);
      const actions = decodeActions(r.subNamed(len - 8, name));
      return { type: name, actions };
    }
    case OFPIT.CLEAR_ACTIONS:
      if (len !== 8) fixedLength(r, start, len, 8, 'clear_actions');
      r.pad(4, 'clear_actions padding');
      return { type: 'clear_actions' };
    case OFPIT.METER:
      if (len !== 8) fixedLength(r, start, len, 8, 'meter');
      return { type: 'meter', meterId: r.u32() };
    case OFPIT.EXPERIMENTER: {
      const experimenter = r.u32('experimenter id');
      return { type: 'experimenter', experimenter, data: r.copy(len - 8, 'experimenter instruction') };
    }
    default:
      return { type: 'opaque', instructionType: type, data: r.copy(len - 4, 'instruction') };
  }
}

function fixedLength(r: OfReader, start: number, len: number, expected: number, name: string): never {
  return r.fail('bad-length', `${name} instruction length ${len}, expected ${expected}`, start + 2);
}

/** Decodes every instruction in r (bounded to exactly the instruction list). */
export function decodeInstructions(r: OfReader): Instruction[] {
  const out: Instruction[] = new Array(countTlvs(r));
  let n = 0;
  while (r.offset < r.end) out[n++] = decodeInstruction(r);
  if (n !== out.length) out.length = n;
  return out;
}
