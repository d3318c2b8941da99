import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../controller/cli/weft.js';
import { memoryIo } from '../cli/memory-io.js';
import { seedEverything } from '../controller/intent/export-fixture.js';
import { ADMIN, type Harness, startHarness } from './harness.js';

let src: Harness;
let dst: Harness;
const api: Record<string, string> = {};
let dir: string;
beforeAll(async () => {
  src = await startHarness();
  dst = await startHarness();
  api.src = await src.app.listen({ host: '127.0.0.1', port: 0 });
  api.dst = await dst.app.listen({ host: '127.0.0.1', port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'weft-export-'));
  await seedEverything(src.intents);
});
afterAll(async () => {
  await src.close();
  await dst.close();
  await rm(dir, { recursive: true, force: true });
});

const weft = async (at: 'src' | 'dst', argv: string[], token = ADMIN) => {
  const io = memoryIo({ WEFT_API: api[at], WEFT_TOKEN: token });
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
};

describe('weft export', () => {
  it('is listed in weft --help and has its own help', async () => {
    expect((await weft('src', ['--help'])).out).toMatch(/\n {2}export\s+print the intent as a file/);
    const help = await weft('src', ['export', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: weft export \[options\]/);
  });

  it('prints YAML that weft apply turns into the same intent on another controller', async () => {
    const r = await weft('src', ['export']);
    expect(r.code, r.err).toBe(0);
    const [first, second] = r.out.split('\n');
    expect(first).toMatch(
      new RegExp(
        `^# weft export at revision ${src.intents.revision()}, \\S+Z: 2 tenant, 2 chassis, 4 network, 3 security-group, 1 acl, 5 endpoint, 1 vlan-binding, 1 router, 1 mirror$`,
      ),
    );
    expect(second).toMatch(/^# weft apply -f FILE recreates it/);
    const items = parse(r.out) as Array<Record<string, unknown>>;
    expect(items[0]).toEqual({ kind: 'tenant', id: 'blue', name: 'blue' });
    expect(items.find((i) => i.id === 'vm')).toMatchObject({
      kind: 'endpoint',
      networkId: 'web',
      ips: ['10.0.0.5', 'fd00:1::5'],
    });
    const file = join(dir, 'all.yaml');
    await writeFile(file, r.out);
    const applied = await weft('dst', ['apply', '-f', file]);
    expect(applied.code, applied.err).toBe(0);
    expect(applied.out).toMatch(/^securityGroup\s+2\s+1\s+0\s+0$/m); // z twice: created, then whole
    const back = await weft('dst', ['export']);
    // The same file but for the revision and time in its first line.
    expect(back.out.split('\n').slice(1)).toEqual(r.out.split('\n').slice(1));
    const again = await weft('src', ['apply', '-f', file]);
    expect(again.out).toMatch(/nothing to change: 20 operations match the intent/);
  });

  it('--json prints the API answer; -o writes the file; --tenant narrows it', async () => {
    const json = await weft('src', ['export', '--json', '--tenant', 'blue']);
    expect(JSON.parse(json.out)).toEqual({
      ops: [
        { op: 'replace', kind: 'tenant', id: 'blue', body: { name: 'blue' } },
        expect.objectContaining({ kind: 'network', id: 'bnet' }),
        expect.objectContaining({ kind: 'endpoint', id: 'bvm' }),
      ],
    });
    const file = join(dir, 'blue.yaml');
    const o = await weft('src', ['export', '--tenant', 'blue', '-o', file]);
    expect(o.code, o.err).toBe(0);
    expect(o.out).toBe('');
    expect(o.err).toMatch(new RegExp(`^weft export: 3 operations at revision \\d+ written to ${file}\\n$`));
    expect((parse(await readFile(file, 'utf8')) as unknown[]).length).toBe(3);
  });

  it('an API error or a bad flag names the problem and keeps the file that was there', async () => {
    const file = join(dir, 'keep.yaml');
    await writeFile(file, 'precious\n');
    const missing = await weft('src', ['export', '--tenant', 'green', '-o', file]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^weft export: tenant 'green' not found.*\(HTTP 404 not_found\)\n$/);
    expect(await readFile(file, 'utf8')).toBe('precious\n');
    const usage = await weft('src', ['export', '--tenants', 'x']);
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/--tenants/);
    const unwritable = await weft('src', ['export', '-o', join(dir, 'no-such-dir', 'x.yaml')]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.err).toMatch(/no-such-dir\/x\.yaml: .*ENOENT/);
    const badToken = await weft('src', ['export'], 'wrong');
    expect(badToken.code).toBe(1);
    expect(badToken.err).toMatch(/HTTP 401/);
  });
});

describe('weft apply --prune: the file is the whole truth for its scope', () => {
  let h: Harness;
  let at: string;
  beforeAll(async () => {
    h = await startHarness();
    await seedEverything(h.intents);
    at = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => h.close());
  const run = async (argv: string[]) => {
    const io = memoryIo({ WEFT_API: at, WEFT_TOKEN: ADMIN });
    const code = await main(argv, io);
    return { code, out: io.out(), err: io.err() };
  };
  const file = async (name: string, text: string) => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };
  const blueOnly = `
- {kind: tenant, id: blue, name: blue}
- {kind: network, id: bnet, tenantId: blue, name: bnet, subnets: [10.0.0.0/24]}
`;

  it('deletes what the file does not name, of one tenant, in the same batch', async () => {
    const vni = h.intents.get('network', 'bnet').vni;
    const path = await file('blue-only.yaml', blueOnly.replace('name: bnet,', `name: bnet, vni: ${vni},`));
    const dry = await run(['apply', '-f', path, '--prune', '--tenant', 'blue', '--dry-run']);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toMatch(/^endpoint\s+0\s+0\s+0\s+1$/m);
    expect(h.intents.find('endpoint', 'bvm')).toBeDefined();
    const r = await run(['apply', '-f', path, '--prune', '--tenant', 'blue']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/applied 3 operations at revision \d+/);
    expect(h.intents.find('endpoint', 'bvm')).toBeUndefined();
    // Red is another tenant: untouched.
    expect(h.intents.list('endpoint', { tenantId: 'red' }).items).toHaveLength(4);
  });

  it('without --tenant it prunes everything the token sees (shown here as a dry run)', async () => {
    const vni = h.intents.get('network', 'bnet').vni;
    // Red's tenant stays: its API token (never exported) would refuse its delete, naming the token.
    const text = `${blueOnly.replace('name: bnet,', `name: bnet, vni: ${vni},`)}- {kind: tenant, id: red, name: red}\n`;
    const path = await file('blue-only-2.yaml', text);
    const dry = await run(['apply', '-f', path, '--prune', '--dry-run']);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out).toMatch(/^chassis\s+0\s+0\s+0\s+2$/m);
    expect(dry.out).toMatch(/^router\s+0\s+0\s+0\s+1$/m);
    expect(h.intents.find('router', 'r1')).toBeDefined();
  });

  it('refuses a prune the file contradicts, and an item without an id, changing nothing', async () => {
    const rev = h.intents.revision();
    // Keeps red's endpoint vm but not its network web: the delete is refused, naming both.
    const path = await file(
      'vm-only.yaml',
      '- {kind: tenant, id: red, name: red}\n- {kind: endpoint, id: vm, networkId: web, ips: [10.0.0.5, "fd00:1::5"]}\n',
    );
    const r = await run(['apply', '-f', path, '--prune', '--tenant', 'red']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/network 'web'.*endpoint.*vm.*nothing from .*vm-only\.yaml was applied/s);
    const nameless = await file('nameless.yaml', '- {kind: endpoint, networkId: web}\n');
    const u = await run(['apply', '-f', nameless, '--prune', '--tenant', 'red']);
    expect(u.code).toBe(2);
    expect(u.err).toMatch(/--prune needs an id on every item \(item 0 has none/);
    const t = await run(['apply', '-f', nameless, '--tenant', 'red']);
    expect(t.code).toBe(2);
    expect(t.err).toMatch(/--tenant goes with --prune/);
    expect(h.intents.revision()).toBe(rev);
  });
});

describe('weft export of more than one batch takes', () => {
  let big: Harness;
  let at: string;
  beforeAll(async () => {
    big = await startHarness();
    at = await big.app.listen({ host: '127.0.0.1', port: 0 });
    await big.intents.put('tenant', 't', { name: 't' });
    await big.intents.put('network', 'n', { tenantId: 't', name: 'n', subnets: ['10.0.0.0/16'] });
    // 10,001 endpoints (two batches: one takes 10,000 ops), with the tenant and network 10,003 ops.
    const endpoint = (k: number) => ({
      op: 'create' as const,
      kind: 'endpoint' as const,
      id: `e${k}`,
      body: { networkId: 'n', ips: [`10.0.${1 + (k >> 8)}.${k & 255}`] },
    });
    for (const [from, to] of [
      [0, 5_000],
      [5_000, 10_001],
    ] as const)
      await big.intents.batch(Array.from({ length: to - from }, (_, i) => endpoint(from + i)));
  }, 60_000);
  afterAll(() => big.close());

  it('writes the file whole and says how it goes back: apply --in-batches or serve --restore', async () => {
    const io = memoryIo({ WEFT_API: at, WEFT_TOKEN: ADMIN });
    const file = join(dir, 'big.yaml');
    expect(await main(['export', '-o', file], io)).toBe(0);
    const n = big.intents.export().ops.length;
    expect(n).toBeGreaterThan(10_000);
    expect(io.err()).toMatch(
      new RegExp(
        `^weft export: ${n} operations, more than one batch holds \\(10000\\): 'weft apply --in-batches' sends it as consecutive batches, 'weft serve --restore' takes it whole\\n`,
      ),
    );
    expect((parse(await readFile(file, 'utf8')) as unknown[]).length).toBe(n);
  }, 30_000);
});
