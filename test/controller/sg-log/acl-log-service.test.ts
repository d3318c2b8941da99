import { describe, expect, it } from 'vitest';
import type { NetworkAcl } from '../../../controller/intent/model.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { SecurityGroupLog, type SgLogOutcome } from '../../../controller/sg-log/sg-log-service.js';
import { ipv4Frame } from '../router/frames.js';
import { context, DENIED, DPID, E1_MAC, E2_MAC, packetIn, type Sent, tcp } from './sg-log-fixture.js';

/**
 * Network ACL logging (apps/acl/network-acl.ts): the PACKET_IN of a logging ACL's flow, in the
 * egress or ingress ACL table, names the ACL by its cookie; the entry names the ACL, and its
 * verdict is the ACL's action.
 */
type Acl = Pick<NetworkAcl, 'id' | 'action' | 'log'>;
const ACLS: Acl[] = [
  { id: 'no-ssh', action: 'drop', log: true },
  { id: 'web', action: 'allow', log: true },
  { id: 'quiet', action: 'drop' },
];
const asked: string[] = [];
const log = (acls: Acl[] = ACLS) =>
  new SecurityGroupLog(
    {
      ...context(),
      aclsOf: (networkId) => {
        asked.push(networkId);
        return acls;
      },
    },
    () => 0,
    () => Date.UTC(2026, 11, 1),
  );
const cookie = (id: string) => cookieFor('acl', `acl/${id}`);

/** e1 (port 7) sends to e2 on port `dstPort`. */
const out = (dstPort: number) =>
  ipv4Frame({
    ethSrc: E1_MAC,
    ethDst: E2_MAC,
    ipSrc: '10.1.0.5',
    ipDst: '10.1.0.6',
    protocol: 6,
    payload: tcp(40000, dstPort),
  });

const handle = (frame: Buffer, s: Sent, l = log()): SgLogOutcome => l.handle(DPID, packetIn(frame, s));

describe('SecurityGroupLog: network ACL entries', () => {
  it('logs what a logging drop ACL dropped on the way out, naming the ACL', () => {
    const o = handle(out(22), { table: TABLE.EGRESS_ACL, cookie: cookie('no-ssh') });
    expect(o).toEqual({
      kind: 'logged',
      entry: {
        at: '2026-12-01T00:00:00.000Z',
        verdict: 'denied',
        direction: 'egress',
        chassis: 'hv1',
        endpointId: 'e1',
        tenantId: 't1',
        networkId: 'n1',
        protocol: 'tcp',
        src: '10.1.0.5',
        dst: '10.1.0.6',
        srcPort: 40000,
        dstPort: 22,
        networkAclId: 'no-ssh',
      },
    });
    expect(asked.at(-1)).toBe('n1');
  });

  it('logs what a logging allow ACL let through to e2 (ingress: its MAC is the destination)', () => {
    const o = handle(out(80), { table: TABLE.INGRESS_ACL, cookie: cookie('web'), port: 100 });
    expect(o).toMatchObject({
      kind: 'logged',
      entry: {
        verdict: 'accepted',
        direction: 'ingress',
        endpointId: 'e2',
        dstPort: 80,
        networkAclId: 'web',
      },
    });
    // An ACL entry names no security group rule, even with rules to ask.
    expect(o.kind === 'logged' && o.entry.securityGroupId).toBeUndefined();
  });

  it.each([
    ['an ACL that does not log', cookie('quiet')],
    ['an ACL of no network it came from', cookie('elsewhere')],
    ["a security group's cookie in an ACL table", DENIED()],
  ])('ignores %s (cookie mismatch), naming the network', (_what, c) => {
    const o = handle(out(22), { table: TABLE.EGRESS_ACL, cookie: c });
    expect(o).toMatchObject({ kind: 'ignored', cause: 'cookie-mismatch', endpointId: 'e1' });
    expect(o.kind === 'ignored' && o.reason).toMatch(/nor of a logging ACL of n1/);
  });

  it('ignores an ACL that stopped logging since the switch sent its copy', () => {
    const now = log([{ id: 'no-ssh', action: 'drop', log: false }]);
    expect(handle(out(22), { table: TABLE.EGRESS_ACL, cookie: cookie('no-ssh') }, now)).toMatchObject({
      kind: 'ignored',
      cause: 'cookie-mismatch',
    });
  });

  it('an ACL cookie in a security-group table is no ACL entry', () => {
    const o = handle(out(22), { table: TABLE.EGRESS_SG_CT, cookie: cookie('no-ssh') });
    expect(o).toMatchObject({ kind: 'ignored', cause: 'cookie-mismatch' });
  });
});
