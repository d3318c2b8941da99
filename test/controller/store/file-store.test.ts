import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore } from '../../../controller/store/file-store.js';
import { encodeRecord } from '../../../controller/store/framing.js';
import { openStore } from '../../../controller/store/open-store.js';
import { type Store, StoreError } from '../../../controller/store/store.js';
import { storeConformance } from './conformance.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'weft-filestore-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

storeConformance('file', {
  fresh: () => FileStore.open(tempDir()),
  reopen: async (s: Store) => {
    await s.close();
    return FileStore.open((s as FileStore).dir);
  },
});

const put = (key: string, value: unknown) => ({ type: 'put' as const, key, value: value as never });
const journalOf = (dir: string) =>
  join(
    dir,
    readdirSync(dir)
      .filter((n) => n.startsWith('journal-'))
      .sort()
      .pop()!,
  );

describe('FileStore on disk', () => {
  it('drops a torn tail (half a record) and keeps every whole record', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir);
    for (let i = 1; i <= 5; i++) await s.commit({ txs: [{ ops: [put(`k${i}`, i)] }] });
    await s.close();
    const journal = journalOf(dir);
    const whole = statSync(journal).size;
    const next = encodeRecord(
      Buffer.from(JSON.stringify({ changes: [{ revision: 6, ops: [put('k6', 6)] }] })),
    );
    appendFileSync(journal, next.subarray(0, next.length - 3));
    const r = await FileStore.open(dir);
    expect(await r.currentRevision()).toBe(5);
    expect((await r.snapshot()).entries.map((e) => e.key).sort()).toEqual(['k1', 'k2', 'k3', 'k4', 'k5']);
    expect(statSync(journal).size).toBe(whole);
    // Appends after the cut are clean: the next open sees them.
    expect((await r.commit({ txs: [{ ops: [put('k6', 'again')] }] })).revision).toBe(6);
    await r.close();
    const again = await FileStore.open(dir);
    expect((await again.snapshot()).entries.find((e) => e.key === 'k6')?.value).toBe('again');
    await again.close();
  });

  it('drops a last record whose bytes fail the crc, never loading garbage', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir);
    await s.commit({ txs: [{ ops: [put('a', 'good')] }] });
    await s.commit({ txs: [{ ops: [put('b', 'flipped')] }] });
    await s.close();
    const journal = journalOf(dir);
    const buf = readFileSync(journal);
    buf[buf.length - 4] = buf[buf.length - 4]! ^ 0xff;
    writeFileSync(journal, buf);
    const r = await FileStore.open(dir);
    expect(await r.currentRevision()).toBe(1);
    expect((await r.snapshot()).entries).toEqual([{ key: 'a', value: 'good', revision: 1 }]);
    await r.close();
  });

  it('drops trailing zero bytes (a preallocated, never-written tail)', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir);
    await s.commit({ txs: [{ ops: [put('a', 1)] }] });
    await s.close();
    appendFileSync(journalOf(dir), Buffer.alloc(4096));
    const r = await FileStore.open(dir);
    expect(await r.currentRevision()).toBe(1);
    await r.close();
  });

  it('refuses to load a whole record that is not ours (valid crc, not JSON) as corrupt', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir);
    await s.commit({ txs: [{ ops: [put('a', 1)] }] });
    await s.close();
    appendFileSync(journalOf(dir), encodeRecord(Buffer.from('not json')));
    const err = await FileStore.open(dir).catch((e: unknown) => e);
    expect((err as StoreError).code).toBe('corrupt');
    expect((err as Error).message).toMatch(
      /journal-000000000001.log: a record with a valid checksum is not JSON/,
    );
    // The failed open released the directory.
    expect(readdirSync(dir)).not.toContain('lock');
  });

  it('refuses a journal with a gap in revisions as corrupt', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir);
    await s.commit({ txs: [{ ops: [put('a', 1)] }] });
    await s.close();
    appendFileSync(
      journalOf(dir),
      encodeRecord(Buffer.from(JSON.stringify({ changes: [{ revision: 5, ops: [put('b', 1)] }] }))),
    );
    await expect(FileStore.open(dir)).rejects.toThrow(/jumps from revision 1 to 5/);
  });

  it('snapshots, rotates the journal, removes old files and reloads the same state', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir, { snapshotEvery: 10, retainChanges: 5 });
    for (let i = 1; i <= 25; i++) await s.commit({ txs: [{ ops: [put(`k${i % 7}`, i)] }] });
    const before = await s.snapshot();
    await s.close();
    const files = readdirSync(dir).sort();
    expect(files.filter((f) => f.startsWith('snapshot-'))).toEqual(['snapshot-000000000020.snap']);
    expect(files.filter((f) => f.startsWith('journal-'))).toEqual(['journal-000000000021.log']);
    const r = await FileStore.open(dir, { snapshotEvery: 10 });
    expect(await r.snapshot()).toEqual({ ...before, entries: expect.arrayContaining(before.entries) });
    expect((await r.snapshot()).entries).toHaveLength(7);
    expect((await r.readChanges(20)).map((c) => c.revision)).toEqual([21, 22, 23, 24, 25]);
    const err = await r.readChanges(3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('compacted');
    await r.close();
  });

  it('tells a subscriber that is older than the retained changes to re-snapshot', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir, { snapshotEvery: 5 });
    for (let i = 1; i <= 12; i++) await s.commit({ txs: [{ ops: [put('k', i)] }] });
    await s.close();
    const r = await FileStore.open(dir);
    const errors: StoreError[] = [];
    r.subscribe(
      1,
      () => {},
      (e) => errors.push(e),
    );
    await new Promise((res) => setTimeout(res, 20));
    expect(errors.map((e) => e.code)).toEqual(['compacted']);
    await r.close();
  });

  it('refuses a directory another live process holds', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'lock'), `${process.ppid}\n`);
    const err = await FileStore.open(dir).catch((e: unknown) => e);
    expect((err as StoreError).code).toBe('unavailable');
    expect((err as Error).message).toMatch(new RegExp(`in use by process ${process.ppid}`));
  });

  it('takes over the lock of a dead process (after kill -9)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'lock'), '999999999\n');
    const s = await FileStore.open(dir);
    expect(readFileSync(join(dir, 'lock'), 'utf8').trim()).toBe(String(process.pid));
    await s.close();
  });

  it('groups commits issued together into one journal record (one fsync)', async () => {
    const dir = tempDir();
    const s = await FileStore.open(dir);
    await Promise.all(Array.from({ length: 50 }, (_, i) => s.commit({ txs: [{ ops: [put(`k${i}`, i)] }] })));
    await s.close();
    const { decodeRecords } = await import('../../../controller/store/framing.js');
    const records = decodeRecords(readFileSync(journalOf(dir))).records;
    expect(records).toHaveLength(1);
    expect(JSON.parse(records[0]!.toString()).changes).toHaveLength(50);
  });
});

describe('openStore', () => {
  it('opens file: URLs', async () => {
    const dir = tempDir();
    const s = await openStore(`file:${dir}`);
    expect(s.backend).toBe('file');
    expect(s.description).toBe(`file:${dir}`);
    await s.close();
  });

  it('refuses unknown schemes and empty paths, naming the URL', async () => {
    await expect(openStore('mysql://x')).rejects.toThrow(/store URL 'mysql:\/\/x': unknown scheme/);
    await expect(openStore('file:')).rejects.toThrow(/file: needs a directory/);
    await expect(openStore('redis://u:secret@h:99999')).rejects.toThrow(
      /store URL 'redis:\/\/\*\*\*@h:99999'/,
    );
  });
});
