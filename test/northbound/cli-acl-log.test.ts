import { describe, expect, it } from 'vitest';
import { parseAclLog } from '../../northbound/cli/sg-log-flag.js';
import { cliHarness } from './cli-harness.js';

const { weft, json } = cliHarness();

describe('weft acl --log', () => {
  it('creates an ACL that logs, shows it in the LOG column, and turns it off by update', async () => {
    expect(await json('network create --id n1 --tenant t1 --name n1 --subnet 10.0.0.0/24')).toMatchObject({
      id: 'n1',
    });
    const base = '--network n1 --direction ingress --action drop --protocol tcp --ports 22';
    expect(await json(`acl create --id no-ssh --priority 10 ${base} --log on`)).toMatchObject({
      id: 'no-ssh',
      log: true,
    });
    const plain = await json(`acl create --id plain --priority 9 ${base}`);
    expect(plain).not.toHaveProperty('log'); // not given: nothing written
    let list = (await weft('acl list')).out;
    expect(list.split('\n')[0]).toMatch(/\sPORTS\s+LOG\s+REV$/);
    expect(list).toMatch(/^no-ssh\s.*\s22\s+on\s+\d+$/m);
    expect(list).toMatch(/^plain\s.*\s22\s+-\s+\d+$/m);
    expect((await json('acl update no-ssh --log off')).log).toBe(false);
    list = (await weft('acl list')).out;
    expect(list).toMatch(/^no-ssh\s.*\s22\s+-\s+\d+$/m);
  });

  it('refuses another value as a usage error naming the flag (exit 2); the API refuses a non-boolean', async () => {
    const r = await weft('acl update no-ssh --log yes');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^weft acl: --log must be on or off, got 'yes'\n/);
    const api = await weft(`acl update no-ssh --data '{"log":"on"}'`);
    expect(api.code).toBe(1);
    expect(api.err).toMatch(/body 'log' must be boolean.*\[log\] \(HTTP 400 invalid\)\n$/);
  });
});

describe('ICMP types on the command line', () => {
  it('a security-group rule type=T[/CODE] and an ACL --icmp-type/--icmp-code, shown in the lists', async () => {
    const sg = await json(
      'security-group create --id ping --tenant t1 --name ping --rule ingress,ipv4,icmp,type=8 --rule ingress,ipv4,icmp,type=3/4',
    );
    expect(sg.rules).toMatchObject([{ icmpType: 8 }, { icmpType: 3, icmpCode: 4 }]);
    expect((await weft('security-group list')).out).toMatch(
      /^ping\s.*ingress icmp type 8,ingress icmp type 3\/4\s/m,
    );
    const a = await json(
      'acl create --id no-echo --network n1 --priority 20 --direction ingress --action drop --protocol icmp --icmp-type 8 --icmp-code 0',
    );
    expect(a).toMatchObject({ icmpType: 8, icmpCode: 0 });
    expect((await weft('acl list')).out).toMatch(/^no-echo\s.*\sicmp\s+-\s+-\s+type 8\/0\s+-\s+\d+$/m);
    const bad = await weft(
      'acl create --network n1 --priority 21 --direction ingress --action drop --protocol tcp --icmp-type 8',
    );
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/icmpType: needs protocol icmp, not tcp .*\(HTTP 400 invalid\)/);
  });
});

describe('parseAclLog', () => {
  it('takes the last value given: on/true or off/false', () => {
    expect(parseAclLog(['off', 'on'])).toBe(true);
    expect(parseAclLog(['true', 'false'])).toBe(false);
    expect(() => parseAclLog(['1'])).toThrow("--log must be on or off, got '1'");
  });
});
