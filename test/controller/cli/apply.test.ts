import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../controller/cli/weft.js';
import { parseApplyFile, toOp } from '../../../northbound/intent-file.js';
import { memoryIo } from '../../cli/memory-io.js';
import { ADMIN, type Harness, startHarness } from '../../northbound/harness.js';

let h: Harness;
let api: string;
let dir: string;
beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'weft-apply-'));
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `weft ...` in-process against the listening API; `stdin` is fed to the command. */
const weft = async (argv: string[], stdin = '') => {
  const io = memoryIo({ WEFT_API: api, WEFT_TOKEN: ADMIN });
  const input = new PassThrough();
  input.end(stdin);
  const code = await main(argv, { ...io, stdin: input });
  return { code, out: io.out(), err: io.err() };
};
const file = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

const blueYaml = `
- kind: tenant
  id: acme
  name: ACME
- kind: network
  id: blue
  tenantId: acme
  name: blue
  subnets: [10.1.0.0/24]
- kind: endpoint
  id: web1
  body:
    networkId: blue
    ips: [10.1.0.11]
- kind: endpoints
  id: web2
  networkId: blue
  ips: [10.1.0.12]
`;

describe('weft apply', () => {
  it('is listed in weft --help', async () => {
    expect((await weft(['--help'])).out).toMatch(/\n {2}apply\s+apply a JSON\/YAML file/);
    const help = await weft(['apply', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: weft apply -f FILE/);
  });

  it('applies a YAML file as one batch and prints a summary; applying it again changes nothing', async () => {
    const path = await file('blue.yaml', blueYaml);
    const r = await weft(['apply', '-f', path]);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toMatch(/^KIND\s+CREATED\s+CHANGED\s+UNCHANGED\s+DELETED$/);
    expect(r.out).toMatch(/^tenant\s+1\s+0\s+0\s+0$/m);
    expect(r.out).toMatch(/^network\s+1\s+0\s+0\s+0$/m);
    expect(r.out).toMatch(/^endpoint\s+2\s+0\s+0\s+0$/m);
    const rev = h.intents.revision();
    expect(lines.at(-1)).toBe(`applied 4 operations at revision ${rev}`);
    expect(h.intents.get('endpoint', 'web2').ips).toEqual(['10.1.0.12']);
    expect(h.intents.get('endpoint', 'web1').revision).toBe(rev);

    const again = await weft(['apply', '-f', path]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/^endpoint\s+0\s+0\s+2\s+0$/m);
    expect(again.out.trim().split('\n').at(-1)).toBe(
      `nothing to change: 4 operations match the intent at revision ${rev}`,
    );
    expect(h.intents.revision()).toBe(rev);
  });

  it('reads JSON ({ops}) from stdin with -f -, deletes, and prints --json', async () => {
    const ops = {
      ops: [
        { kind: 'endpoint', id: 'db1', networkId: 'blue', ips: ['10.1.0.21'] },
        { op: 'delete', kind: 'endpoint', id: 'db1' },
      ],
    };
    const r = await weft(['apply', '-f', '-', '--json'], JSON.stringify(ops));
    expect(r.code, r.err).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.results.map((x: { op: string }) => x.op)).toEqual(['replace', 'delete']);
    expect(body.committed).toBe(true);
    expect(() => h.intents.get('endpoint', 'db1')).toThrow(/not found/);
  });

  it('applies networks and a router on them from one file (router listed after its networks)', async () => {
    const path = await file(
      'routed.yaml',
      `- {kind: tenant, id: red, name: red}
- {kind: network, id: web, tenantId: red, name: web, subnets: [10.0.0.0/24]}
- {kind: network, id: db, tenantId: red, name: db, subnets: [10.0.1.0/24]}
- kind: routers
  id: r1
  tenantId: red
  interfaces:
    - {networkId: web, ip: 10.0.0.1}
    - {networkId: db, ip: 10.0.1.1}
`,
    );
    const r = await weft(['apply', '-f', path]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^router\s+1\s+0\s+0\s+0$/m);
    expect(h.intents.get('router', 'r1').interfaces.map((i) => `${i.networkId}=${i.ip}`)).toEqual([
      'web=10.0.0.1',
      'db=10.0.1.1',
    ]);
    expect((await weft(['apply', '-f', path])).out).toMatch(/^router\s+0\s+0\s+1\s+0$/m);
  });

  it('applies networks, an appliance endpoint and a router with a static route to it from one file', async () => {
    const path = await file(
      'appliance.yaml',
      `- {kind: tenant, id: sea, name: sea}
- {kind: network, id: s-web, tenantId: sea, name: s-web, subnets: [10.5.0.0/24]}
- {kind: network, id: s-edge, tenantId: sea, name: s-edge, subnets: [10.6.0.0/24]}
- {kind: endpoint, id: s-nat, networkId: s-edge, ips: [10.6.0.9], portSecurity: false}
- kind: router
  id: s-r
  tenantId: sea
  interfaces:
    - {networkId: s-web, ip: 10.5.0.1}
    - {networkId: s-edge, ip: 10.6.0.1}
  routes:
    - {destination: 0.0.0.0/0, nexthop: 10.6.0.9}
`,
    );
    const r = await weft(['apply', '-f', path]);
    expect(r.code, r.err).toBe(0);
    expect(h.intents.get('router', 's-r').routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.6.0.9' },
    ]);
    expect((await weft(['apply', '-f', path])).out).toMatch(/^router\s+0\s+0\s+1\s+0$/m);
  });

  it('--dry-run validates on the server and commits nothing; --wait reports confirmation', async () => {
    const path = await file('green.yaml', 'kind: network\nid: green\ntenantId: acme\nname: green\n');
    const rev = h.intents.revision();
    const dry = await weft(['apply', '-f', path, '--dry-run']);
    expect(dry.code, dry.err).toBe(0);
    expect(dry.out.trim().split('\n').at(-1)).toBe(
      `dry run: 1 operation valid; nothing committed (intent at revision ${rev})`,
    );
    expect(h.intents.revision()).toBe(rev);
    const wait = await weft(['apply', '-f', path, '--wait', '--timeout', '2s']);
    expect(wait.code, wait.err).toBe(0);
    expect(wait.out).toMatch(/applied 1 operation at revision \d+, confirmed by every affected switch\n$/);
  });

  it('replays with --idempotency-key', async () => {
    const path = await file(
      'red.json',
      JSON.stringify([{ kind: 'network', id: 'red', tenantId: 'acme', name: 'red' }]),
    );
    expect((await weft(['apply', '-f', path, '--idempotency-key', 'red-1'])).code).toBe(0);
    const again = await weft(['apply', '-f', path, '--idempotency-key', 'red-1']);
    expect(again.out).toMatch(
      /already applied with this idempotency key at revision \d+; nothing written now/,
    );
  });

  it('a refused batch: exit 1, the op named, nothing applied', async () => {
    const path = await file(
      'bad.yaml',
      `- {kind: tenant, id: acme2, name: two}
- {kind: network, id: teal, tenantId: acme2, name: teal, subnets: [10.2.0.0/24]}
- {kind: endpoint, id: t1, networkId: teal, ips: [10.2.0.1]}
- {kind: endpoint, id: t2, networkId: teal, ips: [10.2.0.2]}
- kind: endpoint
  networkId: teal
  ips: [10.9.9.9]
`,
    );
    const rev = h.intents.revision();
    const r = await weft(['apply', '-f', path]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^weft apply: ops\[4\] \(endpoint\): ips\[0\]: 10\.9\.9\.9 is outside the subnets of network 'teal'.* \[ops\[4\]\.body\.ips\[0\]\] \(HTTP 409 conflict\); nothing from .*bad\.yaml was applied\n$/,
    );
    expect(h.intents.revision()).toBe(rev);
    expect(() => h.intents.get('network', 'teal')).toThrow(/not found/);
  });

  it('reports file problems and usage mistakes without calling the API', async () => {
    const rev = h.intents.revision();
    const cases: Array<[string[], string, number, RegExp]> = [
      [['apply'], '', 2, /-f FILE is required/],
      [['apply', '-f', join(dir, 'missing.yaml')], '', 1, /missing\.yaml: ENOENT/],
      [['apply', '-f', '-'], 'kind: [unclosed', 1, /stdin: not valid YAML/],
      [['apply', '-f', '-'], '{"ops": [', 1, /stdin: not valid JSON/],
      [['apply', '-f', '-'], '- kind: switch\n  id: s1\n', 1, /stdin: item 0: unknown kind 'switch'/],
      [['apply', '-f', '-'], '- id: s1\n', 1, /stdin: item 0: needs a kind/],
      [['apply', '-f', '-'], '', 1, /stdin: no operations in the file/],
      [['apply', '-f', '-', '--timeout', '5s'], '', 2, /--timeout goes with --wait/],
      [['apply', '-f', '-', '--bogus'], '', 2, /Unknown option '--bogus'/],
    ];
    for (const [argv, stdin, code, message] of cases) {
      const r = await weft(argv, stdin);
      expect(r.code, argv.join(' ')).toBe(code);
      expect(r.err).toMatch(message);
    }
    expect(h.intents.revision()).toBe(rev);
  });

  it('turns file items into ops: defaults, kind words, body inline or nested', async () => {
    expect(await parseApplyFile('---\nkind: acl\nid: a\n---\n- kind: vlan-bindings\n')).toEqual([
      { kind: 'acl', id: 'a' },
      { kind: 'vlan-bindings' },
    ]);
    expect(toOp({ kind: 'acl', id: 'a', priority: 1 }, 0)).toEqual({
      op: 'replace',
      kind: 'networkAcl',
      id: 'a',
      body: { priority: 1 },
    });
    expect(toOp({ kind: 'security-group', name: 'x' }, 0)).toEqual({
      op: 'create',
      kind: 'securityGroup',
      body: { name: 'x' },
    });
    expect(toOp({ op: 'delete', kind: 'chassis', id: 'c', cascade: true }, 0)).toEqual({
      op: 'delete',
      kind: 'chassis',
      id: 'c',
      cascade: true,
    });
    expect(() => toOp({ kind: 'tenant', body: { name: 'x' }, name: 'y' }, 3)).toThrow(
      /item 3: give the fields under body or inline, not both/,
    );
  });
});
