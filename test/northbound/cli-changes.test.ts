import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../controller/cli/weft.js';
import { IntentService } from '../../controller/intent/service.js';
import { FileStore } from '../../controller/store/file-store.js';
import { changesTable, objectsText } from '../../northbound/cli/changes-command.js';
import { memoryIo } from '../cli/memory-io.js';
import { ADMIN, type Harness, startHarness } from './harness.js';

let h: Harness;
let api: string;
beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 't1', { name: 't1' }, { actor: 'admin-0' });
  await h.intents.batch(
    Array.from({ length: 6 }, (_, i) => ({
      op: 'create' as const,
      kind: 'network' as const,
      id: `n${i}`,
      body: { tenantId: 't1', name: `n${i}` },
    })),
    { actor: 'tok-7', tenantScope: 't1' },
  );
  await h.intents.delete('network', 'n5', { actor: 'admin-0' });
});
afterAll(() => h.close());

const weft = async (argv: string[], token = ADMIN, signal?: AbortSignal) => {
  const io = { ...memoryIo({ WEFT_API: api, WEFT_TOKEN: token }), ...(signal ? { signal } : {}) };
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
};

/** The REVISION column of a printed table, its header first. */
const firstColumn = (out: string) =>
  out
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s+/)[0]);

describe('weft changes', () => {
  it('is listed in weft --help and has its own help', async () => {
    expect((await weft(['--help'])).out).toMatch(/\n {2}changes\s+what changed in the intent/);
    const help = await weft(['changes', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: weft changes \[options\]/);
  });

  it('prints the last changes, one revision a line, with time, token, tenant and objects', async () => {
    const r = await weft(['changes']);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^REVISION\s+AT\s+BY\s+TENANT\s+CHANGED$/);
    expect(lines[1]).toMatch(/^1\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+admin-0\s+-\s+write tenant\/t1$/);
    expect(lines[2]).toMatch(
      /^2\s+\S+Z\s+tok-7\s+t1\s+write network\/n0, write network\/n1, write network\/n2, write network\/n3 \(\+2 more\)$/,
    );
    expect(lines[3]).toMatch(/^3\s+\S+Z\s+admin-0\s+-\s+delete network\/n5$/);
    expect(lines).toHaveLength(4);
  });

  it('takes --since and --limit; an empty answer says where the intent is', async () => {
    const r = await weft(['changes', '--since', '1', '--limit', '1']);
    expect(firstColumn(r.out)).toEqual(['REVISION', '2']);
    const none = await weft(['changes', '--since', '3']);
    expect(none.out).toBe('no change after revision 3 (the intent is at revision 3)\n');
    const last = await weft(['changes', '--limit', '1']);
    expect(firstColumn(last.out)).toEqual(['REVISION', '3']);
  });

  it('--json prints the API answer', async () => {
    const r = await weft(['changes', '--since', '2', '--json']);
    expect(JSON.parse(r.out)).toMatchObject({
      revision: 3,
      changes: [{ revision: 3, by: 'admin-0', objects: [{ op: 'delete', kind: 'network', id: 'n5' }] }],
    });
  });

  it('--follow keeps printing changes as they commit', async () => {
    const stop = new AbortController();
    const io = { ...memoryIo({ WEFT_API: api, WEFT_TOKEN: ADMIN }), signal: stop.signal };
    const running = main(['changes', '--since', '3', '--follow'], io);
    await h.intents.put('tenant', 'later', { name: 'later' }, { actor: 'admin-1' });
    await expect
      .poll(() => io.out(), { timeout: 5_000 })
      .toMatch(/^4\s+\S+Z\s+admin-1\s+-\s+write tenant\/later$/m);
    await h.intents.put('tenant', 'later2', { name: 'later2' }, { actor: 'admin-1' });
    await expect.poll(() => io.out(), { timeout: 5_000 }).toMatch(/^5\s+.*write tenant\/later2$/m);
    expect(io.out().match(/REVISION/g)).toHaveLength(1); // one header
    stop.abort();
    await h.intents.put('tenant', 'release', { name: 'release' }); // ends the long poll in flight
    expect(await running).toBe(0);
  });

  it("shows a tenant token its tenant's changes only, and refuses a bad --since or --limit", async () => {
    const tenant = (await h.tenantAuth('t9')).authorization.slice('Bearer '.length); // t9, then its token
    const r = await weft(['changes'], tenant);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^\d+\s+\S+Z\s+admin-0\s+-\s+write tenant\/t9$/)]);
    for (const [flag, value] of [
      ['--since', '-1'],
      ['--limit', '0'],
      ['--limit', '1001'],
      ['--limit', 'x'],
    ]) {
      const u = await weft(['changes', `${flag}=${value}`]);
      expect(u.code).toBe(2);
      expect(u.err).toMatch(new RegExp(`${flag} must be a whole number`));
    }
  });

  it('--object KIND/ID answers who changed one object, looking back to the oldest change kept', async () => {
    const r = await weft(['changes', '--object', 'network/n5']);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines.slice(1).map((l) => l.replace(/\S+Z/, 'T'))).toEqual([
      expect.stringMatching(/^2\s+T\s+tok-7\s+t1\s+write network\/n5$/),
      expect.stringMatching(/^3\s+T\s+admin-0\s+-\s+delete network\/n5$/),
    ]);
    const kind = await weft(['changes', '--object', 'tenants', '--json']);
    const revisions = JSON.parse(kind.out).changes.map((c: { revision: number }) => c.revision);
    expect(revisions[0]).toBe(1); // tenants only: not the networks of revisions 2 and 3
    expect(revisions).not.toContain(2);
    expect(revisions).not.toContain(3);
    for (const bad of ['vm/1', 'endpoint/']) {
      const u = await weft(['changes', '--object', bad]);
      expect(u.code).toBe(2);
      expect(u.err).toMatch(/--object must be KIND or KIND\/ID, e\.g\. endpoint\/vm1/);
    }
  });

  it('--object on a store that dropped its oldest changes starts at the oldest it keeps', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-cli-changes-'));
    const store = await FileStore.open(dir, { retainChanges: 5 });
    const intents = await IntentService.open(store);
    const small = await startHarness({ intents });
    try {
      const at = await small.app.listen({ host: '127.0.0.1', port: 0 });
      for (let i = 0; i < 12; i++) await intents.put('tenant', `t${i % 2}`, { name: `v${i}` });
      const io = memoryIo({ WEFT_API: at, WEFT_TOKEN: ADMIN });
      expect(await main(['changes', '--object', 'tenant/t1'], io), io.err()).toBe(0);
      const revisions = io
        .out()
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => Number(l.split(/\s+/)[0]));
      expect(revisions.length).toBeGreaterThan(0);
      expect(revisions.every((r) => r % 2 === 0 && r > 5)).toBe(true); // t1's writes among those kept
      expect(revisions.at(-1)).toBe(12);
    } finally {
      await small.close();
      await intents.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows the first objects of a large change and counts the rest', () => {
    const row = {
      revision: 9,
      objects: Array.from({ length: 5 }, (_, i) => ({ op: 'write' as const, kind: 'endpoint', id: `e${i}` })),
    };
    expect(objectsText(row)).toBe(
      'write endpoint/e0, write endpoint/e1, write endpoint/e2, write endpoint/e3 (+1 more)',
    );
    expect(changesTable([row], false)).toMatch(/^9\s+-\s+-\s+-\s+write endpoint\/e0/);
  });
});
