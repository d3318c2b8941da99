import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OvsInstance, startOvs } from './ovs.js';

// The lab harness itself: real OVS in a namespace, reachable over unix sockets, removed after.
describe('lab OVS instance', () => {
  let ovs: OvsInstance;
  beforeAll(async () => {
    ovs = await startOvs();
  });
  afterAll(async () => {
    await ovs?.stop();
  });

  it('runs a netdev bridge whose flow table ovs-ofctl can read and write', async () => {
    await ovs.addBridge('br-int', 'protocols=OpenFlow13');
    await ovs.ofctl('-O', 'OpenFlow13', 'add-flow', ovs.mgmt('br-int'), 'table=0,priority=5,actions=drop');
    const flows = await ovs.ofctl('-O', 'OpenFlow13', 'dump-flows', ovs.mgmt('br-int'));
    expect(flows).toContain('priority=5 actions=drop');
  });

  it('keeps OVS out of the root namespace', async () => {
    const inside = await ovs.netns.exec('ip', ['-o', 'link', 'show']);
    expect(inside).toContain('br-int');
  });
});
