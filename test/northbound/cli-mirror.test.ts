import { afterEach, describe, expect, it } from 'vitest';
import { parseDirection } from '../../northbound/cli/mirror-cli.js';
import { toOp } from '../../northbound/intent-file.js';
import { cliHarness } from './cli-harness.js';

/** `weft mirror create|list|show|update|delete` against a listening app. */
const cli = cliHarness(async (_h) => {
  for (const id of ['a', 'b', 'c']) await cli.h.intents.put('endpoint', id, { networkId: 'n1' });
});
const { weft, json } = cli;
afterEach(async () => {
  for (const m of cli.h.intents.list('mirror').items) await cli.h.intents.delete('mirror', m.id);
});

describe('parseDirection', () => {
  it('takes egress, ingress or both (the last given) and refuses anything else', () => {
    expect(parseDirection(['egress'])).toBe('egress');
    expect(parseDirection(['both', 'ingress'])).toBe('ingress');
    expect(() => parseDirection(['sideways'])).toThrow(
      "--direction must be egress, ingress, both, got 'sideways'",
    );
  });
});

describe('weft apply: mirror items', () => {
  it('reads mirror and mirrors as the mirror kind', () => {
    expect(toOp({ kind: 'mirror', id: 'm1', source: 'a', destination: 'b' }, 0)).toEqual({
      op: 'replace',
      kind: 'mirror',
      id: 'm1',
      body: { source: 'a', destination: 'b' },
    });
    expect(toOp({ kind: 'mirrors', source: 'a', destination: 'b' }, 0)).toMatchObject({
      op: 'create',
      kind: 'mirror',
    });
  });
});

describe('weft mirror', () => {
  it('creates a mirror from the flags and shows it', async () => {
    const r = await weft('mirror create --source a --destination b --direction egress');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^tenantId:\s+t1$/m);
    expect(r.out).toMatch(/^source:\s+a$/m);
    expect(r.out).toMatch(/^destination:\s+b$/m);
    expect(r.out).toMatch(/^direction:\s+egress$/m);
    expect(r.out).toMatch(/^enabled:\s+true$/m);
    expect(r.out).toMatch(/^vni:\s+\d+$/m);
    const [m] = cli.h.intents.list('mirror').items;
    expect(m).toMatchObject({ source: 'a', destination: 'b', direction: 'egress', enabled: true });
  });

  it('lists mirrors in a table, filtered by tenant', async () => {
    await json('mirror create --id m1 --tenant t1 --name tap --source a --destination b --direction egress');
    await json('mirror create --id m2 --source c --destination b --vni 7000 --enabled off');
    const list = await weft('mirror list');
    expect(list.code, list.err).toBe(0);
    const lines = list.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^ID\s+TENANT\s+NAME\s+SOURCE\s+DESTINATION\s+DIRECTION\s+VNI\s+ENABLED\s+REV\s+COPIES$/,
    );
    // No switch has reported a binding here (no engine): the COPIES column says why nothing is copied.
    expect(lines[1]).toMatch(
      /^m1\s+t1\s+tap\s+a\s+b\s+egress\s+\d+\s+yes\s+\d+\s+idle: source 'a' is not bound on any hypervisor$/,
    );
    expect(lines[2]).toMatch(/^m2\s+t1\s+-\s+c\s+b\s+both\s+7000\s+no\s+\d+\s+idle: disabled$/);
    expect((await weft('mirror list --tenant t1')).out.trimEnd().split('\n')).toHaveLength(3);
    expect((await weft('mirror list --tenant other')).out).toBe('no mirrors\n');
    expect((await json('mirror list')).map((m: { id: string }) => m.id)).toEqual(['m1', 'm2']);
  });

  it('shows, updates and deletes one', async () => {
    await json('mirror create --id m1 --source a --destination b');
    expect((await weft('mirror show m1')).out).toMatch(/^direction:\s+both$/m);
    const updated = await json('mirror update m1 --direction ingress --enabled false --destination c');
    expect(updated).toMatchObject({ direction: 'ingress', enabled: false, destination: 'c', source: 'a' });
    const del = await weft('mirror delete m1');
    expect(del.code, del.err).toBe(0);
    expect(del.out).toMatch(/^deleted mirror m1 \(revision \d+\)$/m);
    expect(cli.h.intents.list('mirror').items).toEqual([]);
  });

  it('refuses usage mistakes (exit 2) and prints API errors (exit 1)', async () => {
    const dir = await weft('mirror create --source a --destination b --direction sideways');
    expect(dir.code).toBe(2);
    expect(dir.err).toContain("--direction must be egress, ingress, both, got 'sideways'");
    const vni = await weft('mirror update m1 --vni 7001');
    expect(vni.code).toBe(2);
    expect(vni.err).toContain('--vni cannot be changed by update');
    const enabled = await weft('mirror create --source a --destination b --enabled maybe');
    expect(enabled.code).toBe(2);
    const self = await weft('mirror create --source a --destination a');
    expect(self.code).toBe(1);
    expect(self.err).toContain("destination: is the source 'a' itself");
    expect(cli.h.intents.list('mirror').items).toEqual([]);
    const help = await weft('mirror --help');
    expect(help.code).toBe(0);
    expect(help.out).toContain('weft mirror create|list|show|update|delete');
    expect(help.out).toMatch(/--direction VALUE\s+egress/);
  });

  it('is listed in weft --help', async () => {
    expect((await weft('--help')).out).toMatch(/\n {2}mirror\s+create\/list\/show\/update\/delete mirrors/);
  });
});
