import { describe, expect, it } from 'vitest';
import { parseSgLog, SG_LOG_MODES } from '../../northbound/cli/sg-log-flag.js';
import { cliHarness } from './cli-harness.js';

const { weft, json } = cliHarness();

describe('weft security-group --log', () => {
  it('creates a group that logs, shows the mode in the LOG column, and changes it by update', async () => {
    expect(await json('security-group create --id web --tenant t1 --name web --log denied')).toMatchObject({
      id: 'web',
      log: 'denied',
    });
    const plain = await json('security-group create --id plain --tenant t1 --name plain');
    expect(plain).not.toHaveProperty('log'); // not given: nothing written
    let list = (await weft('security-group list')).out;
    expect(list.split('\n')[0]).toMatch(/^ID\s+TENANT\s+NAME\s+LOG\s+RULES\s+REV$/);
    expect(list).toMatch(/^web\s+t1\s+web\s+denied\s+-\s+\d+$/m);
    expect(list).toMatch(/^plain\s+t1\s+plain\s+-\s+-\s+\d+$/m);
    expect((await json('security-group update web --log all')).log).toBe('all');
    expect((await weft('security-group list')).out).toMatch(/^web\s+t1\s+web\s+all\s+/m);
    // off is kept as given, and shows as '-' like a group that never logged.
    const off = await weft('security-group update web --log off');
    expect(off.code, off.err).toBe(0);
    expect(off.out).toMatch(/^log:\s+off$/m);
    list = (await weft('security-group list')).out;
    expect(list).toMatch(/^web\s+t1\s+web\s+-\s+-\s+\d+$/m);
  });

  it('lists --log in the help', async () => {
    const help = await weft('security-group --help');
    expect(help.out).toMatch(/^ {2}--log VALUE\s+denied \(what its endpoints' policy drops\)/m);
  });

  it('refuses another mode as a usage error naming the flag and the modes (exit 2)', async () => {
    for (const args of [
      'security-group create --tenant t1 --name x --log everything',
      'security-group update web --log Denied',
      "security-group update web --log ''",
    ]) {
      const r = await weft(args);
      expect(r.code, args).toBe(2);
      expect(r.err).toMatch(/^weft security-group: --log must be off, denied, accepted, all, got '.*'\n/);
    }
  });

  it('has the API refuse a mode sent another way, naming the field (exit 1)', async () => {
    const r = await weft(`security-group update web --data '{"log":"some"}'`);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `weft security-group: body 'log' must be one of "off", "denied", "accepted", "all" [log] (HTTP 400 invalid)\n`,
    );
  });
});

describe('parseSgLog', () => {
  it('takes the last value given, from the modes of the model', () => {
    expect(SG_LOG_MODES).toEqual(['off', 'denied', 'accepted', 'all']);
    expect(parseSgLog(['off', 'accepted'])).toBe('accepted');
    expect(() => parseSgLog(['on'])).toThrow("--log must be off, denied, accepted, all, got 'on'");
  });
});
