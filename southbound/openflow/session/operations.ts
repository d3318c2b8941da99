import type {
  DumpedFlow,
  FlowStats,
  GroupDesc,
  MeterConfig,
  MeterMod,
  MultipartRequestBody,
  OfpMessage,
} from '../codec/index.js';
import {
  type CtFlushFilter,
  ctFlush,
  ctFlushZone,
  decodeFlowDumpReply,
  ofpbct,
  ofpbf,
  ofpet,
  ofpg,
  ofpm,
  ofpmc,
  ofpp,
  ofptt,
} from '../codec/index.js';
import { encodedOnce } from './encoded-once.js';
import type { RoleName } from './events.js';
import { roleName, roleNumber } from './handshake.js';
import { expectType } from './replies.js';
import { OfpErrorReply } from './session-errors.js';
import type { SwitchSession } from './switch-session.js';

/**
 * Higher-level operations on a session: dumps, roles, atomic bundles, meter mods. Each is one round of
 * pipelined requests, so they cost a round trip or two whatever their size.
 */

const flowRequest = (tableId: number): MultipartRequestBody => ({
  kind: 'FLOW',
  tableId,
  outPort: ofpp.ANY,
  outGroup: ofpg.ANY,
  cookie: 0n,
  cookieMask: 0n,
  match: [],
});

/** Every flow of the switch (or of one table), decoded; multipart replies are reassembled. */
export async function dumpFlows(session: SwitchSession, tableId: number = ofptt.ALL): Promise<FlowStats[]> {
  const bodies = await session.multipart(flowRequest(tableId));
  const out: FlowStats[] = [];
  for (const b of bodies) if (b.kind === 'FLOW') for (const f of b.flows) out.push(f);
  return out;
}

/**
 * Every flow of the switch (or of one table) as compact records (codec/flow-dump.ts): table,
 * priority, cookie and the raw match and instructions, decoded on demand. Each reply is decoded
 * as it arrives; `keyOf` sets each record's key then (a reconciler's flow key, made from the match
 * bytes). A malformed reply closes the session and rejects, as with dumpFlows.
 */
export async function dumpFlowsKeyed(
  session: SwitchSession,
  keyOf?: (flow: DumpedFlow) => string,
  tableId: number = ofptt.ALL,
): Promise<DumpedFlow[]> {
  const out: DumpedFlow[] = [];
  await session.multipartRaw(flowRequest(tableId), (frame) => {
    decodeFlowDumpReply(frame, out, keyOf);
  });
  return out;
}

export async function dumpGroups(session: SwitchSession): Promise<GroupDesc[]> {
  const bodies = await session.multipart({ kind: 'GROUP_DESC' });
  const out: GroupDesc[] = [];
  for (const b of bodies) if (b.kind === 'GROUP_DESC') for (const g of b.groups) out.push(g);
  return out;
}

/** Every meter's configuration (flags and bands). */
export async function dumpMeters(session: SwitchSession): Promise<MeterConfig[]> {
  const bodies = await session.multipart({ kind: 'METER_CONFIG', meterId: ofpm.ALL });
  const out: MeterConfig[] = [];
  for (const b of bodies) if (b.kind === 'METER_CONFIG') for (const m of b.meters) out.push(m);
  return out;
}

const METER_COMMANDS: Record<number, string> = {
  [ofpmc.ADD]: 'add',
  [ofpmc.MODIFY]: 'modify',
  [ofpmc.DELETE]: 'delete',
};

/** METER_MODs refused: every ERROR the switch raised, each naming its meter and command. */
export class MeterModRejectedError extends Error {
  override name = 'MeterModRejectedError';
  /**
   * The meters the switch cannot take as asked (too many, a rate, burst or band it cannot do, no
   * meters at all). Not those refused for a stale view of its table (METER_EXISTS,
   * UNKNOWN_METER: a dump mends that) nor for who is asking (IS_SLAVE after a failover, EPERM).
   */
  readonly meterIds: number[];
  constructor(readonly errors: OfpErrorReply<OfpMessage>[]) {
    super(`switch refused ${errors.map(describeMeterError).join('; ')}`);
    this.meterIds = errors.flatMap((e) =>
      e.request?.type === 'METER_MOD' && isCapabilityError(e) ? [e.request.meterId] : [],
    );
  }
}

const CAPABILITY_CODES = new Set([
  'OFPMMFC_INVALID_METER',
  'OFPMMFC_BAD_FLAGS',
  'OFPMMFC_BAD_RATE',
  'OFPMMFC_BAD_BURST',
  'OFPMMFC_BAD_BAND',
  'OFPMMFC_BAD_BAND_VALUE',
  'OFPMMFC_OUT_OF_METERS',
  'OFPMMFC_OUT_OF_BANDS',
]);
/** What this switch cannot do whoever asks, whenever: worth remembering (refused-meters.ts). */
const isCapabilityError = (e: OfpErrorReply<OfpMessage>): boolean =>
  (e.errorType === ofpet.METER_MOD_FAILED && CAPABILITY_CODES.has(e.codeName)) ||
  (e.errorType === ofpet.BAD_REQUEST && e.codeName === 'OFPBRC_BAD_TYPE');

function describeMeterError(err: OfpErrorReply<OfpMessage>): string {
  const req = err.request;
  const what =
    req?.type === 'METER_MOD'
      ? `meter ${req.meterId} ${METER_COMMANDS[req.command] ?? `command ${req.command}`}`
      : 'a meter mod';
  return `${what}: ${err.typeName}/${err.codeName}`;
}

/**
 * Sends METER_MODs and resolves once a barrier after them returned. Not atomic: OVS refuses
 * METER_MOD inside a bundle, so what the switch accepted stays applied when it refused another;
 * rejects with MeterModRejectedError naming each refused meter.
 */
export async function applyMeterMods(session: SwitchSession, messages: MeterMod[]): Promise<void> {
  if (messages.length === 0) return;
  const errors = await session.sendConfirmed(messages);
  if (errors.length > 0) throw new MeterModRejectedError(errors);
}

/**
 * Drops every connection the switch tracks in each of `zones` (NXT_CT_FLUSH_ZONE), and resolves
 * once a barrier after them returned; rejects with the switch's first error when it refused one.
 */
export async function flushConntrackZones(session: SwitchSession, zones: readonly number[]): Promise<void> {
  if (zones.length === 0) return;
  const errors = await session.sendConfirmed(zones.map(ctFlushZone));
  if (errors.length > 0) throw errors[0];
}

/**
 * Drops the connections the switch tracks that match any of `filters` (NXT_CT_FLUSH, OVS 3.1+), and
 * resolves once a barrier after them returned; rejects with the switch's first error when it
 * refused one (an older OVS answers OFPBRC_BAD_SUBTYPE).
 */
export async function flushConntrack(
  session: SwitchSession,
  filters: readonly CtFlushFilter[],
): Promise<void> {
  if (filters.length === 0) return;
  const errors = await session.sendConfirmed(filters.map(ctFlush));
  if (errors.length > 0) throw errors[0];
}

/**
 * ROLE_REQUEST. Resolves with the role the switch granted. A STALE refusal (an older
 * generation_id than the switch has seen) rejects with the OfpErrorReply and is also emitted as a
 * `role` event with cause 'stale', so a controller learns it lost mastership either way.
 */
export async function setRole(
  session: SwitchSession,
  role: RoleName,
  generationId = 0n,
): Promise<{ role: RoleName; generationId: bigint }> {
  try {
    const reply = await session.request(
      { type: 'ROLE_REQUEST', xid: 0, role: roleNumber(role), generationId },
      expectType('ROLE_REPLY', (m) => ({ role: roleName(m.role), generationId: m.generationId })),
    );
    session.noteRole({ ...reply, cause: 'reply' });
    return reply;
  } catch (err) {
    if (err instanceof OfpErrorReply && err.errorType === ofpet.ROLE_REQUEST_FAILED && err.code === 0) {
      session.noteRole({ role, generationId, cause: 'stale' });
    }
    throw err;
  }
}

/** A bundle refused: every ERROR the switch raised, each with the message it refused. */
export class BundleRejectedError extends Error {
  override name = 'BundleRejectedError';
  constructor(
    readonly bundleId: number,
    readonly errors: OfpErrorReply<OfpMessage>[],
  ) {
    super(`bundle ${bundleId} rolled back: ${errors.map((e) => e.message).join('; ')}`);
  }
}

let nextBundleId = 1;

/**
 * Applies flow/group changes all-or-nothing with an ONF bundle: OPEN, ADD each message, a barrier
 * (so every per-message ERROR is in before we decide), then COMMIT, or DISCARD if anything was
 * refused. Rejects with BundleRejectedError; the switch's tables are then unchanged. A frozen
 * message is taken to be shared and immutable, and is encoded once for every switch it goes to.
 */
export async function applyAtomically(session: SwitchSession, messages: OfpMessage[]): Promise<void> {
  const bundleId = nextBundleId++ >>> 0;
  const flags = ofpbf.ATOMIC | ofpbf.ORDERED;
  const control = (ctrlType: number, reply: number) =>
    session.request(
      { type: 'BUNDLE_CONTROL', xid: 0, bundleId, ctrlType, flags, properties: [] },
      expectType('BUNDLE_CONTROL', (m) => {
        if (m.ctrlType !== reply)
          throw new Error(`bundle ${bundleId}: expected reply ${reply}, got ${m.ctrlType}`);
      }),
    );
  const opened = control(ofpbct.OPEN_REQUEST, ofpbct.OPEN_REPLY);
  opened.catch(() => undefined);
  // The inner message's xid must equal the outer one (OVS checks). A frozen message (one flow for
  // many switches) goes as the bytes it was encoded to once.
  const adds: OfpMessage[] = messages.map((message) => ({
    type: 'BUNDLE_ADD',
    xid: 0,
    bundleId,
    flags,
    message: encodedOnce(message),
    properties: [],
  }));
  let errors: OfpErrorReply<OfpMessage>[];
  try {
    errors = await session.sendConfirmed(adds, {
      withXid: (m, xid) =>
        m.type === 'BUNDLE_ADD' ? { ...m, xid, message: { ...m.message, xid } } : { ...m, xid },
    });
    await opened;
  } catch (err) {
    // Never leave a bundle open on the switch (e.g. a message that could not be encoded).
    await control(ofpbct.DISCARD_REQUEST, ofpbct.DISCARD_REPLY).catch(() => undefined);
    if (err instanceof OfpErrorReply) throw new BundleRejectedError(bundleId, [err]);
    throw err;
  }
  if (errors.length > 0) {
    await control(ofpbct.DISCARD_REQUEST, ofpbct.DISCARD_REPLY).catch(() => undefined);
    throw new BundleRejectedError(bundleId, errors.map(unwrapBundleAdd));
  }
  try {
    await control(ofpbct.COMMIT_REQUEST, ofpbct.COMMIT_REPLY);
  } catch (err) {
    if (!(err instanceof OfpErrorReply)) throw err;
    // A failed commit leaves nothing applied; OVS has dropped the bundle, a discard is harmless.
    await control(ofpbct.DISCARD_REQUEST, ofpbct.DISCARD_REPLY).catch(() => undefined);
    throw new BundleRejectedError(bundleId, [err]);
  }
}

/** Errors name the flow/group mod the bundle carried, not the wrapper. */
function unwrapBundleAdd(err: OfpErrorReply<OfpMessage>): OfpErrorReply<OfpMessage> {
  const req = err.request;
  if (req?.type !== 'BUNDLE_ADD') return err;
  return new OfpErrorReply(
    err.errorType,
    err.code,
    err.typeName,
    err.codeName,
    req.message.type === 'ENCODED' ? req.message.of : req.message,
    err.data,
    err.xid,
  );
}
