import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../controller/cli/weft.js';
import { MAX_BATCH_OPS } from '../../controller/intent/batch.js';
import {
  checkIdsForBatches,
  chunksOf,
  inFile,
  OPS_PER_BATCH,
} from '../../northbound/cli/apply-in-batches.js';
import { memoryIo } from '../cli/memory-io.js';
import { ADMIN, type Harness, startHarness } from './harness.js';

describe('cutting a file into batches', () => {
  const ops = Array.from({ length: 25 }, (_, i) => ({
    op: 'replace',
    kind: 'tenant',
    id: `t${i}`,
    body: { name: 'x' },
  }));

  it('keeps the file order, at most maxOps a batch, counting items from 0', () => {
    const chunks = chunksOf(ops, 10);
    expect(chunks.map((c) => [c.from, c.ops.length])).toEqual([
      [0, 10],
      [10, 10],
      [20, 5],
    ]);
    expect(chunks.flatMap((c) => c.ops)).toEqual(ops);
  });

  it('cuts by size too; an op larger than the budget goes alone', () => {
    const size = JSON.stringify(ops[0]).length + 1;
    expect(chunksOf(ops.slice(0, 5), 100, 2 * size).map((c) => c.ops.length)).toEqual([2, 2, 1]);
    const big = { op: 'replace', kind: 'tenant', id: 'big', body: { name: 'y'.repeat(3 * size) } };
    expect(chunksOf([ops[0]!, big, ops[1]!], 100, 2 * size).map((c) => c.from)).toEqual([0, 1, 2]);
  });

  it('holds what one REST batch holds', () => {
    expect(OPS_PER_BATCH).toBe(MAX_BATCH_OPS);
  });

  it("renames a batch's ops[N] to the file's item, in the message and the field", () => {
    expect(
      inFile("ops[7] (endpoint 'e7'): ips[0]: bad [ops[7].body.ips[0]] (HTTP 400 invalid)", 10_000),
    ).toBe("ops[10007] (endpoint 'e7'): ips[0]: bad [ops[10007].body.ips[0]] (HTTP 400 invalid)");
  });

  it('wants an id on every create or replace (a rerun must not create copies)', () => {
    expect(() => checkIdsForBatches([{ op: 'delete', kind: 'tenant', id: 'a' }, { kind: 'tenant' }])).toThrow(
      /--in-batches needs an id on every item \(item 1 has none/,
    );
  });
});

describe('weft apply of a file larger than one batch', () => {
  let h: Harness;
  let api: string;
  let dir: string;
  const ENDPOINTS = OPS_PER_BATCH + 1;
  beforeAll(async () => {
    h = await startHarness();
    api = await h.app.listen({ host: '127.0.0.1', port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'weft-apply-batches-'));
  });
  afterAll(async () => {
    await h.close();
    await rm(dir, { recursive: true, force: true });
  });

  const run = async (argv: string[]) => {
    const io = memoryIo({ WEFT_API: api, WEFT_TOKEN: ADMIN });
    const code = await main(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  /** A tenant, its network, then `ENDPOINTS` endpoints (10,003 items); `last` replaces the final one. */
  const bigFile = async (name: string, tenant: string, last?: string) => {
    const lines = [
      `- {kind: tenant, id: ${tenant}, name: ${tenant}}`,
      `- {kind: network, id: ${tenant}-n, tenantId: ${tenant}, name: n, subnets: [10.0.0.0/16]}`,
    ];
    for (let k = 0; k < ENDPOINTS; k++)
      lines.push(
        `- {kind: endpoint, id: ${tenant}-e${k}, networkId: ${tenant}-n, ips: [10.0.${1 + (k >> 8)}.${k & 255}]}`,
      );
    if (last !== undefined) lines[lines.length - 1] = last;
    const path = join(dir, name);
    await writeFile(path, `${lines.join('\n')}\n`);
    return path;
  };

  it('refuses it whole without --in-batches, saying how, writing nothing', async () => {
    const path = await bigFile('plain.yaml', 'plain');
    const rev = h.intents.revision();
    const r = await run(['apply', '-f', path]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `weft apply: ${path}: 10003 operations; one batch holds at most 10000: send it as consecutive batches with --in-batches, or apply it tenant by tenant (weft export --tenant ID); nothing was applied\n`,
    );
    expect(h.intents.revision()).toBe(rev);
  }, 30_000);

  it('sends it as consecutive atomic batches with --in-batches; again, it changes nothing', async () => {
    const path = await bigFile('big.yaml', 'big');
    const rev = h.intents.revision();
    const r = await run(['apply', '-f', path, '--in-batches']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe(
      `weft apply: batch 1 of 2 (items 0-9999): applied at revision ${rev + 1}\nweft apply: batch 2 of 2 (items 10000-10002): applied at revision ${rev + 2}\n`,
    );
    expect(r.out).toMatch(/^endpoint\s+10001\s+0\s+0\s+0$/m);
    expect(r.out).toMatch(new RegExp(`applied 10003 operations in 2 batches at revision ${rev + 2}\\n$`));
    expect(h.intents.usage('big')).toMatchObject({ networks: 1, endpoints: ENDPOINTS });
    const again = await run(['apply', '-f', path, '--in-batches']);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/nothing to change: 10003 operations in 2 batches match the intent/);
    expect(h.intents.revision()).toBe(rev + 2);
  }, 60_000);

  it('stops at a refused batch naming the file item, keeps the batches before it, and a rerun goes on', async () => {
    const bad = '- {kind: endpoint, id: cut-bad, networkId: cut-n, ips: [192.168.1.1]}';
    const path = await bigFile('cut.yaml', 'cut', bad);
    const r = await run(['apply', '-f', path, '--in-batches']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^weft apply: batch 1 of 2 \(items 0-9999\): applied at revision \d+\n/);
    expect(r.err).toMatch(
      /weft apply: batch 2 of 2 \(items 10000-10002\): ops\[10002\] \(endpoint 'cut-bad'\): .*192\.168\.1\.1.*\[ops\[10002\]\.body\.ips\[0\]\] \(HTTP 409 conflict\); batch 1 \(items 0-9999\) applied, nothing from item 10000 on\. Applying .*cut\.yaml again goes on from there\n$/,
    );
    expect(h.intents.find('endpoint', 'cut-e9997')).toBeDefined(); // item 9999
    expect(h.intents.find('endpoint', 'cut-e9998')).toBeUndefined(); // item 10000
    const fixed = await bigFile('cut.yaml', 'cut');
    const rerun = await run(['apply', '-f', fixed, '--in-batches']);
    expect(rerun.code, rerun.err).toBe(0);
    expect(rerun.err).toMatch(/^weft apply: batch 1 of 2 \(items 0-9999\): nothing to change\n/);
    expect(h.intents.usage('cut')).toMatchObject({ endpoints: ENDPOINTS });
  }, 60_000);

  it('with --json prints each batch answer; a retry with the same idempotency key replays them', async () => {
    const path = join(dir, 'keyed.yaml');
    await writeFile(path, '- {kind: tenant, id: k, name: k}\n- {kind: tenant, id: k2, name: k2}\n');
    const argv = ['apply', '-f', path, '--in-batches', '--json', '--idempotency-key', 'import-7'];
    const first = await run(argv);
    expect(first.code, first.err).toBe(0);
    const answer = JSON.parse(first.out) as {
      batches: Array<{ from: number; committed: boolean; replayed: boolean }>;
    };
    expect(answer.batches).toHaveLength(1);
    expect(answer.batches[0]).toMatchObject({ from: 0, committed: true, replayed: false });
    const rev = h.intents.revision();
    await h.intents.put('tenant', 'k', { name: 'renamed' });
    const retry = JSON.parse((await run(argv)).out) as typeof answer;
    expect(retry.batches[0]).toMatchObject({ from: 0, replayed: true });
    expect(h.intents.get('tenant', 'k').name).toBe('renamed'); // replayed, not written again
    expect(h.intents.revision()).toBe(rev + 1);
  });

  it('refuses --in-batches with --prune, with --dry-run, and an item without an id, writing nothing', async () => {
    const path = join(dir, 'small.yaml');
    await writeFile(path, '- {kind: tenant, id: s, name: s}\n- {kind: tenant, name: nameless}\n');
    const rev = h.intents.revision();
    for (const [flags, message] of [
      [['--prune'], /--in-batches and --prune exclude each other/],
      [['--dry-run'], /--in-batches and --dry-run exclude each other/],
      [[], /--in-batches needs an id on every item \(item 1 has none/],
    ] as const) {
      const r = await run(['apply', '-f', path, '--in-batches', ...flags]);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
    }
    expect(h.intents.revision()).toBe(rev);
  });
});
