import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sessionPort } from '../../../../controller/engine/session-port.js';
import { ctFlush } from '../../../../southbound/openflow/codec/index.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import { defaultSessionOptions } from '../../../../southbound/openflow/session/options.js';
import { OfpErrorReply } from '../../../../southbound/openflow/session/session-errors.js';
import type { SwitchSession } from '../../../../southbound/openflow/session/switch-session.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';
import { logSink } from './fake-switch.js';
import { dpidOf, linkController, setController } from './lab-controller.js';

// NXT_CT_FLUSH against a real ovs-vswitchd 3.1 (userspace datapath): the switch forgets exactly the
// connections a filter names (a router's removed port forward, a lost SNAT address) and no others.
let ovs: OvsInstance;
let dir: string;
let server: OpenFlowServer;
let sw: SwitchSession;
const BR = 'br-ct';

/** A TCP SYN as `ovs-ofctl compose-packet` builds it, in hex. */
async function syn(src: string, dst: string, sport: number, dport: number): Promise<string> {
  const dump = await ovs.ofctl(
    'compose-packet',
    `eth_src=00:00:00:00:00:01,eth_dst=00:00:00:00:00:02,tcp,nw_src=${src},nw_dst=${dst},tp_src=${sport},tp_dst=${dport},tcp_flags=0x002`,
  );
  return dump
    .split('\n')
    .map((l) => l.slice(10, 58).replace(/[ -]/g, ''))
    .join('');
}

/** Commits one connection into `zone` with `nat` (the switch's conntrack holds it from then on). */
async function commit(zone: number, nat: string, src: string, dst: string, sport: number, dport: number) {
  const packet = await syn(src, dst, sport, dport);
  await ovs.ofctl(
    '-O',
    'OpenFlow13',
    'packet-out',
    ovs.mgmt(BR),
    'LOCAL',
    `ct(commit,zone=${zone},nat(${nat}))`,
    packet,
  );
}

/** The connections the datapath tracks, as "zone orig-src:sport>orig-dst:dport", sorted. */
async function tracked(): Promise<string[]> {
  const out = await ovs.appctl('dpctl/dump-conntrack');
  return [...out.matchAll(/orig=\(src=([^,]+),dst=([^,]+),sport=(\d+),dport=(\d+)\).*zone=(\d+)/g)]
    .map((m) => `${m[5]} ${m[1]}:${m[3]}>${m[2]}:${m[4]}`)
    .sort();
}

beforeAll(async () => {
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-of-ctflush-'));
  const path = join(dir, 'of.sock');
  server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path }], tls: null, session: { ...defaultSessionOptions } },
    pino({ level: 'info' }, logSink()),
  );
  const target = await linkController(ovs, path);
  await ovs.addBridge(BR);
  await setController(ovs, [BR], target);
  sw = await server.registry.waitFor(await dpidOf(ovs, BR), 20_000);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
});

// Two SNAT addresses and two port forwards in zone 5, and the same SNAT connection in zone 6.
beforeEach(async () => {
  await ovs.appctl('dpctl/flush-conntrack');
  await commit(5, 'src=10.0.0.1', '10.1.0.5', '8.8.8.8', 1111, 80);
  await commit(5, 'src=10.0.0.2', '10.1.0.6', '8.8.8.8', 2222, 80);
  await commit(5, 'dst=10.1.0.5:8000', '198.51.100.1', '10.0.0.1', 3333, 8080);
  await commit(5, 'dst=10.1.0.6:22', '198.51.100.1', '10.0.0.1', 3334, 2222);
  await commit(6, 'src=10.0.0.1', '10.1.0.5', '8.8.8.8', 1111, 80);
  expect(await tracked()).toHaveLength(5);
});

describe('NXT_CT_FLUSH on a real switch', () => {
  it("a forward's filter (zone, protocol, original destination and port) drops its connections only", async () => {
    await sessionPort(sw).flushConntrack!([
      { zone: 5, ipProto: 6, orig: { dst: '10.0.0.1', dstPort: 8080 } },
    ]);
    expect(await tracked()).toEqual([
      '5 10.1.0.5:1111>8.8.8.8:80',
      '5 10.1.0.6:2222>8.8.8.8:80',
      '5 198.51.100.1:3334>10.0.0.1:2222',
      '6 10.1.0.5:1111>8.8.8.8:80',
    ]);
  });

  it("a SNAT address's filter (answers to it) drops the connections translated to it, in that zone only", async () => {
    await sessionPort(sw).flushConntrack!([{ zone: 5, reply: { dst: '10.0.0.1' } }]);
    expect(await tracked()).toEqual([
      '5 10.1.0.6:2222>8.8.8.8:80',
      '5 198.51.100.1:3333>10.0.0.1:8080',
      '5 198.51.100.1:3334>10.0.0.1:2222',
      '6 10.1.0.5:1111>8.8.8.8:80',
    ]);
  });

  it('several filters in one call; a filter without a zone reaches every zone', async () => {
    await sessionPort(sw).flushConntrack!([
      { reply: { dst: '10.0.0.1' } },
      { zone: 5, ipProto: 6, orig: { dst: '10.0.0.1', dstPort: 2222 } },
    ]);
    expect(await tracked()).toEqual(['5 10.1.0.6:2222>8.8.8.8:80', '5 198.51.100.1:3333>10.0.0.1:8080']);
  });

  it('a filter that names nothing in the table drops nothing', async () => {
    await sessionPort(sw).flushConntrack!([{ zone: 7, reply: { dst: '10.0.0.1' } }]);
    expect(await tracked()).toHaveLength(5);
  });

  it('a malformed message is refused with an error naming it, nothing is dropped, the session serves on', async () => {
    const m = ctFlush({ zone: 5 });
    // A property whose length runs past the message's end (OVS 3.1 skips unknown ones).
    const bad = { ...m, data: Buffer.concat([m.data, Buffer.from('0002004000000000', 'hex')]) };
    const errors = await sw.sendConfirmed([bad]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(OfpErrorReply);
    // OVS's OFPBPC_BAD_LEN, which OpenFlow 1.3 numbers as a table-features length error.
    expect(errors[0]!.codeName).toBe('OFPTFFC_BAD_LEN');
    expect(await tracked()).toHaveLength(5);
    await sessionPort(sw).flushConntrack!([{ zone: 6 }]);
    expect(await tracked()).toHaveLength(4);
  });
});
