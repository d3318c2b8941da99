import type { AsyncConfigMessage, FeaturesReply, OfpMessage, PortDesc } from '../codec/index.js';
import { OFPCML_NO_BUFFER, ofpcr, ofpet, ofppr, ofpr, ofprr } from '../codec/index.js';
import type { RoleName } from './events.js';
import { expectType } from './replies.js';
import type { SwitchSession } from './switch-session.js';

/** Our HELLO: OpenFlow 1.3 header and a version bitmap offering 1.3 only. */
export const helloMessage = (xid: number): OfpMessage => ({
  type: 'HELLO',
  xid,
  elements: [{ kind: 'versionbitmap', bitmaps: [1 << 4] }],
});

/** HELLO_FAILED/INCOMPATIBLE with the reason as ASCII, as the spec asks. */
export const helloFailed = (xid: number, reason: string): OfpMessage => ({
  type: 'ERROR',
  xid,
  errType: ofpet.HELLO_FAILED,
  code: 0,
  data: Buffer.from(reason.slice(0, 200), 'ascii'),
});

const bits = (...n: number[]) => n.reduce((a, b) => a | (1 << b), 0);

/**
 * What the switch sends us unasked: as master/equal every packet-in reason, port status and
 * flow-removed reason; as slave (second mask) port status only, like OpenFlow's default.
 */
export const asyncConfig = (xid: number): AsyncConfigMessage => ({
  type: 'SET_ASYNC',
  xid,
  packetInMask: [bits(ofpr.NO_MATCH, ofpr.ACTION, ofpr.INVALID_TTL), 0],
  portStatusMask: [bits(ofppr.ADD, ofppr.DELETE, ofppr.MODIFY), bits(ofppr.ADD, ofppr.DELETE, ofppr.MODIFY)],
  flowRemovedMask: [
    bits(ofprr.IDLE_TIMEOUT, ofprr.HARD_TIMEOUT, ofprr.DELETE, ofprr.GROUP_DELETE, ofprr.METER_DELETE),
    0,
  ],
});

/** Whole packets to the controller (no switch-side buffering), normal fragment handling. */
export const switchConfig = (xid: number): OfpMessage => ({
  type: 'SET_CONFIG',
  xid,
  flags: 0,
  missSendLen: OFPCML_NO_BUFFER,
});

const roleByName: Record<RoleName, number> = {
  nochange: ofpcr.NOCHANGE,
  equal: ofpcr.EQUAL,
  master: ofpcr.MASTER,
  slave: ofpcr.SLAVE,
};
const roleByNumber: RoleName[] = ['nochange', 'equal', 'master', 'slave'];

export const roleNumber = (r: RoleName): number => roleByName[r];
export const roleName = (n: number): RoleName => roleByNumber[n] ?? 'nochange';

/**
 * The handshake after HELLO: FEATURES, PORT_DESC, SET_CONFIG and SET_ASYNC pipelined, a barrier
 * confirming the last two. Rejects if any of it fails (the session then closes).
 */
export async function askSwitchFacts(
  s: Pick<SwitchSession, 'request' | 'multipart' | 'send' | 'barrier'>,
): Promise<{ features: FeaturesReply; ports: PortDesc[] }> {
  const features = s.request(
    { type: 'FEATURES_REQUEST', xid: 0 },
    expectType('FEATURES_REPLY', (m) => m),
  );
  const ports = s.multipart({ kind: 'PORT_DESC' });
  for (const msg of [switchConfig(0), asyncConfig(0)]) {
    const sent = s.send(msg);
    if (typeof sent !== 'number') sent.catch(() => undefined);
  }
  const confirmed = s.barrier();
  // If the session closes mid-handshake, the first await throws and the others would reject with
  // no one listening: mark them handled (they are still awaited below when all goes well).
  ports.catch(() => undefined);
  confirmed.catch(() => undefined);
  const reply = await features;
  const list: PortDesc[] = [];
  for (const body of await ports) if (body.kind === 'PORT_DESC') list.push(...body.ports);
  await confirmed;
  return { features: reply, ports: list };
}
