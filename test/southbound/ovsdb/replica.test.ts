import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbClient } from '../../../southbound/ovsdb/client.js';
import { JsonStreamSplitter } from '../../../southbound/ovsdb/framing.js';
import { Replica } from '../../../southbound/ovsdb/replica.js';
import { type Listener, listen } from '../../../southbound/ovsdb/transport.js';
import type { Row } from '../../../southbound/ovsdb/values.js';

// The incremental resync path (monitor_cond_since answering found=true), which the lab's
// ovsdb-server 3.1 never takes: a scripted server plays it, with the real vswitch schema.
const schemaJson = JSON.parse(readFileSync('/usr/share/openvswitch/vswitch.ovsschema', 'utf8'));
const U = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`;

type Script = (lastTxnId: string) => { reply: unknown; after?: object[] };
let script: Script;
let monitorId = '';
const seenTxnIds: string[] = [];
let dir: string;
let listener: Listener;

/** Answers get_schema and monitor_cond_since per `script`, writing reply + extra messages at once. */
function fakeServer(stream: Duplex): void {
  const splitter = new JsonStreamSplitter();
  stream.on('data', (chunk: Buffer) => {
    for (const msg of splitter.push(chunk) as { id: number; method: string; params: unknown[] }[]) {
      if (msg.method === 'get_schema')
        stream.write(JSON.stringify({ id: msg.id, result: schemaJson, error: null }));
      if (msg.method === 'monitor_cond_since') {
        const last = msg.params[3] as string;
        monitorId = msg.params[1] as string;
        seenTxnIds.push(last);
        const { reply, after = [] } = script(last);
        // Reply and a following update3 in one write: the replica must apply them in order.
        stream.write(
          JSON.stringify({ id: msg.id, result: reply, error: null }) +
            after.map((m) => JSON.stringify(m)).join(''),
        );
      }
    }
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-replica-'));
  listener = await listen(`punix:${join(dir, 'db.sock')}`, (s) => fakeServer(s));
});
afterAll(async () => {
  await listener.close();
  await rm(dir, { recursive: true, force: true });
});

describe('Replica resync with monitor_cond_since', () => {
  it('resumes from its last transaction id and applies only what changed', async () => {
    const replica = new Replica({ db: 'Open_vSwitch', tables: ['Port'] });
    const events: string[] = [];
    replica.on('added', (_t, r: Row) => events.push(`added ${r.name}`));
    replica.on('changed', (_t, r: Row, o: Row) => events.push(`changed ${o.name}->${r.name}`));
    replica.on('removed', (_t, r: Row) => events.push(`removed ${r.name}`));

    script = () => ({
      reply: [
        false,
        't1',
        { Port: { [U(1)]: { initial: { name: 'a' } }, [U(2)]: { initial: { name: 'b' } } } },
      ],
      after: [
        {
          method: 'update3',
          params: [monitorId, 't2', { Port: { [U(1)]: { modify: { name: 'a2' } } } }],
          id: null,
        },
      ],
    });
    let c = await OvsdbClient.connect(`unix:${join(dir, 'db.sock')}`);
    expect(await replica.attach(c)).toMatchObject({
      mode: 'monitor_cond_since',
      incremental: false,
      changes: 2,
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(['added a', 'added b', 'changed a->a2']);
    expect(replica.txnId).toBe('t2');
    c.close();

    events.length = 0;
    script = (last) => ({
      reply: [last === 't2', 't3', { Port: { [U(2)]: { delete: null }, [U(3)]: { insert: { name: 'c' } } } }],
    });
    c = await OvsdbClient.connect(`unix:${join(dir, 'db.sock')}`);
    expect(await replica.attach(c)).toMatchObject({ incremental: true, changes: 2 });
    expect(seenTxnIds).toEqual(['00000000-0000-0000-0000-000000000000', 't2']);
    expect(events.sort()).toEqual(['added c', 'removed b']);
    expect([...replica.table('Port').values()].map((r) => r.name).sort()).toEqual(['a2', 'c']);
    c.close();
  });

  it('falls back to a full snapshot when the server lost our transaction id', async () => {
    const replica = new Replica({ db: 'Open_vSwitch', tables: ['Port'] });
    script = () => ({
      reply: [
        false,
        't1',
        { Port: { [U(1)]: { initial: { name: 'a' } }, [U(2)]: { initial: { name: 'b' } } } },
      ],
    });
    let c = await OvsdbClient.connect(`unix:${join(dir, 'db.sock')}`);
    await replica.attach(c);
    c.close();
    const events: string[] = [];
    replica.on('batch', (changes) => events.push(...changes.map((x) => `${x.kind} ${x.row.name}`)));
    script = () => ({
      reply: [
        false,
        't9',
        { Port: { [U(2)]: { initial: { name: 'b' } }, [U(4)]: { initial: { name: 'd' } } } },
      ],
    });
    c = await OvsdbClient.connect(`unix:${join(dir, 'db.sock')}`);
    expect(await replica.attach(c)).toMatchObject({ incremental: false, changes: 2 });
    expect(events.sort()).toEqual(['added d', 'removed a']);
    c.close();
  });
});
