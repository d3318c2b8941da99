import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../../controller/cli/command.js';
import { main } from '../../../../controller/cli/weft.js';
import { ofpCommand } from '../../../../southbound/openflow/cli/ofp-command.js';
import { ctFlush, ctFlushZone, encodeMessage } from '../../../../southbound/openflow/codec/index.js';
import { samples } from '../codec/message-samples.js';

function memoryIo(stdin: Buffer | string = ''): CliIo & { out: () => Buffer; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const input = new PassThrough();
  input.end(stdin);
  const out: Buffer[] = [];
  let err = '';
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c) => {
    err += c;
  });
  return { stdout, stderr, stdin: input, env: {}, out: () => Buffer.concat(out), err: () => err };
}

const stream = Buffer.concat(samples.map((s) => Buffer.from(encodeMessage(s.msg))));
const dir = mkdtempSync(join(tmpdir(), 'weft-ofp-cli-'));
const file = join(dir, 'stream.bin');
writeFileSync(file, stream);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('weft ofp', () => {
  it('decode prints one JSON line per message', async () => {
    const io = memoryIo();
    expect(await ofpCommand.run(['decode', file], io)).toBe(0);
    const lines = io.out().toString().trimEnd().split('\n');
    expect(lines).toHaveLength(samples.length);
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'HELLO', xid: 1 });
    const flowMod = lines.find((l) => l.includes('"FLOW_MOD"'))!;
    expect(JSON.parse(flowMod).cookie).toEqual({ $big: '0x1234' });
  });

  it('decode | encode reproduces the input byte for byte (file and stdin)', async () => {
    const dec = memoryIo();
    await ofpCommand.run(['decode', file], dec);
    const enc = memoryIo(dec.out());
    expect(await ofpCommand.run(['encode', '-'], enc)).toBe(0);
    expect(enc.out().equals(stream)).toBe(true);
    const dec2 = memoryIo(stream);
    expect(await ofpCommand.run(['decode', '-'], dec2)).toBe(0);
    expect(dec2.out().equals(dec.out())).toBe(true);
  });

  it('print shows flows and groups in ovs-ofctl syntax and one line for other messages', async () => {
    const io = memoryIo();
    expect(await ofpCommand.run(['print', file], io)).toBe(0);
    const text = io.out().toString();
    expect(text).toContain(
      'OFPT_FLOW_MOD (xid=0x11): ADD cookie=0x1234, table=20, priority=100,metadata=0x5,dl_dst=02:00:00:00:00:01 actions=set_field:10.0.0.2->tun_dst,set_field:0x64->tun_id,output:100',
    );
    expect(text).toMatch(
      /OFPT_GROUP_MOD \(xid=0xb\): ADD group_id=11,type=select,bucket=weight:50,actions=output:1/,
    );
    expect(text).toMatch(
      /OFPT_MULTIPART_REPLY \(xid=0x11\): FLOW flags=more flows=2\n cookie=0x1234, duration=12\.0+50*s, table=20, n_packets=7, n_bytes=700, priority=100,/,
    );
    expect(text).toContain('OFPT_ERROR (xid=0x3): OFPET_BAD_REQUEST/OFPBRC_BAD_TYPE data=0414000800000009');
    expect(text).toContain('OFPT_ROLE_REQUEST (xid=0x20): role=master generationId=0x7');
  });

  it('print names the conntrack flushes the reconciler sends, in ovs-ofctl ct-flush words', async () => {
    const flushes = Buffer.concat(
      [
        ctFlushZone(33000),
        ctFlush({ zone: 33000, ipProto: 6, orig: { dst: '192.0.2.1', dstPort: 8080 } }),
        ctFlush({ zone: 7, reply: { dst: '192.0.2.9' } }),
        ctFlush({ ipProto: 58, orig: { src: '2001:db8::1', icmpType: 128 } }),
        ctFlush({}),
      ].map((m, i) => Buffer.from(encodeMessage({ ...m, xid: i + 1 }))),
    );
    const io = memoryIo(flushes);
    expect(await ofpCommand.run(['print', '-'], io)).toBe(0);
    expect(io.out().toString().trimEnd().split('\n')).toEqual([
      'NXT_CT_FLUSH_ZONE (xid=0x1): zone_id=33000',
      "NXT_CT_FLUSH (xid=0x2): zone=33000 'ct_nw_dst=192.0.2.1,ct_tp_dst=8080,ct_nw_proto=6'",
      "NXT_CT_FLUSH (xid=0x3): zone=7 '' 'ct_nw_dst=192.0.2.9'",
      "NXT_CT_FLUSH (xid=0x4): every zone 'ct_ipv6_src=2001:db8::1,icmp_id=0,icmp_type=128,icmp_code=0,ct_nw_proto=58'",
      'NXT_CT_FLUSH (xid=0x5): every zone',
    ]);
  });

  it('reports a malformed message with its index and byte offset, exit 1', async () => {
    const bad = Buffer.from(stream);
    const second = Buffer.from(encodeMessage(samples[0]!.msg)).length;
    bad[second] = 0x00; // version 0 for the second message (a HELLO)
    const io = memoryIo(bad);
    expect(await ofpCommand.run(['decode', '-'], io)).toBe(1);
    expect(io.err()).toMatch(/message 1 \(at byte 8\): .*bad-version at byte 8/);
    const cut = memoryIo(stream.subarray(0, stream.length - 3));
    expect(await ofpCommand.run(['decode', '-'], cut)).toBe(1);
    expect(cut.err()).toMatch(/message \d+ \(at byte \d+\): input: message of \d+ bytes, only \d+ left/);
  });

  it('reports bad JSON with its line number, exit 1', async () => {
    const io = memoryIo('{"type":"BARRIER_REQUEST","xid":1}\n{"type":"FLOW_MOD"\n');
    expect(await ofpCommand.run(['encode', '-'], io)).toBe(1);
    expect(io.err()).toMatch(/^weft ofp: line 2: /);
    const io2 = memoryIo('{"xid":1}\n');
    expect(await ofpCommand.run(['encode', '-'], io2)).toBe(1);
    expect(io2.err()).toMatch(/line 1: not an OpenFlow message/);
  });

  it('reports a missing file, exit 1', async () => {
    const io = memoryIo();
    expect(await ofpCommand.run(['decode', join(dir, 'nope.bin')], io)).toBe(1);
    expect(io.err()).toMatch(/cannot read .*nope\.bin/);
  });

  it('is reachable through the weft entry point, with usage errors exiting 2', async () => {
    const io = memoryIo(stream);
    expect(await main(['ofp', 'print', '-'], io)).toBe(0);
    expect(io.out().toString()).toContain('OFPT_HELLO (xid=0x1):\nOFPT_HELLO (xid=0x2): versions=1,4\n');
    const help = memoryIo();
    expect(await main(['--help'], help)).toBe(0);
    expect(help.out().toString()).toMatch(/\n {2}ofp\s+decode, encode or print OpenFlow 1\.3 messages/);
    const bad = memoryIo();
    expect(await main(['ofp', 'frob', 'x'], bad)).toBe(2);
    expect(bad.err()).toContain("unknown action 'frob'");
    const none = memoryIo();
    expect(await main(['ofp', 'decode'], none)).toBe(2);
    expect(none.err()).toContain('decode needs a FILE or - for stdin');
  });
});
