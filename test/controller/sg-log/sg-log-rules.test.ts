import { describe, expect, it } from 'vitest';
import type { Endpoint, SecurityGroup } from '../../../controller/intent/model.js';
import { intentAclsOf, intentRulesOf } from '../../../controller/sg-log/sg-log-rules.js';

/** An endpoint's rules as the log reads them from the intent: remote groups as their members' addresses. */
const sg = (id: string, rules: SecurityGroup['rules']): SecurityGroup =>
  ({ id, tenantId: 't1', name: id, rules }) as SecurityGroup;
const ep = (id: string, groups: string[], ips: string[], allowed?: string[]): Endpoint =>
  ({ id, securityGroupIds: groups, ips, ...(allowed ? { allowedAddresses: allowed } : {}) }) as Endpoint;

function world() {
  const groups = new Map([
    [
      'db',
      sg('db', [
        {
          id: 'pg',
          direction: 'ingress',
          ethertype: 'ipv4',
          protocol: 'tcp',
          portMin: 5432,
          remoteGroupId: 'app',
        },
      ]),
    ],
    ['app', sg('app', [{ id: 'any-out', direction: 'egress', ethertype: 'ipv4', protocol: 'any' }])],
  ]);
  const endpoints = new Map([
    ['db1', ep('db1', ['db', 'gone'], ['10.0.0.5'])],
    ['a1', ep('a1', ['app'], ['10.0.0.7'], ['10.0.0.100', '192.168.0.0/24'])],
    ['a2', ep('a2', ['app'], ['10.0.0.8', 'fd00::8'])],
  ]);
  return {
    find: ((kind: string, id: string) => (kind === 'endpoint' ? endpoints.get(id) : groups.get(id))) as never,
    referrerIds: (_kind: string, id: string) =>
      [...endpoints.values()].filter((e) => e.securityGroupIds.includes(id)).map((e) => e.id),
  };
}

describe('intentRulesOf', () => {
  it("resolves a remote group to its members' addresses and single allowed addresses, as the flows do", () => {
    const rules = intentRulesOf(world())('db1');
    expect(rules).toEqual([
      {
        groupId: 'db',
        rule: expect.objectContaining({
          id: 'pg',
          remoteIps: ['10.0.0.7', '10.0.0.100', '10.0.0.8', 'fd00::8'],
        }),
      },
    ]);
  });

  it('keeps rules without a remote group as they are, and skips a group or endpoint that is gone', () => {
    const of = intentRulesOf(world());
    expect(of('a1')).toEqual([{ groupId: 'app', rule: expect.objectContaining({ id: 'any-out' }) }]);
    expect(of('a1')[0]!.rule).not.toHaveProperty('remoteIps');
    expect(of('nobody')).toEqual([]);
  });
});

describe('intentAclsOf', () => {
  it("reads a network's ACLs from the intent as they are now, and none of another network", () => {
    const acls = new Map([
      ['a1', { id: 'a1', networkId: 'n1', action: 'drop', log: true }],
      ['a2', { id: 'a2', networkId: 'n2', action: 'allow' }],
    ]);
    const intents = {
      find: ((_kind: string, id: string) => acls.get(id)) as never,
      referrerIds: (_kind: string, networkId: string) =>
        [...acls.values(), { id: 'gone', networkId: 'n1' }]
          .filter((a) => a.networkId === networkId)
          .map((a) => a.id),
    };
    expect(intentAclsOf(intents)('n1')).toEqual([acls.get('a1')]);
    expect(intentAclsOf(intents)('n3')).toEqual([]);
  });
});
