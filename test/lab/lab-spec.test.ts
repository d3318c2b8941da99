import { describe, expect, it } from 'vitest';
import {
  checkVmSpec,
  defaultVms,
  isLabNetns,
  LabSpecError,
  macFor,
  parseIp,
  parseVmsOption,
  vmPortName,
} from './lab-spec.js';
import { formatStatus, type LabStatus, vsctlRows } from './lab-status.js';
import { parsePingSummary } from './traffic.js';
import { addPortWords, torWords } from './vm.js';

describe('lab address plan', () => {
  it('places default VMs round the hypervisors with distinct MACs and IPs in one subnet', () => {
    expect(defaultVms(2, 2)).toEqual([
      { name: 'vm1', mac: '02:00:00:00:00:01', ip: '10.0.0.1/24', ifaceId: 'vm1', hypervisor: 'hv1' },
      { name: 'vm2', mac: '02:00:00:00:00:02', ip: '10.0.0.2/24', ifaceId: 'vm2', hypervisor: 'hv1' },
      { name: 'vm3', mac: '02:00:00:00:00:03', ip: '10.0.0.3/24', ifaceId: 'vm3', hypervisor: 'hv2' },
      { name: 'vm4', mac: '02:00:00:00:00:04', ip: '10.0.0.4/24', ifaceId: 'vm4', hypervisor: 'hv2' },
    ]);
    expect(macFor(0x1234)).toBe('02:00:00:00:12:34');
  });

  it('parses --vms lists with prefix lengths and VLAN hosts', () => {
    expect(parseVmsOption('web@hv1=10.1.0.5/16, phy@hv2=10.0.0.9#42', 2)).toEqual([
      { name: 'web', mac: '02:00:00:00:00:01', ip: '10.1.0.5/16', ifaceId: 'web', hypervisor: 'hv1' },
      { name: 'phy', mac: '02:00:00:00:00:02', ip: '10.0.0.9', vlan: 42, hypervisor: 'hv2' },
    ]);
    expect(parseVmsOption('3', 1)).toHaveLength(3);
  });

  it.each([
    [{ name: 'Web', mac: '02:00:00:00:00:01', ip: '10.0.0.1' }, "VM name 'Web'"],
    [{ name: 'averyveryverylongname', mac: '02:00:00:00:00:01', ip: '10.0.0.1' }, 'expected 1-11 characters'],
    [{ name: 'a', mac: '02:00:00:00:01', ip: '10.0.0.1' }, "MAC '02:00:00:00:01' is not"],
    [{ name: 'a', mac: '03:00:00:00:00:01', ip: '10.0.0.1' }, 'is a multicast address'],
    [{ name: 'a', mac: '02:00:00:00:00:01', ip: '10.0.0' }, "IP '10.0.0'"],
    [{ name: 'a', mac: '02:00:00:00:00:01', ip: '10.0.0.1/33' }, "IP '10.0.0.1/33'"],
    [{ name: 'a', mac: '02:00:00:00:00:01', ip: '10.0.0.1/' }, "IP '10.0.0.1/'"],
    [{ name: 'a', mac: '02:00:00:00:00:01', ip: '10.0.0.1', vlan: 0 }, "VLAN '0'"],
    [{ name: 'a', mac: '02:00:00:00:00:01', ip: '10.0.0.1', ifaceId: 'x"y' }, `iface-id 'x"y'`],
  ])('rejects a bad VM %j', (vm, message) => {
    expect(() => checkVmSpec(vm)).toThrow(LabSpecError);
    expect(() => checkVmSpec(vm)).toThrow(message);
  });

  it('normalises MACs, defaults iface-id for VMs but not for VLAN hosts', () => {
    expect(checkVmSpec({ name: 'a', mac: '02:AB:00:00:00:01', ip: '10.0.0.1' })).toEqual({
      name: 'a',
      mac: '02:ab:00:00:00:01',
      ip: '10.0.0.1',
      ifaceId: 'a',
    });
    expect(
      checkVmSpec({ name: 'p', mac: '02:00:00:00:00:01', ip: '10.0.0.1', vlan: 7 }).ifaceId,
    ).toBeUndefined();
    expect(parseIp('192.168.1.2/30')).toEqual({ address: '192.168.1.2', plen: 30 });
  });

  it('recognises only its own namespaces, not those of other tests', () => {
    expect(isLabNetns('ovs', 'weft-ovs-hv1')).toBe(true);
    expect(isLabNetns('ovs', 'weft-ovs-ul')).toBe(true);
    expect(isLabNetns('ovs', 'weft-ovs-vm-web')).toBe(true);
    expect(isLabNetns('ovs', 'weft-ovs-1a2b3c')).toBe(false);
    expect(isLabNetns('a', 'weft-ab-hv1')).toBe(false);
  });

  it('marks VM ports like libvirt and gives VLAN hosts a tagged trunk into br-int', () => {
    const vm = checkVmSpec({ name: 'a', mac: '02:00:00:00:00:0a', ip: '10.0.0.1' });
    expect(vmPortName(vm)).toBe('vif-a');
    expect(addPortWords(vm).join(' ')).toBe(
      '-- add-port br-int vif-a -- set interface vif-a external_ids:iface-id="a" external_ids:attached-mac="02:00:00:00:00:0a" external_ids:iface-status=active external_ids:vm-id=a',
    );
    const host = checkVmSpec({ name: 'p', mac: '02:00:00:00:00:0b', ip: '10.0.0.9', vlan: 42 });
    expect(vmPortName(host)).toBe('phy-p');
    expect(torWords(host).join(' ')).toContain('add-port tor-p h-p tag=42');
    expect(torWords(host).join(' ')).toContain(
      'add-port br-int phy-p -- set interface phy-p type=patch options:peer=t-p',
    );
  });
});

describe('lab output parsing', () => {
  it('reads ping summaries, including total loss', () => {
    expect(
      parsePingSummary(
        '--- 10.0.0.2 ping statistics ---\n3 packets transmitted, 3 received, 0% packet loss, time 2003ms\n',
      ),
    ).toEqual({
      sent: 3,
      received: 3,
      lossPct: 0,
    });
    expect(parsePingSummary('3 packets transmitted, 0 received, +3 errors, 100% packet loss')).toEqual({
      sent: 3,
      received: 0,
      lossPct: 100,
    });
    expect(parsePingSummary('3 packets transmitted, 2 received').lossPct).toBe(33.3);
    expect(() => parsePingSummary('ping: connect: Network is unreachable')).toThrow(/no summary/);
  });

  it('reads ovs-vsctl JSON rows and prints a status table', () => {
    const rows = vsctlRows('{"data":[["unix:/d/weft-of.sock",true]],"headings":["target","is_connected"]}');
    expect(rows).toEqual([{ target: 'unix:/d/weft-of.sock', is_connected: true }]);
    const status: LabStatus = {
      name: 'demo',
      createdAt: '2026-01-01T00:00:00.000Z',
      dir: '/tmp/weft-lab-demo-abcdef',
      missingNamespaces: ['weft-demo-vm-b'],
      hypervisors: [
        {
          name: 'hv1',
          netns: 'weft-demo-hv1',
          underlayIp: '10.99.0.1',
          ovsdbPid: 10,
          vswitchdPid: 11,
          ovsdbRunning: true,
          vswitchdRunning: false,
          controllers: [{ target: 'unix:/x', isConnected: true }],
          managers: [{ target: 'unix:/y', isConnected: false }],
        },
      ],
      vms: [
        {
          name: 'a',
          hypervisor: 'hv1',
          ip: '10.0.0.1/24',
          mac: '02:00:00:00:00:0a',
          port: 'vif-a',
          ifaceId: 'a',
          ofport: 3,
        },
      ],
    };
    const text = formatStatus(status);
    expect(text).toContain(
      'hv1         weft-demo-hv1  10.99.0.1  up(10)  DOWN      connected   NOT connected',
    );
    expect(text).toContain('a   hv1         10.0.0.1/24  02:00:00:00:00:0a  a         -     vif-a  3');
    expect(text).toContain('missing namespaces: weft-demo-vm-b');
  });
});
