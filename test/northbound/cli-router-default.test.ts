import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/** `weft router` and `weft apply` with interfaces given as NET alone: the server picks the address. */

let h: Harness;
let api: string;
let dir: string;

beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  dir = await mkdtemp(join(tmpdir(), 'weft-router-default-'));
  await h.intents.put('tenant', 'red', { name: 'red' });
  for (const [id, subnet] of [
    ['web', '10.0.0.0/24'],
    ['db', '10.0.1.0/24'],
    ['p2p', '10.0.2.6/31'],
  ] as const) {
    await h.intents.put('network', id, { tenantId: 'red', name: id, subnets: [subnet] });
  }
});
afterAll(async () => {
  await h.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  for (const r of h.intents.list('router').items) await h.intents.delete('router', r.id);
  for (const e of h.intents.list('endpoint').items) await h.intents.delete('endpoint', e.id);
});

const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });
const ipsOf = (id: string) => h.intents.get('router', id).interfaces.map((i) => `${i.networkId}=${i.ip}`);

describe('weft router with NET alone', () => {
  it('create --interface NET takes the first host address; update keeps it; attach NET defaults the new one', async () => {
    const made = await weft('router create --id r1 --tenant red --interface web --interface p2p');
    expect(made.code, made.err).toBe(0);
    expect(ipsOf('r1')).toEqual(['web=10.0.0.1', 'p2p=10.0.2.6']);
    expect((await weft('router update r1 --interface web=10.0.0.254')).code).toBe(0);
    const kept = await weft('router update r1 --interface web --interface db');
    expect(kept.code, kept.err).toBe(0);
    expect(ipsOf('r1')).toEqual(['web=10.0.0.254', 'db=10.0.1.1']);
    expect((await weft('router detach r1 db')).code).toBe(0);
    const attached = await weft('router attach r1 db --json');
    expect(attached.code, attached.err).toBe(0);
    expect(JSON.parse(attached.out).interfaces.map((i: { ip: string }) => i.ip)).toEqual([
      '10.0.0.254',
      '10.0.1.1',
    ]);
  });

  it('prints the 409 when an endpoint holds the default, naming the field, and exits 1', async () => {
    await h.intents.put('endpoint', 'vm1', { networkId: 'web', ips: ['10.0.0.1'] });
    const r = await weft('router create --tenant red --interface web');
    expect(r.code).toBe(1);
    expect(r.err).toContain('[interfaces[0].ip] (HTTP 409 conflict)');
    expect(r.err).toContain('(the default: the first host address of 10.0.0.0/24)');
    expect((await weft('router create --tenant red --interface web=10.0.0.2')).code).toBe(0);
  });
});

describe('weft apply with interfaces without ip', () => {
  it('applies a router whose interfaces name only networks; applying again keeps the addresses', async () => {
    const path = join(dir, 'routed.yaml');
    await writeFile(
      path,
      `- kind: router
  id: ra
  tenantId: red
  interfaces:
    - {networkId: web}
    - {networkId: db}
`,
    );
    const first = await weft(`apply -f ${path}`);
    expect(first.code, first.err).toBe(0);
    expect(ipsOf('ra')).toEqual(['web=10.0.0.1', 'db=10.0.1.1']);
    await h.intents.update('router', 'ra', {
      interfaces: [
        { networkId: 'web', ip: '10.0.0.254' },
        { networkId: 'db', ip: '10.0.1.1' },
      ],
    });
    const again = await weft(`apply -f ${path}`);
    expect(again.code, again.err).toBe(0);
    // KIND CREATED CHANGED UNCHANGED DELETED: the router is unchanged.
    expect(again.out).toMatch(/^router\s+0\s+0\s+1\s+0$/m);
    expect(ipsOf('ra')).toEqual(['web=10.0.0.254', 'db=10.0.1.1']);
  });
});
