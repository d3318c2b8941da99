import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntentService } from '../../controller/intent/service.js';
import { RestoreError, restoreIntent } from '../../controller/restore.js';
import { exportYaml } from '../../northbound/cli/export-command.js';
import { seedEverything } from './intent/export-fixture.js';
import { openService } from './intent/helpers.js';

type Opened = Awaited<ReturnType<typeof openService>>;
let opened: Opened[] = [];
let dir: string;
let logged: Array<{ msg: string; file?: string; revision?: number }>;
const log = () => pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
const service = async (): Promise<IntentService> => {
  const o = await openService();
  opened.push(o);
  return o.svc;
};
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-restore-'));
  logged = [];
});
afterEach(async () => {
  await Promise.all(opened.map((o) => o.close()));
  opened = [];
  await rm(dir, { recursive: true, force: true });
});
const file = async (name: string, text: string) => {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
};

describe('weft serve --restore: an empty store starts with the intent of a file', () => {
  it("restores weft export's YAML whole, in one commit", async () => {
    const src = await service();
    await seedEverything(src);
    const path = await file('intent.yaml', await exportYaml(src.export().ops as never, '9', new Date()));
    const dst = await service();
    expect(await restoreIntent(dst, path, log())).toBe(1);
    expect(dst.export()).toEqual({ revision: 1, ops: src.export().ops });
    expect(logged.at(-1)).toMatchObject({ msg: 'intent restored', file: path, revision: 1 });
  });

  it('restores a file larger than one REST batch, still at one revision', async () => {
    // 12,002 items: more than a POST /v1/batch holds (10,000), as a deployment's export can be.
    const lines = [
      '- {kind: tenant, id: t, name: t}',
      '- {kind: network, id: n, tenantId: t, name: n, subnets: [10.0.0.0/16]}',
    ];
    for (let k = 0; k < 12_000; k++)
      lines.push(`- {kind: endpoint, id: e${k}, networkId: n, ips: [10.0.${1 + (k >> 8)}.${k & 255}]}`);
    const path = await file('big.yaml', `${lines.join('\n')}\n`);
    const svc = await service();
    expect(await restoreIntent(svc, path, log())).toBe(1);
    expect(svc.usage('t')).toMatchObject({ endpoints: 12_000 });
    expect(svc.endpointByIp('n', '10.0.47.223')).toMatchObject({ id: 'e11999', revision: 1 });
  }, 60_000);

  it('ignores the file when the store holds intent (a restart with the flag left in)', async () => {
    const svc = await service();
    await svc.put('tenant', 'kept', { name: 'kept' });
    const path = await file('other.yaml', '- {kind: tenant, id: other, name: other}\n');
    expect(await restoreIntent(svc, path, log())).toBeUndefined();
    expect(svc.list('tenant').items.map((t) => t.id)).toEqual(['kept']);
    expect(logged.at(-1)).toMatchObject({
      msg: 'the store already holds intent: --restore ignored',
      revision: 1,
    });
  });

  it.each([
    ['missing.yaml', undefined, /--restore .*missing\.yaml: ENOENT/],
    ['empty.yaml', '', /--restore .*empty\.yaml: no operations in the file/],
    ['broken.yaml', '- kind: [unclosed\n', /--restore .*broken\.yaml: not valid YAML/],
    ['kindless.yaml', '- {id: x}\n', /--restore .*kindless\.yaml: item 0: needs a kind/],
    [
      'bad-op.yaml',
      '- {kind: tenant, id: t, name: t}\n- {kind: network, id: n, tenantId: nope, name: n}\n',
      /--restore .*bad-op\.yaml: ops\[1\] \(network 'n'\): .*nope.*; nothing was restored$/,
    ],
  ])('refuses %s naming the file and what is wrong, writing nothing', async (name, text, message) => {
    const path = text === undefined ? join(dir, name) : await file(name, text);
    const svc = await service();
    const err = await restoreIntent(svc, path, log()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestoreError);
    expect((err as Error).message).toMatch(message);
    expect(svc.revision()).toBe(0);
  });
});
